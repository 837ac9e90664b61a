//! Compile-time checks that the public types and futures can cross threads (as tokio's
//! `async_send_sync.rs`). A failure here is a build error, not a test failure.
#![allow(dead_code, clippy::unwrap_used, missing_docs)]

use std::sync::Arc;

use serde_json::Value;
use tool_core::*;

fn send_sync<T: Send + Sync>() {}
fn send<T: Send>() {}
fn future_send<F: std::future::Future + Send>(_: F) {}

#[test]
fn public_types_are_send_and_sync() {
    send_sync::<Arc<dyn Tool>>();
    send_sync::<ToolUseContext>();
    send_sync::<FileStateCache>();
    send_sync::<AppState>();
    send_sync::<ProgressSender>();
    send_sync::<ToolError>();
    send_sync::<ValidationError>();
    send_sync::<InputError>();
    send_sync::<PermissionResult>();
    send_sync::<ToolResultBlock>();
    send_sync::<ToolOutput>();
    send_sync::<ContextModifier>();
    send::<ToolResult>();
}

/// The futures of the dyn trait are `Send`, so executors can spawn them.
fn tool_futures_are_send(tool: Arc<dyn Tool>, ctx: ToolUseContext, input: Value) {
    future_send(tool.call(input.clone(), ctx.clone(), ProgressSender::none()));
    future_send(tool.validate_input(&input, &ctx));
    future_send(tool.check_permissions(&input, &ctx));
}
