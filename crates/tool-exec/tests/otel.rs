//! What an OpenTelemetry backend receives from one call, through the real bridge
//! (`tracing-opentelemetry`) into the SDK's in-memory exporters: the `execute_tool <name>`
//! span with its GenAI attributes and its child spans, and the `toolwright.tool.duration`
//! histogram with the tool's name as attribute.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use opentelemetry::trace::{Status, TracerProvider as _};
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use tool_core::{ProgressSender, ToolUseContext};
use tool_exec::{
    CallOutcome, ExecutorConfig, ExecutorEvent, Pipeline, StreamingToolExecutor, ToolUse,
};
use tracing::Instrument as _;
use tracing_subscriber::layer::SubscriberExt;

struct Exported {
    spans: Vec<SpanData>,
    /// (tool name attribute, count, sum) of each histogram data point.
    durations: Vec<(String, u64, f64)>,
}

fn attr<'a>(attrs: impl IntoIterator<Item = &'a KeyValue>, key: &str) -> Option<Value> {
    attrs
        .into_iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.clone())
}

/// The SDK's in-memory exporters, behind the real bridge.
struct Exporters {
    spans: InMemorySpanExporter,
    tracer_provider: SdkTracerProvider,
    metrics: InMemoryMetricExporter,
    meter_provider: SdkMeterProvider,
}

impl Exporters {
    /// The exporters, and a subscriber that bridges into them.
    fn new() -> (Self, impl tracing::Subscriber + Send + Sync) {
        let spans = InMemorySpanExporter::default();
        let tracer_provider = SdkTracerProvider::builder()
            .with_simple_exporter(spans.clone())
            .build();
        let metrics = InMemoryMetricExporter::default();
        let meter_provider = SdkMeterProvider::builder()
            .with_periodic_exporter(metrics.clone())
            .build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(tracer_provider.tracer("toolwright")))
            .with(tracing_opentelemetry::MetricsLayer::new(
                meter_provider.clone(),
            ));
        let exporters = Self {
            spans,
            tracer_provider,
            metrics,
            meter_provider,
        };
        (exporters, subscriber)
    }

    /// Flushes everything and returns what was exported.
    fn collect(self) -> Exported {
        self.tracer_provider.force_flush().unwrap();
        self.meter_provider.force_flush().unwrap();
        let mut durations = Vec::new();
        for rm in self.metrics.get_finished_metrics().unwrap() {
            for metric in rm.scope_metrics().flat_map(|sm| sm.metrics()) {
                if metric.name() != "toolwright.tool.duration" {
                    continue;
                }
                let AggregatedMetrics::F64(MetricData::Histogram(h)) = metric.data() else {
                    panic!("toolwright.tool.duration is not an f64 histogram");
                };
                for point in h.data_points() {
                    let tool = attr(point.attributes(), "gen_ai.tool.name")
                        .map(|v| v.as_str().into_owned())
                        .unwrap_or_default();
                    durations.push((tool, point.count(), point.sum()));
                }
            }
        }
        Exported {
            spans: self.spans.get_finished_spans().unwrap(),
            durations,
        }
    }
}

/// Runs `run` with a subscriber that bridges into in-memory exporters, then flushes them.
async fn capture<F: std::future::Future<Output = ()>>(run: impl FnOnce() -> F) -> Exported {
    let (exporters, subscriber) = Exporters::new();
    {
        let _guard = tracing::subscriber::set_default(subscriber);
        run().await;
    }
    exporters.collect()
}

async fn exported(calls: &[(&str, serde_json::Value)]) -> Exported {
    capture(|| async {
        let log = Arc::default();
        let ctx = common::ctx(&log);
        for (i, (name, input)) in calls.iter().enumerate() {
            Pipeline::allow_all()
                .run_tool_use(
                    &ToolUse::new(format!("toolu_{i}"), *name, input.clone()),
                    ctx.child(),
                    ProgressSender::none(),
                )
                .await;
        }
    })
    .await
}

impl Exported {
    /// The one span named `name`.
    fn span(&self, name: &str) -> &SpanData {
        let mut found = self.spans.iter().filter(|s| s.name == name);
        let span = found.next().unwrap_or_else(|| {
            panic!(
                "no `{name}` span in {:?}",
                self.spans.iter().map(|s| &s.name).collect::<Vec<_>>()
            )
        });
        assert!(found.next().is_none(), "more than one `{name}` span");
        span
    }

