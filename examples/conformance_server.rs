//! The MCP conformance suite's server under test, built on the same serve code as
//! `toolwright serve --http` ([`toolwright::serve`]): the suite's scenario tools, resources
//! and prompts, which the product does not ship.
//!
//! Tools that only compute a result are ordinary [`Tool`]s served by a [`ToolServer`], so
//! they go through the pipeline as every served call does (`test_simple_text`,
//! `test_image_content`, `test_error_handling`, `test_tool_with_progress` and the JSON
//! Schema 2020-12 tool). Tools that talk back to the client (logging, sampling, elicitation)
//! or return content our tool results do not have (audio, embedded resources) are answered
//! by this example's handler, which delegates every other call to the [`ToolServer`].
//!
//!     cargo run --example conformance_server [ADDR]      # prints the endpoint URL on stdout
//!     $MCP_CONFORMANCE server --url http://127.0.0.1:PORT/mcp
// The suite still tests logging and sampling, which SEP-2577 deprecates.
#![allow(deprecated)]

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, ErrorData,
    GetPromptRequestParams, GetPromptResponse, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, SetLevelRequestParams,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};
use toolwright::core::{
    ContentBlock, MaxResultSize, ProgressSender, Tool, ToolError, ToolOutput, ToolResult,
    ToolResultContent, ToolUseContext, async_trait,
};
use toolwright::exec::{AllowAll, NoHooks};
use toolwright::serve::ToolServer;
use toolwright::serve::http::{HttpOptions, HttpServer, parse_addr};

/// A 1x1 red PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
/// A WAV file with no samples.
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA=";

/// Turns JSON into an rmcp type, or an internal error.
macro_rules! from_json {
    ($value:expr) => {
        serde_json::from_value($value).map_err(|e| ErrorData::internal_error(e.to_string(), None))
    };
}

// ----- tools served through the pipeline -----

/// A tool with a fixed name, schema and behaviour.
struct ScenarioTool {
    name: &'static str,
    description: &'static str,
    schema: Value,
    run: fn(ProgressSender) -> futures::future::BoxFuture<'static, Result<ToolOutput, ToolError>>,
}

#[async_trait]
impl Tool for ScenarioTool {
    fn name(&self) -> &str {
        self.name
    }
    fn input_schema(&self) -> Value {
        self.schema.clone()
    }
    fn description(&self) -> Cow<'_, str> {
        Cow::Borrowed(self.description)
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Unbounded
    }
    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }
    async fn call(
        &self,
        _input: Value,
        _ctx: ToolUseContext,
        progress: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        (self.run)(progress).await.map(ToolResult::new)
    }
}

fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}})
}

fn pipeline_tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(ScenarioTool {
            name: "test_simple_text",
            description: "Returns a simple text response",
            schema: no_arguments(),
            run: |_| {
                Box::pin(async {
                    Ok(ToolOutput::text(
                        "This is a simple text response for testing.",
                    ))
                })
            },
        }),
        Arc::new(ScenarioTool {
            name: "test_image_content",
            description: "Returns an image",
            schema: no_arguments(),
            run: |_| {
                Box::pin(async {
                    Ok(ToolOutput {
                        content: ToolResultContent::Blocks(vec![ContentBlock::image(
                            "image/png",
                            PNG,
                        )]),
                        structured: Value::Null,
                    })
                })
            },
        }),
        Arc::new(ScenarioTool {
            name: "test_error_handling",
            description: "Always fails",
            schema: no_arguments(),
            run: |_| {
                Box::pin(async {
                    Err(ToolError::msg(
                        "This tool intentionally returns an error for testing",
                    ))
                })
            },
        }),
        Arc::new(ScenarioTool {
            name: "test_tool_with_progress",
            description: "Reports progress 0, 50 and 100 of 100",
            schema: no_arguments(),
            run: |progress| {
                Box::pin(async move {
                    for step in [0, 50, 100] {
                        if step > 0 {
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                        progress.send(json!({"progress": step, "total": 100}));
                    }
                    Ok(ToolOutput::text("Progress tool completed"))
                })
            },
        }),
        Arc::new(ScenarioTool {
            name: "json_schema_2020_12_tool",
            description: "Tool with JSON Schema 2020-12 features",
            schema: json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {
                    "address": {
                        "type": "object",
                        "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
                    }
                },
                "properties": {
                    "name": {"type": "string"},
                    "address": {"$ref": "#/$defs/address"}
                },
                "additionalProperties": false
            }),
            run: |_| Box::pin(async { Ok(ToolOutput::text("ok")) }),
        }),
    ]
}

