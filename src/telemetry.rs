//! Telemetry export for the binary.
//!
//! The library crates only emit `tracing` spans and events (tool-exec: one `execute_tool
//! <name>` span per call with OpenTelemetry GenAI attributes, and the
//! `toolwright.tool.duration` histogram). Where they go is the binary's choice: with the
//! `otlp` Cargo feature and an OTLP endpoint set, spans and metrics are exported to that
//! collector over OTLP/HTTP (protobuf). The standard variables decide what is exported
//! ([`ExportPlan`]): `OTEL_EXPORTER_OTLP_ENDPOINT` (both signals) or
//! `OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT` (that signal only), `OTEL_SDK_DISABLED`,
//! `OTEL_{TRACES,METRICS}_EXPORTER=none`; the SDK reads the rest
//! (`OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, ...). A
//! protocol other than `http/protobuf` (`grpc`, `http/json`) is not built in: that is said on
//! stderr, not silently replaced. Without an endpoint nothing is installed and tracing costs
//! next to nothing.
//!
//! Only `INFO` and above is exported: the spans and the decision/result events. `DEBUG`
//! events (a hook's output, which can echo a tool's input) never leave the machine. Each
//! export gives up after `OTEL_EXPORTER_OTLP_[SIGNAL_]TIMEOUT` (default here 3 s, not the
//! SDK's 10 s), and the final flush of both signals after 2 s together, so a collector that
//! drops traffic cannot hold up exit. An export that failed is reported once at exit, and so
//! is the number of spans that never reached the collector (the SDK drops what does not fit
//! its queue without a word).

/// Keeps the exporters alive; dropping it flushes and shuts them down. Create it outside the
/// async runtime and drop it after the runtime ends (the exporter's HTTP client blocks).
#[must_use = "dropping the guard shuts telemetry down"]
pub struct Telemetry {
    /// Held for its `Drop` (flush and shut down).
    #[cfg(feature = "otlp")]
    _providers: Option<otlp::Providers>,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry").finish_non_exhaustive()
    }
}

const ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";

/// The protocol built in.
const HTTP_PROTOBUF: &str = "http/protobuf";

/// What the standard `OTEL_*` variables ask to export, and what about them is said on
/// stderr.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ExportPlan {
    /// Export spans.
    pub traces: bool,
    /// Export the metrics.
    pub metrics: bool,
    /// Notices for stderr: settings this build cannot follow.
    pub notices: Vec<String>,
}

impl ExportPlan {
    /// The plan the variables `env` gives (`env(name)`: its value, if set).
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> Self {
        let set = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let mut plan = Self::default();
        if set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return plan;
        }
        let generic = set(ENDPOINT).is_some();
        for (signal, exporter_var, on) in [
            ("TRACES", "OTEL_TRACES_EXPORTER", &mut plan.traces),
            ("METRICS", "OTEL_METRICS_EXPORTER", &mut plan.metrics),
        ] {
            let endpoint =
                generic || set(&format!("OTEL_EXPORTER_OTLP_{signal}_ENDPOINT")).is_some();
            if !endpoint {
                continue;
            }
            *on = match set(exporter_var).map(|v| v.trim().to_ascii_lowercase()) {
                None => true,
                Some(v) if v == "otlp" => true,
                Some(v) if v == "none" => false,
                Some(v) => {
                    plan.notices.push(format!(
                        "{exporter_var}={v} is not supported (only otlp and none); otlp is used"
                    ));
                    true
                }
            };
            if !*on {
                continue;
            }
            let protocol_var = format!("OTEL_EXPORTER_OTLP_{signal}_PROTOCOL");
            let protocol = set(&protocol_var).map(|v| (protocol_var, v)).or_else(|| {
                set("OTEL_EXPORTER_OTLP_PROTOCOL")
                    .map(|v| ("OTEL_EXPORTER_OTLP_PROTOCOL".into(), v))
            });
            if let Some((var, value)) = protocol
                && !value.trim().eq_ignore_ascii_case(HTTP_PROTOBUF)
            {
                let notice = format!(
                    "{var}={} is not supported: this build exports OTLP over HTTP with \
                     protobuf ({HTTP_PROTOBUF}), so point the endpoint at the collector's \
                     HTTP port (usually 4318)",
                    value.trim()
                );
                if !plan.notices.contains(&notice) {
                    plan.notices.push(notice);
                }
            }
        }
        plan
    }

    /// Whether anything is exported.
    pub fn any(&self) -> bool {
        self.traces || self.metrics
    }
}

