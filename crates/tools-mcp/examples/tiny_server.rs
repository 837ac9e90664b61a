//! A tiny MCP server written with rmcp, for the tests of `tools-mcp`: it produces the cases
//! the third-party peers cannot (a call that hangs until cancelled, a crash mid-call, a
//! 200-character tool name, a root-`anyOf` schema with `$ref`s, an invalid schema, property
//! names the model API refuses (`odd_keys`, which echoes its arguments), paged tool lists, `tools/list_changed`, `_meta` flags, huge and structured results, JSON-RPC errors,
//! elicitation and sampling requests sent whatever the client advertised, stderr output).
//!
//! Usage: `tiny_server [--garbage] [--bracket-logs] [--fail-list] [--slow-list]
//! [--exit-on-list] [--loop-cursor] [--hang-resources] [--resources-only] [--print-roots]`
//! (stdio).
//! `--garbage` prints non-JSON lines on stdout before serving; `--bracket-logs` prints a log
//! line quoting a JSON-RPC message, `[DEBUG] recv {"jsonrpc":"2.0","id":3}`, on stdout before
//! serving and before each `echo` answer; `--slow-list` writes `tools/list: slow` to stderr
//! and waits a minute before answering `tools/list`; `--fail-list` answers every
//! `tools/list` with an error; `--exit-on-list` writes `fatal: GITHUB_TOKEN not set` to
//! stderr and exits on the first `tools/list` (as a server that initialises before it checks
//! its configuration); `--loop-cursor` answers every `tools/list` page with the same
//! `nextCursor`; `--hang-resources` offers resources, never answers `resources/list`, and
//! answers `resources/read` only when cancelled; `--resources-only` declares resources and
//! no tools, answering `tools/list` with "Method not found" as the TypeScript SDK's servers
//! without tools do, and serves one resource, `tiny://note`. `--print-roots` asks the client
//! for `roots/list` once initialised and writes the answer to stderr as `roots: <json>`.
//! `TINY_CRASH_LOG=path` makes `crash` append a line there before exiting. Every
//! `notifications/cancelled` is logged on stderr as `cancelled <requestId>: <reason>`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelledNotificationParam, ErrorData,
    InitializeResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    ServerRequest,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer};
use rmcp::{ServerHandler, ServiceExt};
use serde_json::{Value, json};

const PAGE: usize = 3;

/// A log line on stdout that quotes a JSON-RPC message (as some servers' debug output does).
const BRACKET_LOG: &str = r#"[DEBUG] recv {"jsonrpc":"2.0","id":3}"#;

fn bracket_logs() -> bool {
    std::env::args().any(|a| a == "--bracket-logs")
}

fn resources_only() -> bool {
    std::env::args().any(|a| a == "--resources-only")
}

#[derive(Clone, Default)]
struct Tiny {
    dynamic: Arc<AtomicBool>,
}

fn long_name() -> String {
    "a".repeat(200)
}