    fn count_of(&self, tool: &str) -> u64 {
        self.durations
            .iter()
            .filter(|d| d.0 == tool)
            .map(|d| d.1)
            .sum()
    }
}

/// The event named `name` on `span`.
fn event<'a>(span: &'a SpanData, name: &str) -> &'a opentelemetry::trace::Event {
    span.events
        .iter()
        .find(|e| e.name == name)
        .unwrap_or_else(|| {
            panic!(
                "no `{name}` event on `{}`: {:?}",
                span.name,
                span.events.iter().map(|e| &e.name).collect::<Vec<_>>()
            )
        })
}

#[tokio::test(flavor = "current_thread")]
async fn the_span_tree_reaches_the_exporter_with_genai_attributes() {
    let out = exported(&[("Read", json!({"ms": 1}))]).await;
    let root = out
        .spans
        .iter()
        .find(|s| s.name == "execute_tool Read")
        .unwrap_or_else(|| {
            panic!(
                "no `execute_tool Read` span in {:?}",
                out.spans.iter().map(|s| &s.name).collect::<Vec<_>>()
            )
        });
    assert_eq!(
        attr(&root.attributes, "gen_ai.operation.name"),
        Some("execute_tool".into())
    );
    assert_eq!(
        attr(&root.attributes, "gen_ai.tool.name"),
        Some("Read".into())
    );
    assert_eq!(
        attr(&root.attributes, "gen_ai.tool.call.id"),
        Some("toolu_0".into())
    );
    assert_eq!(
        attr(&root.attributes, "gen_ai.tool.type"),
        Some("function".into())
    );
    assert_eq!(attr(&root.attributes, "error.type"), None);
    let root_id = root.span_context.span_id();
    let mut children: Vec<&str> = out
        .spans
        .iter()
        .filter(|s| s.parent_span_id == root_id)
        .map(|s| s.name.as_ref())
        .collect();
    children.sort_unstable();
    children.dedup();
    assert_eq!(children, ["execution", "hooks", "permission"]);
    // Every span of the call belongs to the call's trace.
    let trace = root.span_context.trace_id();
    assert!(out.spans.iter().all(|s| s.span_context.trace_id() == trace));
}

#[tokio::test(flavor = "current_thread")]
async fn a_failure_exports_its_error_type() {
    let out = exported(&[("Bash", json!({"end": "shell"}))]).await;
    let root = out
        .spans
        .iter()
        .find(|s| s.name == "execute_tool Bash")
        .unwrap();
    assert_eq!(
        attr(&root.attributes, "error.type"),
        Some("ShellError".into())
    );
    assert!(
        matches!(root.status, opentelemetry::trace::Status::Error { .. }),
        "{:?}",
        root.status
    );
}

#[tokio::test(flavor = "current_thread")]
async fn every_call_lands_in_the_duration_histogram_by_tool() {
    let out = exported(&[
        ("Read", json!({"ms": 1})),
        ("Read", json!({"ms": 1})),
        ("Bash", json!({"end": "shell"})),
    ])
    .await;
    let count_of = |tool: &str| -> u64 {
        out.durations
            .iter()
            .filter(|d| d.0 == tool)
            .map(|d| d.1)
            .sum()
    };
    assert_eq!(count_of("Read"), 2, "{:?}", out.durations);
    assert_eq!(count_of("Bash"), 1, "{:?}", out.durations);
    // The Read calls sleep 1 ms each: the histogram's sum (seconds) shows it.
    let read_sum: f64 = out
        .durations
        .iter()
        .filter(|d| d.0 == "Read")
        .map(|d| d.2)
        .sum();
    assert!(read_sum >= 0.002, "sum of two 1 ms reads was {read_sum} s");
}

