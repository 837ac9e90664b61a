//! Helpers shared by the integration tests: run a tool through the same steps the executor
//! uses (schema, validate_input, call) and return what the model would see.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::Value;
use tool_core::{
    ProgressSender, Tool, ToolOutput, ToolUseContext, ValidationError, tool_use_error,
};

/// A failed call: the model text, and the validation code when `validate_input` refused.
#[derive(Debug)]
pub struct Failure {
    pub text: String,
    pub code: Option<i32>,
}

pub async fn run(
    tool: &dyn Tool,
    ctx: &ToolUseContext,
    input: Value,
) -> Result<ToolOutput, Failure> {
    let input = tool.parse_input(input).map_err(|e| Failure {
        text: e.to_model_text(),
        code: None,
    })?;
    tool.validate_input(&input, ctx)
        .await
        .map_err(|e: ValidationError| Failure {
            text: tool_use_error(&e.message),
            code: e.error_code,
        })?;
    tool.call(input, ctx.clone(), ProgressSender::none())
        .await
        .map(|r| r.data)
        .map_err(|e| Failure {
            text: e.to_model_text(),
            code: None,
        })
}

/// The text content of a successful call.
pub async fn text(tool: &dyn Tool, ctx: &ToolUseContext, input: Value) -> String {
    match run(tool, ctx, input).await {
        Ok(out) => out.content.joined_text(),
        Err(f) => panic!("call failed: {}", f.text),
    }
}

/// The failure of a call that must fail.
pub async fn fail(tool: &dyn Tool, ctx: &ToolUseContext, input: Value) -> Failure {
    match run(tool, ctx, input).await {
        Ok(out) => panic!("call succeeded: {:?}", out.content),
        Err(f) => f,
    }
}

/// Sets a file's mtime `secs` seconds after the epoch-based base, so orderings are stable.
pub fn set_mtime(path: &Path, secs: u64) {
    let when = SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000 + secs);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

/// Moves a file's mtime into the future (a later change the cache has not seen).
pub fn bump_mtime(path: &Path) {
    let when = SystemTime::now() + Duration::from_secs(30);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

pub fn ctx(dir: &Path) -> ToolUseContext {
    ToolUseContext::new(dir)
}