/// Installs the OTLP exporters the variables ask for (see [`ExportPlan`]) when this build
/// has the `otlp` feature; otherwise says so on stderr once when an endpoint is set.
pub fn init() -> Telemetry {
    let plan = ExportPlan::from_env(|name| std::env::var(name).ok());
    #[cfg(feature = "otlp")]
    {
        for notice in &plan.notices {
            eoutln!("toolwright: telemetry: {notice}");
        }
        Telemetry {
            _providers: plan
                .any()
                .then(|| otlp::install(&plan))
                .and_then(|p| match p {
                    Ok(p) => Some(p),
                    Err(e) => {
                        eoutln!("toolwright: telemetry export is off: {e}");
                        None
                    }
                }),
        }
    }
    #[cfg(not(feature = "otlp"))]
    {
        if plan.any() {
            eoutln!(
                "toolwright: an OTLP endpoint ({ENDPOINT}) is set, but this build has no OTLP \
                 exporter (build with `--features otlp`); telemetry is not exported"
            );
        }
        Telemetry {}
    }
}

#[cfg(feature = "otlp")]
mod otlp {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex, PoisonError};
    use std::time::Duration;

    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_otlp::{MetricExporter, SpanExporter, WithExportConfig as _};
    use opentelemetry_sdk::Resource;
    use opentelemetry_sdk::error::OTelSdkResult;
    use opentelemetry_sdk::metrics::SdkMeterProvider;
    use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData};
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::filter::LevelFilter;
    use tracing_subscriber::layer::SubscriberExt as _;

    use super::ExportPlan;

    /// How long one export may take when no `OTEL_EXPORTER_OTLP_[SIGNAL_]TIMEOUT` is set.
    const EXPORT_TIMEOUT: Duration = Duration::from_secs(3);
    /// How long the final flush of both signals may take, together.
    const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(2);

    /// The export timeout to set for `signal` (`TRACES`, `METRICS`): ours, unless the user
    /// chose one (the generic variable or the signal's own; a timeout set in code would
    /// override either).
    fn export_timeout(signal: &str) -> Option<Duration> {
        let chosen = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        (!chosen("OTEL_EXPORTER_OTLP_TIMEOUT")
            && !chosen(&format!("OTEL_EXPORTER_OTLP_{signal}_TIMEOUT")))
        .then_some(EXPORT_TIMEOUT)
    }

    /// The first export error, kept to be reported at exit (an export runs on the SDK's
    /// thread, where nothing can be said without interleaving with the output).
    type FirstError = Arc<Mutex<Option<String>>>;

    /// The export queue's size when `OTEL_BSP_MAX_QUEUE_SIZE` does not set one: eight times
    /// the SDK's 2,048, so that a turn of many calls on a collector that takes a second per
    /// batch loses nothing (a span is a few hundred bytes).
    const QUEUE_SIZE: usize = 16_384;

    /// Spans finished and spans exported, to tell at exit how many never reached the
    /// collector (the SDK drops what does not fit its queue, and says nothing).
    #[derive(Debug, Default)]
    struct SpanCounts {
        ended: AtomicUsize,
        exported: AtomicUsize,
    }

    /// A span exporter that remembers its first failure and counts what it exported.
    #[derive(Debug)]
    struct Reporting<E> {
        inner: E,
        first_error: FirstError,
        counts: Arc<SpanCounts>,
    }

    /// The batch processor, counting the spans handed to it.
    #[derive(Debug)]
    struct Counting<P> {
        inner: P,
        counts: Arc<SpanCounts>,
    }

    impl<P: opentelemetry_sdk::trace::SpanProcessor> opentelemetry_sdk::trace::SpanProcessor
        for Counting<P>
    {
        fn on_start(&self, span: &mut opentelemetry_sdk::trace::Span, cx: &opentelemetry::Context) {
            self.inner.on_start(span, cx);
        }

        fn on_end(&self, span: SpanData) {
            self.counts.ended.fetch_add(1, Ordering::Relaxed);
            self.inner.on_end(span);
        }

        fn force_flush(&self) -> OTelSdkResult {
            self.inner.force_flush()
        }

        fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
            self.inner.shutdown_with_timeout(timeout)
        }

        fn set_resource(&mut self, resource: &Resource) {
            self.inner.set_resource(resource);
        }
    }

    impl<E: opentelemetry_sdk::trace::SpanExporter> opentelemetry_sdk::trace::SpanExporter
        for Reporting<E>
    {
        async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
            let size = batch.len();
            let result = self.inner.export(batch).await;
            if result.is_ok() {
                self.counts.exported.fetch_add(size, Ordering::Relaxed);
            }
            if let Err(e) = &result {
                self.first_error
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get_or_insert_with(|| e.to_string());
            }
            result
        }

        fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
            self.inner.shutdown_with_timeout(timeout)
        }

        fn force_flush(&self) -> OTelSdkResult {
            self.inner.force_flush()
        }

        fn set_resource(&mut self, resource: &Resource) {
            self.inner.set_resource(resource);
        }
    }

    pub(super) struct Providers {
        tracer: Option<SdkTracerProvider>,
        meter: Option<SdkMeterProvider>,
        span_errors: FirstError,
        span_counts: Arc<SpanCounts>,
    }

    impl Drop for Providers {
        fn drop(&mut self) {
            // Flushes what is buffered, both signals on one thread within one deadline (the
            // meter's shutdown takes no timeout of its own); a collector that is gone is
            // reported, not fatal.
            let tracer = self.tracer.take();
            let meter = self.meter.take();
            let (done, finished) = std::sync::mpsc::channel();
            let flushing = std::thread::Builder::new()
                .name("toolwright-otlp-flush".into())
                .spawn(move || {
                    let mut problems = Vec::new();
                    if let Some(tracer) = tracer
                        && let Err(e) = tracer.shutdown_with_timeout(SHUTDOWN_TIMEOUT)
                    {
                        problems.push(format!("exporting the last spans failed: {e}"));
                    }
                    if let Some(meter) = meter
                        && let Err(e) = meter.shutdown()
                    {
                        problems.push(format!("exporting the last metrics failed: {e}"));
                    }
                    let _ = done.send(problems);
                });
            if flushing.is_ok() {
                match finished.recv_timeout(SHUTDOWN_TIMEOUT + Duration::from_millis(500)) {
                    Ok(problems) => {
                        for problem in problems {
                            eoutln!("toolwright: {problem}");
                        }
                    }
                    Err(_) => eoutln!(
                        "toolwright: the telemetry collector did not take the last spans and \
                         metrics within {} s; they are dropped",
                        SHUTDOWN_TIMEOUT.as_secs()
                    ),
                }
            }
            if let Some(e) = self
                .span_errors
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take()
            {
                eoutln!("toolwright: exporting spans failed: {e}");
            }
            let ended = self.span_counts.ended.load(Ordering::Relaxed);
            let exported = self.span_counts.exported.load(Ordering::Relaxed);
            if exported < ended {
                eoutln!(
                    "toolwright: {} of {ended} spans did not reach the telemetry collector (it \
                     failed, or took them slower than they came and the export queue was \
                     full; OTEL_BSP_MAX_QUEUE_SIZE sets its size)",
                    ended - exported
                );
            }
        }
    }

    /// The resource: what the SDK reads from `OTEL_SERVICE_NAME` and
    /// `OTEL_RESOURCE_ATTRIBUTES`, with `toolwright` as the service name when neither names
    /// one.
    fn resource() -> Resource {
        let detected = Resource::builder().build();
        let named = detected
            .get(&opentelemetry::Key::from_static_str("service.name"))
            .is_some_and(|name| !name.as_str().starts_with("unknown_service"));
        if named {
            detected
        } else {
            Resource::builder().with_service_name("toolwright").build()
        }
    }

    pub(super) fn install(plan: &ExportPlan) -> Result<Providers, String> {
        // reqwest is built without a default TLS provider (as everywhere in Toolwright).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let span_errors = FirstError::default();
        let span_counts = Arc::<SpanCounts>::default();
        let tracer = if plan.traces {
            let mut spans = SpanExporter::builder().with_http();
            if let Some(timeout) = export_timeout("TRACES") {
                spans = spans.with_timeout(timeout);
            }
            let spans = spans
                .build()
                .map_err(|e| format!("cannot build the OTLP span exporter: {e}"))?;
            let mut config = opentelemetry_sdk::trace::BatchConfigBuilder::default();
            if std::env::var_os("OTEL_BSP_MAX_QUEUE_SIZE").is_none_or(|v| v.is_empty()) {
                config = config.with_max_queue_size(QUEUE_SIZE);
            }
            let batches = opentelemetry_sdk::trace::BatchSpanProcessor::builder(Reporting {
                inner: spans,
                first_error: Arc::clone(&span_errors),
                counts: Arc::clone(&span_counts),
            })
            .with_batch_config(config.build())
            .build();
            Some(
                SdkTracerProvider::builder()
                    .with_resource(resource())
                    .with_span_processor(Counting {
                        inner: batches,
                        counts: Arc::clone(&span_counts),
                    })
                    .build(),
            )
        } else {
            None
        };
        let meter = if plan.metrics {
            let mut metrics = MetricExporter::builder().with_http();
            if let Some(timeout) = export_timeout("METRICS") {
                metrics = metrics.with_timeout(timeout);
            }
            let metrics = metrics
                .build()
                .map_err(|e| format!("cannot build the OTLP metric exporter: {e}"))?;
            Some(
                SdkMeterProvider::builder()
                    .with_resource(resource())
                    .with_periodic_exporter(metrics)
                    .build(),
            )
        } else {
            None
        };
        let subscriber = tracing_subscriber::registry()
            .with(tracer.as_ref().map(|tracer| {
                tracing_opentelemetry::layer()
                    .with_tracer(tracer.tracer("toolwright"))
                    .with_filter(LevelFilter::INFO)
            }))
            .with(
                meter
                    .as_ref()
                    .map(|meter| tracing_opentelemetry::MetricsLayer::new(meter.clone())),
            );
        tracing::subscriber::set_global_default(subscriber)
            .map_err(|e| format!("a tracing subscriber is already installed: {e}"))?;
        Ok(Providers {
            tracer,
            meter,
            span_errors,
            span_counts,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(vars: &[(&str, &str)]) -> ExportPlan {
        ExportPlan::from_env(|name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn the_standard_variables_choose_what_is_exported() {
        let url = "http://127.0.0.1:4318";
        assert!(!plan(&[]).any());
        assert!(!plan(&[(ENDPOINT, " ")]).any());
        let both = plan(&[(ENDPOINT, url)]);
        assert!(both.traces && both.metrics && both.notices.is_empty());
        // The SDK switch.
        assert!(!plan(&[(ENDPOINT, url), ("OTEL_SDK_DISABLED", "TRUE")]).any());
        assert!(plan(&[(ENDPOINT, url), ("OTEL_SDK_DISABLED", "false")]).traces);
        // A signal's own endpoint exports that signal only.
        let traces = plan(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", url)]);
        assert!(traces.traces && !traces.metrics);
        let metrics = plan(&[("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", url)]);
        assert!(!metrics.traces && metrics.metrics);
        // `none` turns a signal off; an exporter we lack is said.
        let no_traces = plan(&[(ENDPOINT, url), ("OTEL_TRACES_EXPORTER", "none")]);
        assert!(!no_traces.traces && no_traces.metrics);
        let console = plan(&[(ENDPOINT, url), ("OTEL_METRICS_EXPORTER", "console")]);
        assert!(console.metrics);
        assert!(console.notices[0].contains("OTEL_METRICS_EXPORTER=console"));
    }

    #[test]
    fn a_protocol_not_built_in_is_said_once() {
        let url = "http://127.0.0.1:4317";
        let grpc = plan(&[(ENDPOINT, url), ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]);
        assert_eq!(grpc.notices.len(), 1, "{:?}", grpc.notices);
        assert!(grpc.notices[0].contains("OTEL_EXPORTER_OTLP_PROTOCOL=grpc"));
        assert!(grpc.notices[0].contains("4318"));
        // The signal's own variable wins over the generic one.
        let own = plan(&[
            (ENDPOINT, url),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"),
        ]);
        assert_eq!(own.notices.len(), 1);
        let fine = plan(&[
            (ENDPOINT, url),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
        ]);
        assert!(fine.notices.is_empty());
        // The SDK reads the value without regard to case.
        let upper = plan(&[
            (ENDPOINT, url),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "HTTP/Protobuf"),
        ]);
        assert!(upper.notices.is_empty(), "{:?}", upper.notices);
        // A signal not exported says nothing about its protocol.
        let off = plan(&[
            (ENDPOINT, url),
            ("OTEL_TRACES_EXPORTER", "none"),
            ("OTEL_METRICS_EXPORTER", "none"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ]);
        assert!(!off.any() && off.notices.is_empty());
    }
}
