//! Sequential `tools/call` throughput through the `Tool` wrapper, in the format of the
//! peers' bench scripts (`../shared/mcp-peers/bench`).
//!
//! ```text
//! cargo run --release -p tools-mcp --example bench -- $MCP_SERVER_EVERYTHING 2000
//! cargo run --release -p tools-mcp --example bench -- http://127.0.0.1:3001/mcp 2000
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use serde_json::json;
use tool_core::{ProgressSender, ToolUseContext};
use tools_mcp::{McpManager, McpOptions, ServerConfig};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let target = args
        .next()
        .expect("usage: bench <server-everything path | url> [N]");
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2000);
    let http = target.starts_with("http");
    let config = if http {
        ServerConfig::http("everything", &target)
    } else {
        ServerConfig::stdio("everything", &target, ["stdio"])
    };
    let (manager, diags) =
        McpManager::connect(vec![config], McpOptions::new(std::env::temp_dir())).await;
    assert!(diags.is_empty(), "{diags:?}");
    let echo = manager
        .tools()
        .into_iter()
        .find(|t| t.name() == "mcp__everything__echo")
        .expect("echo tool");
    let ctx = ToolUseContext::new(std::env::temp_dir());
    let input = json!({"message": "ping"});
    echo.call(input.clone(), ctx.clone(), ProgressSender::none())
        .await
        .expect("warm-up");
    let t0 = Instant::now();
    for _ in 0..n {
        echo.call(input.clone(), ctx.clone(), ProgressSender::none())
            .await
            .expect("call");
    }
    let dt = t0.elapsed().as_secs_f64();
    println!(
        "toolwright {} echo: {n} calls in {dt:.3}s = {} calls/s ({} us/call)",
        if http { "http" } else { "stdio" },
        (n as f64 / dt).round(),
        (dt / n as f64 * 1e6).round()
    );
    manager.shutdown().await;
}
