//! The client under test for the MCP conformance suite's client scenarios, built on the
//! public API of `tools-mcp` (config -> manager -> tools).
//!
//! The runner starts a scenario server and runs `conformance_client <url>` with
//! `MCP_CONFORMANCE_SCENARIO` set:
//!
//! ```text
//! $MCP_CONFORMANCE client --command "$PWD/target/debug/examples/conformance_client" --scenario tools_call
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::{Map, Value, json};
use tool_core::{ProgressSender, ToolUseContext};
use tools_mcp::{ElicitationHandler, McpManager, McpOptions, ServerConfig, Severity};

/// Accepts every elicitation, filling each field from its schema default (SEP-1034).
struct DefaultsElicitation;

#[tool_core::async_trait]
impl ElicitationHandler for DefaultsElicitation {
    async fn elicit(&self, _server: &str, request: Value) -> Value {
        let mut content = Map::new();
        if let Some(props) = request["requestedSchema"]["properties"].as_object() {
            for (name, schema) in props {
                if let Some(default) = schema.get("default") {
                    content.insert(name.clone(), default.clone());
                }
            }
        }
        json!({"action": "accept", "content": content})
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let url = std::env::args().next_back().unwrap_or_default();
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let mut opts = McpOptions::from_env(std::env::temp_dir());
    opts.elicitation = Some(Arc::new(DefaultsElicitation));
    let (manager, diags) = McpManager::connect(vec![ServerConfig::http("conf", url)], opts).await;
    for d in &diags {
        eprintln!("{d}");
    }
    // Warnings (a server that offers no tools, as the `initialize` scenario's) are no failure.
    if diags.iter().any(|d| d.severity == Severity::Error) {
        std::process::exit(1);
    }
    let call = match scenario.as_str() {
        "tools_call" => Some(("add_numbers", json!({"a": 5, "b": 3}))),
        "elicitation-sep1034-client-defaults" => {
            Some(("test_client_elicitation_defaults", json!({})))
        }
        "sse-retry" => Some(("test_reconnection", json!({}))),
        _ => None,
    };
    let mut code = 0;
    if let Some((name, input)) = call {
        let full = tools_mcp::mcp_tool_name("conf", name);
        let tools = manager.tools();
        match tools.iter().find(|t| t.name() == full) {
            Some(tool) => match tool
                .call(
                    input,
                    ToolUseContext::new(std::env::temp_dir()),
                    ProgressSender::none(),
                )
                .await
            {
                Ok(r) => println!("{name}: {}", r.data.content.joined_text()),
                Err(e) => {
                    eprintln!("{name} failed: {e}");
                    code = 1;
                }
            },
            None => {
                eprintln!("no tool {full}");
                code = 1;
            }
        }
    }
    let names: Vec<String> = manager
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    println!("scenario {scenario} tools {names:?}");
    manager.shutdown().await;
    std::process::exit(code);
}
