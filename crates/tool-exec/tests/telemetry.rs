//! The span tree and events of one call, captured with a recording `tracing` layer: an
//! `execute_tool <name>` span with OpenTelemetry GenAI attributes, child spans for hooks,
//! permission and execution, `tool_decision` and `tool_result` events, `error.type` on failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tool_core::ProgressSender;
use tool_exec::{Pipeline, ToolUse};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

#[derive(Debug, Default, Clone)]
struct SpanInfo {
    name: String,
    parent: Option<String>,
    fields: HashMap<String, String>,
}

#[derive(Default)]
struct Recorded {
    spans: HashMap<u64, SpanInfo>,
    events: Vec<(String, Option<String>, HashMap<String, String>)>,
}

struct Recorder(Arc<Mutex<Recorded>>);

struct Fields<'a>(&'a mut HashMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(
            field.name().to_owned(),
            format!("{value:?}").trim_matches('"').to_owned(),
        );
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut info = SpanInfo {
            name: attrs.metadata().name().to_owned(),
            ..Default::default()
        };
        attrs.record(&mut Fields(&mut info.fields));
        info.parent = ctx
            .span(id)
            .and_then(|s| s.parent())
            .map(|p| p.name().to_owned());
        self.0.lock().unwrap().spans.insert(id.into_u64(), info);
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        if let Some(info) = self.0.lock().unwrap().spans.get_mut(&id.into_u64()) {
            values.record(&mut Fields(&mut info.fields));
        }
    }
    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut fields = HashMap::new();
        event.record(&mut Fields(&mut fields));
        let parent = ctx.event_span(event).map(|s| s.name().to_owned());
        self.0
            .lock()
            .unwrap()
            .events
            .push((event.metadata().target().to_owned(), parent, fields));
    }
}

async fn traced(name: &str, input: serde_json::Value) -> Recorded {
    let recorded = Arc::new(Mutex::new(Recorded::default()));
    let subscriber = tracing_subscriber::registry().with(Recorder(Arc::clone(&recorded)));
    let _guard = tracing::subscriber::set_default(subscriber);
    let log = Arc::default();
    let ctx = common::ctx(&log);
    Pipeline::allow_all()
        .run_tool_use(
            &ToolUse::new("toolu_7", name, input),
            ctx.child(),
            ProgressSender::none(),
        )
        .await;
    std::mem::take(&mut *recorded.lock().unwrap())
}

#[tokio::test(flavor = "current_thread")]
async fn a_successful_call_has_the_span_tree_and_events() {
    let rec = traced("Read", json!({"ms": 1})).await;
    let root = rec
        .spans
        .values()
        .find(|s| s.name == "execute_tool")
        .expect("execute_tool span");
    assert_eq!(root.fields["otel.name"], "execute_tool Read");
    assert_eq!(root.fields["gen_ai.operation.name"], "execute_tool");
    assert_eq!(root.fields["gen_ai.tool.name"], "Read");
    assert_eq!(root.fields["gen_ai.tool.call.id"], "toolu_7");
    assert_eq!(root.fields["gen_ai.tool.type"], "function");
    assert!(!root.fields.contains_key("error.type"));
    assert!(!root.fields.contains_key("otel.status_code"));
    let children: Vec<&str> = rec
        .spans
        .values()
        .filter(|s| s.parent.as_deref() == Some("execute_tool"))
        .map(|s| s.name.as_str())
        .collect();
    for child in ["hooks", "permission", "execution"] {
        assert!(
            children.contains(&child),
            "{child} missing from {children:?}"
        );
    }
    let decision = rec
        .events
        .iter()
        .find(|e| e.0 == "toolwright::tool_decision")
        .expect("tool_decision");
    assert_eq!(decision.2["decision"], "accept");
    assert_eq!(decision.2["tool_name"], "Read");
    let result = rec
        .events
        .iter()
        .find(|e| e.0 == "toolwright::tool_result")
        .expect("tool_result");
    assert_eq!(result.1.as_deref(), Some("execute_tool"));
    assert_eq!(result.2["success"], "true");
    assert!(result.2.contains_key("duration_ms"));
}

#[tokio::test(flavor = "current_thread")]
async fn a_failed_call_records_the_error_class() {
    let rec = traced("Bash", json!({"end": "shell"})).await;
    let root = rec
        .spans
        .values()
        .find(|s| s.name == "execute_tool")
        .unwrap();
    assert_eq!(root.fields["error.type"], "ShellError");
    assert_eq!(root.fields["otel.status_code"], "ERROR");
    let result = rec
        .events
        .iter()
        .find(|e| e.0 == "toolwright::tool_result")
        .unwrap();
    assert_eq!(result.2["success"], "false");
    assert_eq!(result.2["error"], "ShellError");
    assert_eq!(result.2["use_id"], "toolu_7");
}