impl Tiny {
    fn all_tools(&self) -> Vec<Value> {
        let obj = |props: Value| json!({"type": "object", "properties": props});
        let mut tools = vec![
            json!({"name": "echo", "description": "Echoes text", "inputSchema": obj(json!({"text": {"type": "string"}})),
                   "annotations": {"readOnlyHint": true}}),
            json!({"name": "hang", "description": "Never answers until cancelled", "inputSchema": obj(json!({}))}),
            json!({"name": "ticks", "description": "Reports progress `count` times, `every_ms` apart, then answers",
                   "inputSchema": obj(json!({"count": {"type": "integer"}, "every_ms": {"type": "integer"}}))}),
            json!({"name": "crash", "description": "Exits the server mid-call", "inputSchema": obj(json!({})),
                   "annotations": {"destructiveHint": true, "openWorldHint": true}}),
            json!({"name": long_name(), "description": "A 200-character name", "inputSchema": obj(json!({}))}),
            json!({"name": "union", "description": "Root anyOf schema with $refs",
            "inputSchema": {
                "type": "object",
                "$defs": {"Id": {"type": "string", "description": "an id"}},
                "anyOf": [
                    {"type": "object", "properties": {"id": {"$ref": "#/$defs/Id"}, "n": {"type": "integer"}}, "required": ["id", "n"]},
                    {"type": "object", "properties": {"id": {"$ref": "#/$defs/Id"}, "name": {"type": "string"}}, "required": ["id"]}
                ]
            }}),
            json!({"name": "big", "description": "Returns N characters", "inputSchema": obj(json!({"chars": {"type": "integer"}}))}),
            json!({"name": "big_meta", "description": "Returns N characters; its own result limit is 150,000 characters", "inputSchema": obj(json!({"chars": {"type": "integer"}})),
                   "_meta": {"anthropic/maxResultSizeChars": 150000}}),
            json!({"name": "structured", "description": "Structured content", "inputSchema": obj(json!({}))}),
            json!({"name": "fail", "description": "Tool-level error", "inputSchema": obj(json!({}))}),
            json!({"name": "flags", "description": "Has _meta flags", "inputSchema": obj(json!({})),
                   "_meta": {"anthropic/alwaysLoad": true, "anthropic/maxResultSizeChars": 900000,
                             "anthropic/requiresUserInteraction": true, "anthropic/searchHint": "flag things"}}),
            json!({"name": "add_tool", "description": "Registers the `dynamic` tool (or with `remove`, takes it away) and sends list_changed (`times` times, default once)", "inputSchema": obj(json!({"times": {"type": "integer"}, "remove": {"type": "boolean"}}))}),
            json!({"name": "protocol_error", "description": "Answers with a JSON-RPC error", "inputSchema": obj(json!({}))}),
            // An object, so rmcp passes it on, but not a usable JSON Schema.
            json!({"name": "bad_schema", "description": "Invalid input schema",
                   "inputSchema": {"type": "array", "properties": 5, "required": "x",
                                   "anyOf": "nope", "items": {"$ref": "#/nowhere"}}}),
            json!({"name": "ask", "description": "Sends elicitation/create and returns the answer", "inputSchema": obj(json!({}))}),
            json!({"name": "sample", "description": "Sends sampling/createMessage and returns the answer", "inputSchema": obj(json!({}))}),
            json!({"name": "noise", "description": "Writes N bytes to stderr, then `noise: done`", "inputSchema": obj(json!({"bytes": {"type": "integer"}}))}),
            // As OpenAPI-generated servers write them: property names the model API refuses,
            // and nested keywords of the wrong type. Echoes the arguments it receives.
            json!({"name": "odd_keys", "description": "Property names the model API refuses",
                   "inputSchema": {"type": "object", "properties": {
                       "$filter": {"type": "string"},
                       "StartTime<": {"type": "string", "required": true},
                       "settings[include_credits]": {"type": "boolean"},
                       "user name": {},
                       "_filter": {"type": "any", "description": "a valid name already"},
                       "nested": {"type": "object", "required": "yes",
                                  "properties": {"deep": {"type": ["string", "file"], "minLength": "1"}},
                                  "items": 5, "anyOf": "none"}
                   }, "required": ["$filter", "nested"]}}),
        ];
        if self.dynamic.load(Ordering::SeqCst) {
            tools.push(json!({"name": "dynamic", "description": "Added at run time", "inputSchema": obj(json!({}))}));
        }
        tools
    }
}

fn text_result(text: impl Into<String>) -> CallToolResponse {
    let v = json!({"content": [{"type": "text", "text": text.into()}]});
    CallToolResponse::Complete(serde_json::from_value::<CallToolResult>(v).unwrap())
}

impl ServerHandler for Tiny {
    fn get_info(&self) -> InitializeResult {
        let mut caps = json!({"tools": {"listChanged": true}});
        if resources_only() {
            caps = json!({"resources": {}});
        }
        if std::env::args().any(|a| a == "--hang-resources") {
            caps["resources"] = json!({});
        }
        let caps: ServerCapabilities = serde_json::from_value(caps).unwrap();
        InitializeResult::new(caps)
    }

