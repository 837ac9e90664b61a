//! What an OpenTelemetry backend receives from one call, through the real bridge
//! (`tracing-opentelemetry`) into the SDK's in-memory exporters: the `execute_tool <name>`
//! span with its GenAI attributes and its child spans, and the `toolwright.tool.duration`
//! histogram with the tool's name as attribute.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use tool_core::ProgressSender;
use tool_exec::{Pipeline, ToolUse};
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

async fn exported(calls: &[(&str, serde_json::Value)]) -> Exported {
    let span_exporter = InMemorySpanExporter::default();
    let tracer_provider = SdkTracerProvider::builder()
        .with_simple_exporter(span_exporter.clone())
        .build();
    let metric_exporter = InMemoryMetricExporter::default();
    let meter_provider = SdkMeterProvider::builder()
        .with_periodic_exporter(metric_exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(tracer_provider.tracer("toolwright")))
        .with(tracing_opentelemetry::MetricsLayer::new(
            meter_provider.clone(),
        ));
    {
        let _guard = tracing::subscriber::set_default(subscriber);
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
    }
    tracer_provider.force_flush().unwrap();
    meter_provider.force_flush().unwrap();
    let mut durations = Vec::new();
    for rm in metric_exporter.get_finished_metrics().unwrap() {
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
        spans: span_exporter.get_finished_spans().unwrap(),
        durations,
    }
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