// ----- tools this handler answers itself -----

/// The `tools/list` entries of the tools answered here.
fn direct_tools() -> Vec<Value> {
    let message = json!({
        "type": "object",
        "properties": {"message": {"type": "string", "description": "The message to show the user"}},
        "required": ["message"]
    });
    let prompt = json!({
        "type": "object",
        "properties": {"prompt": {"type": "string", "description": "The prompt to send to the LLM"}},
        "required": ["prompt"]
    });
    [
        ("test_audio_content", "Returns audio", no_arguments()),
        ("test_embedded_resource", "Returns an embedded resource", no_arguments()),
        ("test_multiple_content_types", "Returns text, an image and a resource", no_arguments()),
        ("test_tool_with_logging", "Sends three log messages", no_arguments()),
        ("test_sampling", "Asks the client's LLM", prompt),
        ("test_elicitation", "Asks the user", message),
        ("test_elicitation_sep1034_defaults", "Asks with default values", no_arguments()),
        ("test_elicitation_sep1330_enums", "Asks with enum fields", no_arguments()),
    ]
    .into_iter()
    .map(|(name, description, schema)| {
        json!({"name": name, "description": description, "inputSchema": schema})
    })
    .collect()
}

const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

fn level_rank(level: &str) -> usize {
    LEVELS.iter().position(|l| *l == level).unwrap_or(0)
}

#[derive(Clone)]
struct ConformanceServer {
    tools: ToolServer,
    log_level: Arc<Mutex<String>>,
    subscriptions: Arc<Mutex<HashSet<String>>>,
}

impl ConformanceServer {
    async fn log(&self, context: &RequestContext<RoleServer>, text: &str) {
        let min = self
            .log_level
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if level_rank("info") < level_rank(&min) {
            return;
        }
        if let Ok(param) = serde_json::from_value(json!({
            "level": "info",
            "logger": "conformance",
            "data": text,
        })) {
            let _ = context.peer.notify_logging_message(param).await;
        }
    }

    async fn elicit(
        &self,
        context: &RequestContext<RoleServer>,
        message: &str,
        schema: Value,
    ) -> Result<(String, Value), ErrorData> {
        let params = from_json!(json!({"message": message, "requestedSchema": schema}))?;
        let answer = context
            .peer
            .create_elicitation(params)
            .await
            .map_err(|e| ErrorData::internal_error(format!("elicitation failed: {e}"), None))?;
        let action = serde_json::to_value(&answer.action)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        Ok((action, answer.content.unwrap_or(Value::Null)))
    }