/// A call dropped before it ends (an embedder's `timeout` or `select!`, an aborted task, a
/// runtime shutting down) still ends its span as a cancelled call, with its `tool_result`
/// event and its histogram point.
#[tokio::test(flavor = "current_thread")]
async fn a_dropped_call_is_exported_as_cancelled() {
    let out = capture(|| async {
        let log = Arc::default();
        let ctx = common::ctx(&log);
        let timed_out = tokio::time::timeout(
            Duration::from_millis(20),
            Pipeline::allow_all().run_tool_use(
                &ToolUse::new("toolu_t", "Sleep", json!({"ms": 60_000})),
                ctx.child(),
                ProgressSender::none(),
            ),
        )
        .await;
        assert!(timed_out.is_err(), "the call should still be running");
        let call_ctx = ctx.child();
        let task = tokio::spawn(async move {
            Pipeline::allow_all()
                .run_tool_use(
                    &ToolUse::new("toolu_a", "Edit", json!({"ms": 60_000})),
                    call_ctx,
                    ProgressSender::none(),
                )
                .await
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        task.abort();
        assert!(task.await.unwrap_err().is_cancelled());
    })
    .await;
    for name in ["execute_tool Sleep", "execute_tool Edit"] {
        let root = out.span(name);
        assert_eq!(
            attr(&root.attributes, "error.type"),
            Some("Cancelled".into()),
            "{name}"
        );
        assert!(
            matches!(root.status, Status::Error { .. }),
            "{name}: {:?}",
            root.status
        );
        let result = event(root, "tool_result");
        assert_eq!(
            attr(&result.attributes, "success"),
            Some(false.into()),
            "{name}"
        );
        assert_eq!(
            attr(&result.attributes, "error"),
            Some("Cancelled".into()),
            "{name}"
        );
    }
    assert_eq!(out.count_of("Sleep"), 1, "{:?}", out.durations);
    assert_eq!(out.count_of("Edit"), 1, "{:?}", out.durations);
}

/// A runtime shutting down drops the calls it still runs, on a thread where the call's
/// subscriber need not be the default: the call still reports to its own.
#[test]
fn a_call_dropped_by_a_runtime_shutting_down_is_exported_as_cancelled() {
    let (exporters, subscriber) = Exporters::new();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tracing::subscriber::with_default(subscriber, || {
        runtime.block_on(async {
            let log = Arc::default();
            let ctx = common::ctx(&log).child();
            tokio::spawn(async move {
                Pipeline::allow_all()
                    .run_tool_use(
                        &ToolUse::new("toolu_s", "Edit", json!({"ms": 60_000})),
                        ctx,
                        ProgressSender::none(),
                    )
                    .await
            });
            tokio::time::sleep(Duration::from_millis(20)).await;
        });
    });
    // No subscriber is the default here.
    drop(runtime);
    let out = exporters.collect();
    let root = out.span("execute_tool Edit");
    assert_eq!(
        attr(&root.attributes, "error.type"),
        Some("Cancelled".into())
    );
    let result = event(root, "tool_result");
    assert_eq!(attr(&result.attributes, "success"), Some(false.into()));
    assert_eq!(out.count_of("Edit"), 1, "{:?}", out.durations);
}

/// Calls the executor runs belong to the trace of whoever runs it: the span current where
/// a block is added, else the one current where the executor was created.
#[tokio::test(flavor = "current_thread")]
async fn executor_calls_are_children_of_the_callers_span() {
    let out = capture(|| async {
        let log = Arc::default();
        let agent = tracing::info_span!("invoke_agent");
        let (results, _) = tool_exec::run_tools(
            Arc::new(Pipeline::allow_all()),
            common::ctx(&log),
            vec![
                ToolUse::new("toolu_r", "Read", json!({"ms": 1})),
                ToolUse::new("toolu_e", "Edit", json!({})),
            ],
            ExecutorConfig::default(),
        )
        .instrument(agent.clone())
        .await;
        assert_eq!(results.len(), 2);
        // Streaming: created in `turn`; one block added from a task in no span, one from a
        // task in a `chat` span.
        let turn = tracing::info_span!("turn");
        let mut executor = turn.in_scope(|| {
            StreamingToolExecutor::new(
                Arc::new(Pipeline::allow_all()),
                common::ctx(&log),
                ExecutorConfig::default(),
            )
        });
        let handle = executor.handle();
        tokio::spawn(async move {
            handle.add_tool(ToolUse::new("toolu_g", "Grep", json!({})));
            let chat = tracing::info_span!("chat");
            chat.in_scope(|| handle.add_tool(ToolUse::new("toolu_b", "Bash", json!({}))));
            handle.finish();
        })
        .await
        .unwrap();
        let mut n = 0;
        while let Some(event) = executor.next().await {
            n += usize::from(matches!(event, ExecutorEvent::Result(_)));
        }
        assert_eq!(n, 2);
    })
    .await;
    for (call, parent) in [
        ("execute_tool Read", "invoke_agent"),
        ("execute_tool Edit", "invoke_agent"),
        ("execute_tool Grep", "turn"),
        ("execute_tool Bash", "chat"),
    ] {
        let (call, parent) = (out.span(call), out.span(parent));
        assert_eq!(
            call.parent_span_id,
            parent.span_context.span_id(),
            "{} should be a child of {}",
            call.name,
            parent.name
        );
        assert_eq!(call.span_context.trace_id(), parent.span_context.trace_id());
    }
}

/// Hooks whose PreToolUse panics with a long message.
struct PanickingHooks;

#[tool_core::async_trait]
impl tool_exec::Hooks for PanickingHooks {
    async fn pre_tool_use(
        &self,
        _call: tool_exec::HookCall<'_>,
        _ctx: &ToolUseContext,
    ) -> tool_exec::PreToolUseOutcome {
        panic!("secret input {}", "x".repeat(10_000))
    }
    async fn post_tool_use(
        &self,
        _call: tool_exec::HookCall<'_>,
        _output: &serde_json::Value,
        _ctx: &ToolUseContext,
    ) -> tool_exec::PostToolUseOutcome {
        tool_exec::PostToolUseOutcome::default()
    }
    async fn post_tool_use_failure(
        &self,
        _call: tool_exec::HookCall<'_>,
        _error: &str,
        _is_interrupt: bool,
        _ctx: &ToolUseContext,
    ) -> tool_exec::PostToolUseOutcome {
        tool_exec::PostToolUseOutcome::default()
    }
}

/// A panic's event is named by its fixed text, never by the panic's own (unbounded, and it
/// may carry input data); the panic text is a bounded attribute.
#[tokio::test(flavor = "current_thread")]
async fn a_panic_event_is_named_by_its_fixed_text() {
    let out = capture(|| async {
        let log = Arc::default();
        let ctx = common::ctx(&log);
        Pipeline::allow_all()
            .run_tool_use(
                &ToolUse::new("toolu_p", "Read", json!({"end": "panic"})),
                ctx.child(),
                ProgressSender::none(),
            )
            .await;
        Pipeline::new(
            Arc::new(tool_exec::AllowAll),
            Arc::new(tool_exec::DenyAsks),
            Arc::new(PanickingHooks),
        )
        .run_tool_use(
            &ToolUse::new("toolu_h", "Edit", json!({})),
            ctx.child(),
            ProgressSender::none(),
        )
        .await;
    })
    .await;
    for span in &out.spans {
        for e in span.events.iter() {
            assert!(
                !e.name.contains("panicked on purpose") && !e.name.contains("secret input"),
                "an event on `{}` is named by the panic's text: {:.100}",
                span.name,
                e.name
            );
        }
    }
    let tool = event(out.span("execution"), "tool panicked");
    let pipeline = event(out.span("execute_tool Edit"), "the pipeline panicked");
    for (e, text) in [(tool, "panicked on purpose"), (pipeline, "secret input")] {
        let message = attr(&e.attributes, "panic.message")
            .map(|v| v.as_str().into_owned())
            .unwrap_or_else(|| panic!("no panic.message on `{}`: {:?}", e.name, e.attributes));
        assert!(message.contains(text), "{message:.100}");
        assert!(message.len() <= 1100, "{} bytes", message.len());
    }
}

/// A call of a tool that does not exist, run by the executor, is traced and counted as one
/// the pipeline runs directly is, and keeps its text and its place.
#[tokio::test(flavor = "current_thread")]
async fn an_unknown_tool_run_by_the_executor_is_traced_and_counted() {
    let out = capture(|| async {
        let log = Arc::default();
        let calls = vec![
            ToolUse::new("toolu_1", "Read", json!({"ms": 5})),
            ToolUse::new("toolu_2", "Nope", json!({})),
            ToolUse::new("toolu_3", "Read", json!({})),
        ];
        let expected = CallOutcome::unknown_tool(&calls[1]).result;
        let (results, _) = tool_exec::run_tools(
            Arc::new(Pipeline::allow_all()),
            common::ctx(&log),
            calls,
            ExecutorConfig::default(),
        )
        .instrument(tracing::info_span!("invoke_agent"))
        .await;
        let ids: Vec<&str> = results.iter().map(|r| r.tool_use.id.as_str()).collect();
        assert_eq!(ids, ["toolu_1", "toolu_2", "toolu_3"]);
        assert_eq!(results[1].outcome.result, expected);
        assert_eq!(results[1].outcome.ending, tool_exec::Ending::UnknownTool);
    })
    .await;
    let root = out.span("execute_tool Nope");
    assert_eq!(
        attr(&root.attributes, "error.type"),
        Some("UnknownTool".into())
    );
    assert!(
        matches!(root.status, Status::Error { .. }),
        "{:?}",
        root.status
    );
    assert_eq!(
        root.parent_span_id,
        out.span("invoke_agent").span_context.span_id()
    );
    let result = event(root, "tool_result");
    assert_eq!(attr(&result.attributes, "success"), Some(false.into()));
    assert_eq!(
        attr(&result.attributes, "error"),
        Some("UnknownTool".into())
    );
    assert_eq!(out.count_of("unknown"), 1, "{:?}", out.durations);
    assert_eq!(out.count_of("Read"), 2, "{:?}", out.durations);
}

/// A tool with a configurable name, optionally from an MCP server.
struct Named {
    name: &'static str,
    mcp: Option<tool_core::McpToolInfo>,
    /// `mcp_info` panics (a tool implementation's bug).
    panics: bool,
}

#[tool_core::async_trait]
impl tool_core::Tool for Named {
    fn name(&self) -> &str {
        self.name
    }
    fn mcp_info(&self) -> Option<tool_core::McpToolInfo> {
        assert!(!self.panics, "mcp_info panicked on purpose");
        self.mcp.clone()
    }
    fn input_schema(&self) -> serde_json::Value {
        json!({"type": "object"})
    }
    fn description(&self) -> std::borrow::Cow<'_, str> {
        "named".into()
    }
    fn max_result_size(&self) -> tool_core::MaxResultSize {
        tool_core::MaxResultSize::Chars(100_000)
    }
    async fn call(
        &self,
        _input: serde_json::Value,
        _ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<tool_core::ToolResult, tool_core::ToolError> {
        Ok(tool_core::ToolResult::text("ok"))
    }
}

/// The `tool_result` event of each call, by call id, from pipelines with tool details on or
/// off (`None`: as the environment says).
async fn tool_results(
    details: Option<bool>,
    calls: &[(&str, serde_json::Value)],
) -> Vec<Vec<KeyValue>> {
    let out = capture(|| async {
        let log = Arc::default();
        let mut tools = common::tools(&log);
        tools.push(Arc::new(Named {
            name: "mcp__srv__echo",
            mcp: Some(tool_core::McpToolInfo {
                server_name: "srv".into(),
                tool_name: "echo".into(),
                source: Some("project".into()),
            }),
            panics: false,
        }));
        tools.push(Arc::new(Named {
            name: "Skill",
            mcp: None,
            panics: false,
        }));
        tools.push(Arc::new(Named {
            name: "Boom",
            mcp: None,
            panics: true,
        }));
        let ctx = ToolUseContext::new("/w").with_tools(tools);
        let mut pipeline = Pipeline::allow_all();
        if let Some(on) = details {
            pipeline = pipeline.with_tool_details(on);
        }
        for (i, (name, input)) in calls.iter().enumerate() {
            pipeline
                .run_tool_use(
                    &ToolUse::new(format!("toolu_{i}"), *name, input.clone()),
                    ctx.child(),
                    ProgressSender::none(),
                )
                .await;
        }
    })
    .await;
    (0..calls.len())
        .map(|i| {
            let id = format!("toolu_{i}");
            let root = out
                .spans
                .iter()
                .find(|s| {
                    s.name.starts_with("execute_tool ")
                        && attr(&s.attributes, "gen_ai.tool.call.id") == Some(id.clone().into())
                })
                .unwrap_or_else(|| panic!("no span for {id}"));
            event(root, "tool_result").attributes.clone()
        })
        .collect()
}

fn json_attr(attrs: &[KeyValue], key: &str) -> Option<serde_json::Value> {
    attr(attrs, key).map(|v| {
        let text = v.as_str().into_owned();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{key} is no JSON ({e}): {text}"))
    })
}

const DETAIL_KEYS: [&str; 3] = ["tool_parameters", "tool_input", "mcp_server_scope"];

/// Without `OTEL_LOG_TOOL_DETAILS`, no command, input, or MCP scope leaves the process.
#[tokio::test(flavor = "current_thread")]
async fn tool_details_stay_out_by_default() {
    let calls = [
        (
            "Bash",
            json!({"command": "git push --force", "timeout": 1000}),
        ),
        ("mcp__srv__echo", json!({"text": "private"})),
    ];
    let mut runs = vec![tool_results(Some(false), &calls).await];
    if std::env::var_os("OTEL_LOG_TOOL_DETAILS").is_none() {
        runs.push(tool_results(None, &calls).await);
    }
    for results in runs {
        for attrs in results {
            for key in DETAIL_KEYS {
                assert_eq!(attr(&attrs, key), None, "{key} in {attrs:?}");
            }
            assert!(
                !format!("{attrs:?}").contains("git push")
                    && !format!("{attrs:?}").contains("private"),
                "{attrs:?}"
            );
        }
    }
}

/// With tool details on, `tool_result` carries Claude Code's `tool_parameters` (per tool)
/// and `tool_input` as JSON strings, each capped, and an MCP tool's `mcp_server_scope`.
#[tokio::test(flavor = "current_thread")]
async fn tool_details_when_switched_on() {
    let long = format!("echo {}", "y".repeat(20_000));
    let results = tool_results(
        Some(true),
        &[
            (
                "Bash",
                json!({"command": "git status --short", "timeout": 1000, "description": "Show status"}),
            ),
            ("mcp__srv__echo", json!({"text": "hi"})),
            ("Skill", json!({"skill": "pdf", "args": "a.pdf"})),
            ("Read", json!({"ms": 1})),
            ("Bash", json!({"command": long})),
            ("Boom", json!({})),
        ],
    )
    .await;
    let params = json_attr(&results[0], "tool_parameters").expect("Bash tool_parameters");
    assert_eq!(params["full_command"], "git status --short");
    assert_eq!(params["bash_command"], "git");
    assert_eq!(params["timeout"], 1000);
    assert_eq!(params["description"], "Show status");
    assert_eq!(
        json_attr(&results[0], "tool_input"),
        Some(
            json!({"command": "git status --short", "timeout": 1000, "description": "Show status"})
        )
    );
    assert_eq!(attr(&results[0], "mcp_server_scope"), None);

    let params = json_attr(&results[1], "tool_parameters").expect("MCP tool_parameters");
    assert_eq!(params["mcp_server_name"], "srv");
    assert_eq!(params["mcp_tool_name"], "echo");
    assert_eq!(
        attr(&results[1], "mcp_server_scope"),
        Some("project".into())
    );
    assert_eq!(
        json_attr(&results[1], "tool_input"),
        Some(json!({"text": "hi"}))
    );

    let params = json_attr(&results[2], "tool_parameters").expect("Skill tool_parameters");
    assert_eq!(params["skill_name"], "pdf");

    // A tool with no parameters of its own has only its input.
    assert_eq!(attr(&results[3], "tool_parameters"), None);
    assert_eq!(json_attr(&results[3], "tool_input"), Some(json!({"ms": 1})));

    // A tool whose `mcp_info` panics costs its details, not the caller (the call itself
    // ran: its span has a tool_result).
    assert_eq!(attr(&results[5], "tool_input"), None);

    // Both are capped.
    for key in ["tool_parameters", "tool_input"] {
        let text = attr(&results[4], key)
            .map(|v| v.as_str().into_owned())
            .unwrap_or_else(|| panic!("no {key}"));
        assert!(text.len() <= 4096, "{key}: {} bytes", text.len());
        assert!(text.contains("echo yyy"), "{key}: {text:.100}");
    }
}