#[tokio::test(flavor = "current_thread")]
async fn every_kind_of_error_result_has_an_error_type() {
    for (tool, input, class) in [
        ("Nope", json!({}), "UnknownTool"),
        ("Read", json!({"ms": "soon"}), "InputValidationError"),
    ] {
        let rec = traced(tool, input).await;
        let root = rec
            .spans
            .values()
            .find(|s| s.name == "execute_tool")
            .unwrap();
        assert_eq!(root.fields["error.type"], class, "{tool}");
        assert_eq!(root.fields["otel.status_code"], "ERROR", "{tool}");
    }
}

/// A discarded executor starts none of its queued calls: they never ran, so nothing traces
/// a call for them (the running call that was cancelled is traced, as it did start).
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_discarded_executor_traces_no_call_it_never_started() {
    use futures::StreamExt as _;
    let recorded = Arc::new(Mutex::new(Recorded::default()));
    let subscriber = tracing_subscriber::registry().with(Recorder(Arc::clone(&recorded)));
    let _guard = tracing::subscriber::set_default(subscriber);
    let log = Arc::default();
    let mut exec = tool_exec::StreamingToolExecutor::new(
        Arc::new(Pipeline::allow_all()),
        common::ctx(&log),
        tool_exec::ExecutorConfig::default(),
    );
    exec.add_tool(ToolUse::new("edit", "Edit", json!({"ms": 100})));
    exec.add_tool(ToolUse::new("queued", "Edit", json!({"ms": 100})));
    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    exec.discard();
    assert!(exec.next().await.is_none());
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let rec = recorded.lock().unwrap();
    let traced: Vec<&str> = rec
        .spans
        .values()
        .filter(|s| s.name == "execute_tool")
        .map(|s| s.fields["gen_ai.tool.call.id"].as_str())
        .collect();
    assert_eq!(traced, ["edit"]);
}

/// `tool_result` reports what Claude Code's does: `duration_ms` is the tool's own time (not
/// the wait for the user, which `pipeline_duration_ms` includes), and the size is the
/// result the tool gave, not the preview a large result was cut to.
#[tokio::test(flavor = "current_thread")]
async fn tool_result_reports_the_calls_own_time_and_size() {
    struct AlwaysAsk;
    #[tool_core::async_trait]
    impl tool_exec::Permissions for AlwaysAsk {
        async fn decide(
            &self,
            _tool: &dyn tool_core::Tool,
            _input: &serde_json::Value,
            _ctx: &tool_core::ToolUseContext,
        ) -> tool_core::PermissionResult {
            tool_core::PermissionResult::ask("ok?")
        }
        async fn check_rule_based(
            &self,
            _tool: &dyn tool_core::Tool,
            _input: &serde_json::Value,
            _ctx: &tool_core::ToolUseContext,
        ) -> Option<tool_core::PermissionResult> {
            None
        }
    }
    /// Says yes after 300 ms.
    struct SlowYes;
    #[tool_core::async_trait]
    impl tool_exec::Prompter for SlowYes {
        async fn prompt(&self, _request: &tool_exec::PromptRequest) -> tool_exec::PromptAnswer {
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            tool_exec::PromptAnswer::AllowOnce {
                updated_input: None,
            }
        }
    }
    let recorded = Arc::new(Mutex::new(Recorded::default()));
    let subscriber = tracing_subscriber::registry().with(Recorder(Arc::clone(&recorded)));
    let _guard = tracing::subscriber::set_default(subscriber);
    let log = Arc::default();
    let pipeline = Pipeline::new(
        Arc::new(AlwaysAsk),
        Arc::new(SlowYes),
        Arc::new(tool_exec::NoHooks),
    );
    let out = pipeline
        .run_tool_use(
            &ToolUse::new("toolu_big", "Read", json!({"end": "big"})),
            common::ctx(&log).child(),
            ProgressSender::none(),
        )
        .await;
    assert!(
        out.result.content.text_bytes() < 60_000,
        "the result was cut"
    );
    let rec = recorded.lock().unwrap();
    let result = &rec
        .events
        .iter()
        .find(|e| e.0 == "toolwright::tool_result")
        .expect("tool_result")
        .2;
    let ms = |field: &str| result[field].parse::<u64>().unwrap();
    // The user's 300 ms are in the pipeline's time and not in the tool's: the pipeline ran
    // the prompt and then the call, so its time is at least both together, and whatever the
    // call took on a loaded machine, the difference covers the whole wait. (The product
    // measures with `std::time::Instant`, so tokio's paused clock cannot stand in here.)
    assert!(ms("pipeline_duration_ms") >= 300, "{result:?}");
    assert!(
        ms("pipeline_duration_ms").saturating_sub(ms("duration_ms")) >= 300,
        "the wait for the user counted as the tool's time: {result:?}"
    );
    assert_eq!(result["tool_result_size_bytes"], "60000");
}