    async fn direct(
        &self,
        name: &str,
        arguments: &serde_json::Map<String, Value>,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<Value>, ErrorData> {
        let text = |t: &str| json!({"content": [{"type": "text", "text": t}]});
        let result = match name {
            "test_audio_content" => json!({
                "content": [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]
            }),
            "test_embedded_resource" => json!({
                "content": [{"type": "resource", "resource": {
                    "uri": "test://embedded-resource",
                    "mimeType": "text/plain",
                    "text": "This is an embedded resource content."
                }}]
            }),
            "test_multiple_content_types" => json!({
                "content": [
                    {"type": "text", "text": "Multiple content types test:"},
                    {"type": "image", "data": PNG, "mimeType": "image/png"},
                    {"type": "resource", "resource": {
                        "uri": "test://mixed-content-resource",
                        "mimeType": "application/json",
                        "text": "{\"test\":\"data\",\"value\":123}"
                    }}
                ]
            }),
            "test_tool_with_logging" => {
                self.log(context, "Tool execution started").await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                self.log(context, "Tool processing data").await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                self.log(context, "Tool execution completed").await;
                text("Logging tool completed")
            }
            "test_sampling" => {
                let prompt = arguments
                    .get("prompt")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let params = from_json!(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
                    "maxTokens": 100
                }))?;
                let answer = context.peer.create_message(params).await.map_err(|e| {
                    ErrorData::internal_error(format!("sampling failed: {e}"), None)
                })?;
                let answer = serde_json::to_value(&answer).unwrap_or_default();
                let reply = answer["content"]["text"]
                    .as_str()
                    .or_else(|| answer["content"][0]["text"].as_str())
                    .unwrap_or_default()
                    .to_owned();
                text(&format!("LLM response: {reply}"))
            }
            "test_elicitation" => {
                let message = arguments
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let (action, content) = self
                    .elicit(
                        context,
                        message,
                        json!({
                            "type": "object",
                            "properties": {
                                "username": {"type": "string", "description": "User's response"},
                                "email": {"type": "string", "description": "User's email address"}
                            },
                            "required": ["username", "email"]
                        }),
                    )
                    .await?;
                text(&format!(
                    "User response: action={action}, content={content}"
                ))
            }
            "test_elicitation_sep1034_defaults" => {
                let (action, content) = self
                    .elicit(
                        context,
                        "Please review and update the form fields with defaults",
                        json!({
                            "type": "object",
                            "properties": {
                                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                                "age": {"type": "integer", "description": "User age", "default": 30},
                                "score": {"type": "number", "description": "User score", "default": 95.5},
                                "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
                                "verified": {"type": "boolean", "description": "Verification status", "default": true}
                            }
                        }),
                    )
                    .await?;
                text(&format!(
                    "Elicitation completed: action={action}, content={content}"
                ))
            }
            "test_elicitation_sep1330_enums" => {
                let (action, content) = self
                    .elicit(
                        context,
                        "Please select options from the enum fields",
                        json!({
                            "type": "object",
                            "properties": {
                                "untitledSingle": {
                                    "type": "string",
                                    "description": "Select one option",
                                    "enum": ["option1", "option2", "option3"]
                                },
                                "titledSingle": {
                                    "type": "string",
                                    "description": "Select one option with titles",
                                    "oneOf": [
                                        {"const": "value1", "title": "First Option"},
                                        {"const": "value2", "title": "Second Option"},
                                        {"const": "value3", "title": "Third Option"}
                                    ]
                                },
                                "legacyEnum": {
                                    "type": "string",
                                    "description": "Select one option (legacy)",
                                    "enum": ["opt1", "opt2", "opt3"],
                                    "enumNames": ["Option One", "Option Two", "Option Three"]
                                },
                                "untitledMulti": {
                                    "type": "array",
                                    "description": "Select multiple options",
                                    "minItems": 1,
                                    "maxItems": 3,
                                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
                                },
                                "titledMulti": {
                                    "type": "array",
                                    "description": "Select multiple options with titles",
                                    "minItems": 1,
                                    "maxItems": 3,
                                    "items": {"anyOf": [
                                        {"const": "value1", "title": "First Choice"},
                                        {"const": "value2", "title": "Second Choice"},
                                        {"const": "value3", "title": "Third Choice"}
                                    ]}
                                }
                            },
                            "required": []
                        }),
                    )
                    .await?;
                text(&format!(
                    "Elicitation completed: action={action}, content={content}"
                ))
            }
            _ => return Ok(None),
        };
        Ok(Some(result))
    }
}

fn resource_text(uri: &str) -> Option<Value> {
    if uri == "test://static-text" {
        return Some(json!({
            "uri": uri, "mimeType": "text/plain",
            "text": "This is the content of the static text resource."
        }));
    }
    if uri == "test://static-binary" {
        return Some(json!({"uri": uri, "mimeType": "image/png", "blob": PNG}));
    }
    if uri == "test://watched-resource" {
        return Some(
            json!({"uri": uri, "mimeType": "text/plain", "text": "Watched resource content"}),
        );
    }
    let id = uri
        .strip_prefix("test://template/")?
        .strip_suffix("/data")?;
    let text = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
    Some(json!({"uri": uri, "mimeType": "application/json", "text": text.to_string()}))
}