    /// With `--hang-resources`: never answers.
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        if resources_only() {
            let v = json!({"resources": [{"uri": "tiny://note", "name": "note", "mimeType": "text/plain"}]});
            return Ok(serde_json::from_value(v).unwrap());
        }
        std::future::pending().await
    }

    /// With `--hang-resources`: answers only when the client cancels.
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if resources_only() {
            let v = json!({"contents": [{"uri": request.uri, "mimeType": "text/plain", "text": "a note without tools"}]});
            return Ok(ReadResourceResponse::Complete(
                serde_json::from_value(v).unwrap(),
            ));
        }
        eprintln!("read {}: started", request.uri);
        context.ct.cancelled().await;
        eprintln!("read {}: cancelled by the client", request.uri);
        Err(ErrorData::internal_error("cancelled", None))
    }

    /// With `--print-roots`: asks for the client's roots and logs them.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if !std::env::args().any(|a| a == "--print-roots") {
            return;
        }
        // On a task of its own: the answer comes through the service loop running this.
        let peer = context.peer.clone();
        tokio::spawn(async move {
            #[allow(deprecated)]
            match peer.list_roots().await {
                Ok(roots) => eprintln!("roots: {}", serde_json::to_string(&roots).unwrap()),
                Err(e) => eprintln!("roots: error: {e}"),
            }
        });
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        _context: NotificationContext<RoleServer>,
    ) {
        let id = notification
            .request_id
            .map(|id| serde_json::to_string(&id).unwrap())
            .unwrap_or_default();
        eprintln!(
            "cancelled {id}: {}",
            notification.reason.unwrap_or_default()
        );
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        if resources_only() {
            return Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                "Method not found",
                None,
            ));
        }
        if std::env::args().any(|a| a == "--slow-list") {
            eprintln!("tools/list: slow");
            tokio::time::sleep(std::time::Duration::from_secs(60)).await;
        }
        if std::env::args().any(|a| a == "--exit-on-list") {
            eprintln!("fatal: GITHUB_TOKEN not set");
            std::process::exit(1);
        }
        if std::env::args().any(|a| a == "--fail-list") {
            return Err(ErrorData::internal_error(
                "tools/list fails on purpose",
                None,
            ));
        }
        if std::env::args().any(|a| a == "--loop-cursor") {
            let page: Vec<Value> = self.all_tools().into_iter().take(PAGE).collect();
            return Ok(
                serde_json::from_value(json!({"tools": page, "nextCursor": "again"})).unwrap(),
            );
        }
        let start: usize = request
            .and_then(|r| r.cursor)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        if start == 0 {
            eprintln!("tools/list: from the start");
        }
        let all = self.all_tools();
        let page: Vec<Value> = all.iter().skip(start).take(PAGE).cloned().collect();
        let mut result = json!({"tools": page});
        if start + PAGE < all.len() {
            result["nextCursor"] = json!((start + PAGE).to_string());
        }
        Ok(serde_json::from_value(result).unwrap())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        let name = request.name.to_string();
        match name.as_str() {
            "echo" => {
                if bracket_logs() {
                    println!("{BRACKET_LOG}");
                }
                Ok(text_result(args["text"].as_str().unwrap_or_default()))
            }
            "hang" => {
                eprintln!("hang: started");
                context.ct.cancelled().await;
                eprintln!("hang: cancelled by the client");
                Err(ErrorData::internal_error("cancelled", None))
            }
            "ticks" => {
                let count = args["count"].as_u64().unwrap_or(3);
                let every = std::time::Duration::from_millis(args["every_ms"].as_u64().unwrap_or(100));
                let token = context.meta.get_progress_token();
                for n in 1..=count {
                    tokio::time::sleep(every).await;
                    if let Some(token) = &token {
                        let mut param = ProgressNotificationParam::new(token.clone(), n as f64);
                        param.total = Some(count as f64);
                        let _ = context.peer.notify_progress(param).await;
                    }
                }
                Ok(text_result(format!("ticked {count}")))
            }
            "crash" => {
                if let Ok(path) = std::env::var("TINY_CRASH_LOG") {
                    use std::io::Write;
                    let mut f = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(path)
                        .unwrap();
                    writeln!(f, "crash called").unwrap();
                }
                eprintln!("crash: exiting now");
                std::process::exit(3);
            }
            "big" | "big_meta" => Ok(text_result(
                "x".repeat(args["chars"].as_u64().unwrap_or(10) as usize),
            )),
            "structured" => {
                let v = json!({"content": [{"type": "text", "text": "{\"n\":7}"}],
                               "structuredContent": {"n": 7}});
                Ok(CallToolResponse::Complete(
                    serde_json::from_value(v).unwrap(),
                ))
            }
            "fail" => {
                let v = json!({"content": [{"type": "text", "text": "it failed on purpose"}], "isError": true});
                Ok(CallToolResponse::Complete(
                    serde_json::from_value(v).unwrap(),
                ))
            }
            "add_tool" => {
                let remove = args["remove"] == true;
                self.dynamic.store(!remove, Ordering::SeqCst);
                for _ in 0..args["times"].as_u64().unwrap_or(1) {
                    let _ = context.peer.notify_tool_list_changed().await;
                }
                Ok(text_result(if remove { "removed" } else { "added" }))
            }
            "dynamic" => Ok(text_result("dynamic ok")),
            "protocol_error" => Err(ErrorData::invalid_params("bad params on purpose", None)),
            "bad_schema" => Ok(text_result(format!("bad_schema {args}"))),
            // Sent raw, whatever the client's capabilities: the client must answer cleanly.
            "ask" => Ok(text_result(
                ask(
                    &context,
                    json!({"method": "elicitation/create", "params": {
                        "mode": "form", "message": "Your name?",
                        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
                    }}),
                )
                .await,
            )),
            "sample" => Ok(text_result(
                ask(
                    &context,
                    json!({"method": "sampling/createMessage", "params": {
                        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                        "maxTokens": 10
                    }}),
                )
                .await,
            )),
            "noise" => {
                use std::io::Write;
                let n = args["bytes"].as_u64().unwrap_or(0) as usize;
                let mut err = std::io::stderr().lock();
                for chunk in "n".repeat(n).as_bytes().chunks(4096) {
                    err.write_all(chunk).unwrap();
                }
                writeln!(err, "\nnoise: done").unwrap();
                Ok(text_result("noisy"))
            }
            n if n == long_name() => Ok(text_result("long ok")),
            "union" | "flags" | "odd_keys" => Ok(text_result(format!("{name} {args}"))),
            other => Err(ErrorData::invalid_params(
                format!("unknown tool {other}"),
                None,
            )),
        }
    }
}

/// Sends a server-to-client request and describes the outcome: `result: {...}` or
/// `error: ...`.
async fn ask(context: &RequestContext<RoleServer>, request: Value) -> String {
    let request: ServerRequest = serde_json::from_value(request).unwrap();
    match context.peer.send_request(request).await {
        Ok(result) => format!("result: {}", serde_json::to_value(&result).unwrap()),
        Err(e) => format!("error: {e}"),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if std::env::args().any(|a| a == "--garbage") {
        println!("this is not JSON-RPC");
        println!("{{\"neither\": \"is this\"}}");
        println!("Server starting... ✓");
    }
    if bracket_logs() {
        println!("{BRACKET_LOG}");
    }
    eprintln!(
        "tiny_server: CLAUDE_PROJECT_DIR={}",
        std::env::var("CLAUDE_PROJECT_DIR").unwrap_or_default()
    );
    let service = Tiny::default()
        .serve(rmcp::transport::io::stdio())
        .await
        .expect("serve");
    let _ = service.waiting().await;
}
