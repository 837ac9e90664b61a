//! Pipeline overhead for a no-op tool (no hooks, allow-all permissions) against the bare cost
//! of `tokio::spawn` + join of the same no-op, measured in the same run. Target: ≤ 3x.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::borrow::Cow;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use futures::StreamExt;
use serde_json::{Value, json};
use tool_core::{
    MaxResultSize, ProgressSender, Tool, ToolError, ToolResult, ToolUseContext, async_trait,
};
use tool_exec::{ExecutorConfig, Pipeline, StreamingToolExecutor, ToolUse};

struct Noop;

#[async_trait]
impl Tool for Noop {
    fn name(&self) -> &str {
        "Noop"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn description(&self) -> Cow<'_, str> {
        "does nothing".into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }
    fn is_concurrency_safe(&self, _: &Value) -> bool {
        true
    }
    async fn call(
        &self,
        _input: Value,
        _ctx: ToolUseContext,
        _p: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::text("ok"))
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(Noop)];
    let ctx = ToolUseContext::new("/tmp").with_tools(tools);
    let pipeline = Arc::new(Pipeline::allow_all());
    let tool_use = ToolUse::new("toolu_1", "Noop", json!({}));

    let mut group = c.benchmark_group("no-op call");
    group.bench_function("baseline: tokio spawn + join", |b| {
        b.to_async(&rt).iter(|| async {
            let tool: Arc<dyn Tool> = Arc::new(Noop);
            let ctx = ctx.clone();
            tokio::spawn(async move { tool.call(json!({}), ctx, ProgressSender::none()).await })
                .await
                .unwrap()
                .unwrap()
        });
    });
    group.bench_function("run_tool_use in a spawned task", |b| {
        b.to_async(&rt).iter(|| {
            let (pipeline, ctx, tool_use) = (Arc::clone(&pipeline), ctx.clone(), tool_use.clone());
            async move {
                tokio::spawn(async move {
                    pipeline
                        .run_tool_use(&tool_use, ctx.child(), ProgressSender::none())
                        .await
                })
                .await
                .unwrap()
            }
        });
    });
    group.bench_function("streaming executor, one call", |b| {
        b.to_async(&rt).iter(|| {
            let (pipeline, ctx, tool_use) = (Arc::clone(&pipeline), ctx.clone(), tool_use.clone());
            async move {
                let mut exec = StreamingToolExecutor::new(pipeline, ctx, ExecutorConfig::default());
                exec.add_tool(tool_use);
                exec.finish();
                while exec.next().await.is_some() {}
            }
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