impl ServerHandler for ConformanceServer {
    fn get_info(&self) -> InitializeResult {
        let mut capabilities = serde_json::to_value(self.tools.capabilities()).unwrap_or_default();
        capabilities["resources"] = json!({"subscribe": true, "listChanged": false});
        capabilities["prompts"] = json!({"listChanged": false});
        capabilities["logging"] = json!({});
        capabilities["completions"] = json!({});
        let capabilities: ServerCapabilities =
            serde_json::from_value(capabilities).unwrap_or_default();
        let mut info = self.tools.get_info();
        info.capabilities = capabilities;
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = self.tools.list();
        for entry in direct_tools() {
            tools.push(from_json!(entry)?);
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.clone().unwrap_or_default();
        match self.direct(&request.name, &arguments, &context).await? {
            Some(result) => Ok(CallToolResponse::Complete(from_json!(result)?)),
            None => self.tools.call(request, context).await,
        }
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let level = serde_json::to_value(request.level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "info".to_owned());
        *self
            .log_level
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = level;
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let request = serde_json::to_value(&request).unwrap_or_default();
        let typed = request["argument"]["value"].as_str().unwrap_or_default();
        let values: Vec<&str> = ["paris", "park", "party", "hello", "world"]
            .into_iter()
            .filter(|v| v.starts_with(typed))
            .collect();
        from_json!(
            json!({"completion": {"values": values, "total": values.len(), "hasMore": false}})
        )
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        from_json!(json!({"resources": [
            {"uri": "test://static-text", "name": "static-text", "description": "A static text resource", "mimeType": "text/plain"},
            {"uri": "test://static-binary", "name": "static-binary", "description": "A static binary resource", "mimeType": "image/png"},
            {"uri": "test://watched-resource", "name": "watched-resource", "description": "A resource to subscribe to", "mimeType": "text/plain"}
        ]}))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        from_json!(json!({"resourceTemplates": [{
            "uriTemplate": "test://template/{id}/data",
            "name": "template",
            "description": "Data for an id",
            "mimeType": "application/json"
        }]}))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        match resource_text(&request.uri) {
            Some(contents) => Ok(ReadResourceResponse::Complete(from_json!(
                json!({"contents": [contents]})
            )?)),
            None => Err(ErrorData::resource_not_found(
                format!("no resource {}", request.uri),
                None,
            )),
        }
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(request.uri.clone());
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&request.uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        from_json!(json!({"prompts": [
            {"name": "test_simple_prompt", "description": "A simple prompt"},
            {"name": "test_prompt_with_arguments", "description": "A prompt with arguments", "arguments": [
                {"name": "arg1", "description": "First test argument", "required": true},
                {"name": "arg2", "description": "Second test argument", "required": true}
            ]},
            {"name": "test_prompt_with_embedded_resource", "description": "A prompt with a resource", "arguments": [
                {"name": "resourceUri", "description": "URI of the resource to embed", "required": true}
            ]},
            {"name": "test_prompt_with_image", "description": "A prompt with an image"}
        ]}))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let arg = |name: &str| {
            request
                .arguments
                .as_ref()
                .and_then(|a| a.get(name))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let user = |content: Value| json!({"role": "user", "content": content});
        let messages = match request.name.as_ref() {
            "test_simple_prompt" => vec![user(
                json!({"type": "text", "text": "This is a simple prompt for testing."}),
            )],
            "test_prompt_with_arguments" => vec![user(json!({
                "type": "text",
                "text": format!("Prompt with arguments: arg1='{}', arg2='{}'", arg("arg1"), arg("arg2"))
            }))],
            "test_prompt_with_embedded_resource" => vec![
                user(json!({"type": "resource", "resource": {
                    "uri": arg("resourceUri"),
                    "mimeType": "text/plain",
                    "text": "Embedded resource content for testing."
                }})),
                user(
                    json!({"type": "text", "text": "Please process the embedded resource above."}),
                ),
            ],
            "test_prompt_with_image" => vec![
                user(json!({"type": "image", "data": PNG, "mimeType": "image/png"})),
                user(json!({"type": "text", "text": "Please analyze the image above."})),
            ],
            other => {
                return Err(ErrorData::invalid_params(
                    format!("no prompt named {other}"),
                    None,
                ));
            }
        };
        Ok(GetPromptResponse::Complete(from_json!(
            json!({"messages": messages})
        )?))
    }
}

#[tokio::main]
async fn main() {
    let addr = std::env::args()
        .nth(1)
        .map_or_else(|| parse_addr("127.0.0.1:0"), |a| parse_addr(&a))
        .unwrap_or_else(|e| {
            eprintln!("conformance_server: {e}");
            std::process::exit(2)
        });
    let dir = std::env::temp_dir();
    let ctx = ToolUseContext::new(&dir).with_tools(pipeline_tools());
    let tools = ToolServer::new(ctx, Arc::new(AllowAll), Arc::new(NoHooks))
        .with_server_info("toolwright-conformance-server", env!("CARGO_PKG_VERSION"));
    let server = ConformanceServer {
        tools,
        log_level: Arc::new(Mutex::new("debug".to_owned())),
        subscriptions: Arc::default(),
    };
    let listener = HttpServer::bind(&HttpOptions::new(addr))
        .await
        .unwrap_or_else(|e| {
            eprintln!("conformance_server: {e}");
            std::process::exit(2)
        });
    println!("{}", listener.url());
    listener
        // One handler for every request; the tool server keeps each session's state.
        .serve(move || server.clone())
        .await;
}
