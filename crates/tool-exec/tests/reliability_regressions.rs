//! Regression tests for faults found by the reliability work (docs/reliability.md), each
//! named after what it was.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tool_core::{
    MaxResultSize, ProgressSender, Tool, ToolError, ToolResult, ToolResultContent, ToolUseContext,
    ValidationError, async_trait,
};
use tool_exec::{
    AnthropicStream, ExecutorConfig, ExecutorEvent, Pipeline, REJECT_MESSAGE, StreamError,
    StreamEvent, StreamingToolExecutor, ToolUse, persist_if_large,
};

/// A tool whose `validate_input` never returns (and ignores the cancellation token).
struct StuckValidation {
    entered: Arc<Notify>,
}

#[async_trait]
impl Tool for StuckValidation {
    fn name(&self) -> &str {
        "StuckValidation"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn description(&self) -> Cow<'_, str> {
        "validation never ends".into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(1000)
    }
    async fn validate_input(
        &self,
        _input: &Value,
        _ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        self.entered.notify_one();
        std::future::pending::<()>().await;
        Ok(())
    }
    async fn call(
        &self,
        _input: Value,
        _ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::text("ran"))
    }
}

/// Cancelling a call whose validation hung did nothing: the pipeline awaited
/// `validate_input` without watching the token, so the turn never ended.
#[tokio::test]
async fn a_validation_that_never_ends_held_the_turn() {
    let entered = Arc::new(Notify::new());
    let tool: Arc<dyn Tool> = Arc::new(StuckValidation {
        entered: entered.clone(),
    });
    let ctx = ToolUseContext::new(std::env::temp_dir()).with_tools(vec![tool]);
    let token = ctx.cancellation().clone();
    let mut executor = StreamingToolExecutor::new(
        Arc::new(Pipeline::allow_all()),
        ctx,
        ExecutorConfig::default(),
    );
    executor.add_tool(ToolUse::new("t1", "StuckValidation", json!({})));
    executor.finish();
    entered.notified().await;
    token.cancel();
    // A hang guard only: the result arrives as soon as the token fires.
    let results = tokio::time::timeout(Duration::from_secs(60), async {
        let mut results = Vec::new();
        while let Some(event) = executor.next().await {
            if let ExecutorEvent::Result(r) = event {
                results.push(r);
            }
        }
        results
    })
    .await
    .expect("the cancelled call never got its result");
    assert_eq!(results.len(), 1);
    assert!(results[0].outcome.result.is_error);
    // The host's cancellation answers as a hard interrupt does.
    assert_eq!(
        results[0].outcome.result.content.joined_text(),
        REJECT_MESSAGE
    );
}

/// A persisted result was written in place: a reader (the model following the path, or a
/// crash mid-write) could see a torn file. Now the file appears whole or not at all.
#[test]
fn persisted_results_could_be_seen_half_written() {
    let dir = tempfile::tempdir().unwrap();
    let full = 40 * 1024 * 1024;
    let path = dir.path().join("toolu_big.txt");
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let done = done.clone();
        let path = path.clone();
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            while !done.load(Ordering::SeqCst) {
                if let Ok(meta) = std::fs::metadata(&path) {
                    seen.push(meta.len());
                }
            }
            seen
        })
    };
    let out = persist_if_large(
        ToolResultContent::Text("x".repeat(full)),
        "toolu_big",
        1000,
        Some(dir.path()),
    );
    done.store(true, Ordering::SeqCst);
    let seen = watcher.join().unwrap();
    assert_eq!(out.path.as_deref(), Some(path.as_path()));
    let torn: Vec<u64> = seen.into_iter().filter(|&n| n != full as u64).collect();
    assert!(torn.is_empty(), "a reader saw partial sizes {torn:?}");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), full as u64);
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["toolu_big.txt"], "temporary files left behind");
}

fn sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {}\n\n", e["type"].as_str().unwrap(), e))
        .collect()
}

/// A tool_use block that closed in the same chunk as a later malformed event was dropped
/// with the error (the model's call then never got a result); cut into smaller chunks, the
/// same stream returned it. Now the events come first and the error with the next call.
#[test]
fn events_before_a_malformed_event_in_the_same_chunk_were_lost() {
    let good = sse(&[
        json!({"type": "message_start", "message": {"id": "m"}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Read"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"file_path\": \"/a\"}"}}),
        json!({"type": "content_block_stop", "index": 0}),
    ]);
    let text = format!("{good}event: content_block_start\ndata: {{broken\n\n");
    let mut parser = AnthropicStream::new();
    let events = parser.feed(&text).unwrap();
    assert!(
        events.contains(&StreamEvent::ToolUse(ToolUse::new(
            "toolu_1",
            "Read",
            json!({"file_path": "/a"})
        ))),
        "{events:?}"
    );
    let err = parser.finish().unwrap_err();
    assert!(
        matches!(err, StreamError::Malformed { line: 14, .. }),
        "{err}"
    );
    // The error is sticky.
    assert_eq!(parser.feed("data: {}\n\n").unwrap_err(), err);
}
