//! `toolwright serve`: this build's tools as an MCP server over stdio, on the official SDK
//! (`rmcp`). Every call goes through the full pipeline of the served directory: its hooks,
//! its permission rules and mode. A call that would ask is refused with the reason (the
//! server has no one to ask). Cancelling a request (`notifications/cancelled`) cancels the
//! call.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, Implementation,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tool_core::{ContentBlock, ImageSource, ProgressSender, ToolResultContent};
use tool_exec::ToolUse;

use crate::session::{Session, SessionArgs};

/// Arguments of `toolwright serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub session: SessionArgs,
}

#[derive(Clone)]
struct Server {
    session: Arc<Session>,
    calls: Arc<AtomicU64>,
}

/// The MCP `tools/list` entry of a tool: its name, the prompt as description, the input
/// schema exactly as a model API would get it.
fn tool_entry(tool: &dyn tool_core::Tool) -> Value {
    json!({
        "name": tool.name(),
        "description": tool.prompt(),
        "inputSchema": tool.input_schema(),
        "annotations": {
            "title": tool.name(),
            // Flags that hold whatever the input is.
            "readOnlyHint": tool.is_read_only(&json!({})),
            "openWorldHint": tool.is_open_world(&json!({})),
        },
    })
}

/// Our tool_result content as MCP content.
fn mcp_content(content: &ToolResultContent) -> Vec<Value> {
    match content {
        ToolResultContent::Text(text) => vec![json!({"type": "text", "text": text})],
        ToolResultContent::Blocks(blocks) => blocks
            .iter()
            .map(|b| match b {
                ContentBlock::Text { text } => json!({"type": "text", "text": text}),
                ContentBlock::Image {
                    source: ImageSource::Base64 { media_type, data },
                } => {
                    json!({"type": "image", "data": data, "mimeType": media_type})
                }
                ContentBlock::ToolReference { tool_name } => {
                    json!({"type": "text", "text": format!("tool: {tool_name}")})
                }
                other => json!({"type": "text", "text": format!("{other:?}")}),
            })
            .collect(),
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> InitializeResult {
        let caps: ServerCapabilities =
            serde_json::from_value(json!({"tools": {}})).unwrap_or_default();
        InitializeResult::new(caps)
            .with_server_info(Implementation::new("toolwright", env!("CARGO_PKG_VERSION")))
            .with_instructions("Toolwright's tools, run through its permission rules and hooks.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools: Vec<Value> = self
            .session
            .ctx
            .tools()
            .iter()
            .map(|t| tool_entry(t.as_ref()))
            .collect();
        serde_json::from_value(json!({"tools": tools}))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        let input = Value::Object(request.arguments.clone().unwrap_or_default());
        let tool_use = ToolUse::new(format!("mcp_call_{n}"), request.name.to_string(), input);
        // The request's cancellation is the call's.
        let ctx = self
            .session
            .ctx
            .clone()
            .with_cancellation(context.ct.child_token());
        let outcome = self
            .session
            .pipeline
            .run_tool_use(&tool_use, ctx, ProgressSender::none())
            .await;
        let result = json!({
            "content": mcp_content(&outcome.result.content),
            "isError": outcome.result.is_error,
        });
        let result: CallToolResult = serde_json::from_value(result)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(CallToolResponse::Complete(result))
    }
}

/// Runs `toolwright serve` until the client closes standard input.
pub async fn run(args: &ServeArgs) -> ExitCode {
    let session = match Session::open(&args.session.options(false)).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("toolwright serve: {e}");
            return ExitCode::from(2);
        }
    };
    for notice in &session.notices {
        eprintln!("toolwright serve: {notice}");
    }
    let server = Server {
        session: Arc::new(session),
        calls: Arc::default(),
    };
    let service = match server.serve(rmcp::transport::io::stdio()).await {
        Ok(service) => service,
        Err(e) => {
            eprintln!("toolwright serve: the client did not initialize: {e}");
            return ExitCode::from(1);
        }
    };
    match service.waiting().await {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("toolwright serve: {e}");
            ExitCode::from(1)
        }
    }
}
