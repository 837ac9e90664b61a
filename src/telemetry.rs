//! Telemetry export for the binary.
//!
//! The library crates only emit `tracing` spans and events (tool-exec: one `execute_tool
//! <name>` span per call with OpenTelemetry GenAI attributes, and the
//! `toolwright.tool.duration` histogram). Where they go is the binary's choice: with the
//! `otlp` Cargo feature and `OTEL_EXPORTER_OTLP_ENDPOINT` set, spans and metrics are exported
//! to that collector over OTLP/HTTP (protobuf), with the standard `OTEL_*` variables
//! (`OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`, ...) honoured by the SDK. Without the
//! variable nothing is installed and tracing costs next to nothing.
//!
//! Only `INFO` and above is exported: the spans and the decision/result events. `DEBUG`
//! events (a hook's output, which can echo a tool's input) never leave the machine. Each
//! export gives up after `OTEL_EXPORTER_OTLP_TIMEOUT` (default here 3 s, not the SDK's 10 s),
//! and the final flush after 2 s, so a collector that drops traffic cannot hold up exit.

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

/// Installs the OTLP exporters when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (and this build has
/// the `otlp` feature; otherwise says so on stderr once).
pub fn init() -> Telemetry {
    let endpoint = std::env::var(ENDPOINT)
        .ok()
        .filter(|v| !v.trim().is_empty());
    #[cfg(feature = "otlp")]
    {
        Telemetry {
            _providers: endpoint.and_then(|_| match otlp::install() {
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
        if endpoint.is_some() {
            eoutln!(
                "toolwright: {ENDPOINT} is set, but this build has no OTLP exporter \
                 (build with `--features otlp`); telemetry is not exported"
            );
        }
        Telemetry {}
    }
}

#[cfg(feature = "otlp")]
mod otlp {
    use std::time::Duration;

    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_otlp::{MetricExporter, SpanExporter, WithExportConfig as _};
    use opentelemetry_sdk::Resource;
    use opentelemetry_sdk::metrics::SdkMeterProvider;
    use opentelemetry_sdk::trace::SdkTracerProvider;
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::filter::LevelFilter;
    use tracing_subscriber::layer::SubscriberExt as _;

    /// How long one export may take when `OTEL_EXPORTER_OTLP_TIMEOUT` is not set.
    const EXPORT_TIMEOUT: Duration = Duration::from_secs(3);
    /// How long the final flush of spans may take.
    const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(2);

    /// The export timeout to set: ours, unless the user chose one.
    fn export_timeout() -> Option<Duration> {
        std::env::var_os("OTEL_EXPORTER_OTLP_TIMEOUT")
            .is_none()
            .then_some(EXPORT_TIMEOUT)
    }

    pub(super) struct Providers {
        tracer: SdkTracerProvider,
        meter: SdkMeterProvider,
    }

    impl Drop for Providers {
        fn drop(&mut self) {
            // Flushes what is buffered; a collector that is gone is reported, not fatal.
            if let Err(e) = self.tracer.shutdown_with_timeout(SHUTDOWN_TIMEOUT) {
                eoutln!("toolwright: exporting the last spans failed: {e}");
            }
            if let Err(e) = self.meter.shutdown() {
                eoutln!("toolwright: exporting the last metrics failed: {e}");
            }
        }
    }

    fn resource() -> Resource {
        let builder = Resource::builder();
        if std::env::var_os("OTEL_SERVICE_NAME").is_some() {
            builder.build()
        } else {
            builder.with_service_name("toolwright").build()
        }
    }

    pub(super) fn install() -> Result<Providers, String> {
        // reqwest is built without a default TLS provider (as everywhere in Toolwright).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut spans = SpanExporter::builder().with_http();
        let mut metrics = MetricExporter::builder().with_http();
        if let Some(timeout) = export_timeout() {
            spans = spans.with_timeout(timeout);
            metrics = metrics.with_timeout(timeout);
        }
        let spans = spans
            .build()
            .map_err(|e| format!("cannot build the OTLP span exporter: {e}"))?;
        let metrics = metrics
            .build()
            .map_err(|e| format!("cannot build the OTLP metric exporter: {e}"))?;
        let tracer = SdkTracerProvider::builder()
            .with_resource(resource())
            .with_batch_exporter(spans)
            .build();
        let meter = SdkMeterProvider::builder()
            .with_resource(resource())
            .with_periodic_exporter(metrics)
            .build();
        let subscriber = tracing_subscriber::registry()
            .with(
                tracing_opentelemetry::layer()
                    .with_tracer(tracer.tracer("toolwright"))
                    .with_filter(LevelFilter::INFO),
            )
            .with(tracing_opentelemetry::MetricsLayer::new(meter.clone()));
        tracing::subscriber::set_global_default(subscriber)
            .map_err(|e| format!("a tracing subscriber is already installed: {e}"))?;
        Ok(Providers { tracer, meter })
    }
}
