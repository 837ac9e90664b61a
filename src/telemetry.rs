//! Telemetry export for the binary.
//!
//! The library crates only emit `tracing` spans and events (tool-exec: one `execute_tool
//! <name>` span per call with OpenTelemetry GenAI attributes, Claude Code's `tool_decision`
//! and `tool_result` events, and the `toolwright.tool.duration` histogram). Where they go is
//! the binary's choice. As in Claude Code, nothing leaves the machine unless
//! `CLAUDE_CODE_ENABLE_TELEMETRY` is on (`1`, `true`, `yes`, `on`); then, with the `otlp`
//! Cargo feature, the standard variables decide what is exported to which collector over
//! OTLP/HTTP (protobuf) ([`ExportPlan`]):
//! - spans and metrics when `OTEL_EXPORTER_OTLP_ENDPOINT` (both) or
//!   `OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT` (that signal) is set, or
//!   `OTEL_{TRACES,METRICS}_EXPORTER=otlp` (the SDK's default endpoint, `localhost:4318`);
//! - the `tool_decision` and `tool_result` events as OTLP log records when
//!   `OTEL_LOGS_EXPORTER=otlp` (Claude Code's default is no logs exporter), to
//!   `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT` or the generic endpoint's `/v1/logs`; each named as
//!   Claude Code names it (body and event name `claude_code.tool_result`, attribute
//!   `event.name` = `tool_result`, with `event.timestamp`, `event.sequence` and the event's
//!   fields as strings);
//! - `OTEL_SDK_DISABLED=true` and `OTEL_{TRACES,METRICS,LOGS}_EXPORTER=none` turn export off.
//!
//! The headers are those of `OTEL_EXPORTER_OTLP_HEADERS` and of the signal's own
//! `OTEL_EXPORTER_OTLP_{TRACES,METRICS,LOGS}_HEADERS` together, the signal's value winning per
//! key, as Claude Code merges them. Log records and spans are exported every
//! `OTEL_LOGS_EXPORT_INTERVAL` and `OTEL_TRACES_EXPORT_INTERVAL` ms, Claude Code's variables (5
//! s unless they say otherwise, as there; [`SignalPlan::interval`]); the SDK reads the other
//! batch settings. The resource is read here as the OpenTelemetry specification has it:
//! `OTEL_RESOURCE_ATTRIBUTES` with its values %-decoded, `OTEL_SERVICE_NAME` over a
//! `service.name` among them, `toolwright` when neither names the service. The TLS files of
//! `OTEL_EXPORTER_OTLP_[SIGNAL_]CERTIFICATE` (CA certificates to trust besides the system's)
//! and `_CLIENT_CERTIFICATE` / `_CLIENT_KEY` (mutual TLS), the signal's own variable over the
//! generic one, are read and checked here ([`Tls`]). What this build cannot follow is said on
//! stderr once, naming the variable and what is done instead, never silently replaced: a
//! protocol other than `http/protobuf` (`grpc`, `http/json`), an exporter other than `otlp` and
//! `none`, a header entry the SDK would drop (`KEY: VALUE` for `KEY=VALUE`, a bad name, a value
//! with a line break; the key is named, a value never shown), a resource attribute entry
//! without `=` or key (named by its place), a compression other than `gzip` and `none`, a
//! timeout or an export interval that is not a number of milliseconds, an endpoint that is not
//! an `http`/`https` URL or a TLS file that cannot be used (that signal is not exported). An
//! endpoint is shown with its user information, query and fragment redacted
//! (`http://redacted@host/v1/traces?redacted`, [`tool_core::redact_url`]), wherever it is
//! shown.
//!
//! Only Toolwright's own targets are exported (never the MCP library's events and spans), and
//! of them only `INFO` and above: the spans and the decision/result events. `DEBUG` events (a
//! hook's output, which can echo a tool's input, and what `serve` prints for its user) never
//! leave the machine. The histogram is in seconds, with second-scale buckets (0.005 s to
//! 81.92 s, doubling) and only its documented attributes; the event that feeds it is no span
//! event.
//!
//! Each export gives up after `OTEL_EXPORTER_OTLP_[SIGNAL_]TIMEOUT` (default here 3 s, not the
//! SDK's 10 s), retries included (a refused connection, a timeout, 429, 502, 503, 504; at most
//! three times, from 100 ms doubling, `Retry-After` heeded); the final flush of all signals runs
//! side by side within 2 s together and does not retry a refused connection, so a collector
//! that is down or drops traffic cannot hold up exit. An export that failed is reported once
//! at exit with its cause in plain words (`connection refused`, `timed out after 3 s`, `HTTP
//! status 503 Service Unavailable`), and so is the number of spans that never reached the
//! collector (the SDK drops what does not fit its queue without a word).

use std::time::Duration;

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

/// Claude Code's switch for all of its telemetry.
const ENABLE: &str = "CLAUDE_CODE_ENABLE_TELEMETRY";
const ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
const HEADERS: &str = "OTEL_EXPORTER_OTLP_HEADERS";
const COMPRESSION: &str = "OTEL_EXPORTER_OTLP_COMPRESSION";
const TIMEOUT: &str = "OTEL_EXPORTER_OTLP_TIMEOUT";
const PROTOCOL: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";
const RESOURCE_ATTRIBUTES: &str = "OTEL_RESOURCE_ATTRIBUTES";
#[cfg(feature = "otlp")]
const SERVICE_NAME: &str = "OTEL_SERVICE_NAME";

/// The SDK's endpoint when no variable names one.
const DEFAULT_ENDPOINT: &str = "http://localhost:4318";

/// The protocol built in.
const HTTP_PROTOBUF: &str = "http/protobuf";

/// How long one export may take when no `OTEL_EXPORTER_OTLP_[SIGNAL_]TIMEOUT` is set.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(3);

/// Claude Code's interval between exports of log records and of spans.
const EXPORT_INTERVAL: Duration = Duration::from_secs(5);

/// One of the three OpenTelemetry signals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Spans.
    Traces,
    /// The duration histogram.
    Metrics,
    /// The `tool_decision` and `tool_result` log records.
    Logs,
}

impl Signal {
    const ALL: [Self; 3] = [Self::Traces, Self::Metrics, Self::Logs];

    /// The signal's part of the `OTEL_EXPORTER_OTLP_*` variables' names.
    fn var_part(self) -> &'static str {
        match self {
            Self::Traces => "TRACES",
            Self::Metrics => "METRICS",
            Self::Logs => "LOGS",
        }
    }

    /// The variable that chooses the signal's exporter.
    fn exporter_var(self) -> &'static str {
        match self {
            Self::Traces => "OTEL_TRACES_EXPORTER",
            Self::Metrics => "OTEL_METRICS_EXPORTER",
            Self::Logs => "OTEL_LOGS_EXPORTER",
        }
    }

    /// The path the generic endpoint gets for this signal.
    fn path(self) -> &'static str {
        match self {
            Self::Traces => "/v1/traces",
            Self::Metrics => "/v1/metrics",
            Self::Logs => "/v1/logs",
        }
    }

    /// What the signal carries, in a sentence.
    pub fn what(self) -> &'static str {
        match self {
            Self::Traces => "spans",
            Self::Metrics => "metrics",
            Self::Logs => "log records",
        }
    }

    fn own_var(self, suffix: &str) -> String {
        format!("OTEL_EXPORTER_OTLP_{}_{suffix}", self.var_part())
    }
}

/// How one signal is exported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignalPlan {
    /// The signal.
    pub signal: Signal,
    /// The URL its exports are posted to (user information included: mask it to show it).
    pub endpoint: String,
    /// How long one export may take, retries included.
    pub timeout: Duration,
    /// Whether requests are gzip-compressed.
    pub gzip: bool,
    /// How often the batch processor exports, when the plan sets it (Claude Code's
    /// `OTEL_{TRACES,LOGS}_EXPORT_INTERVAL`, or its default for logs); `None` leaves it to
    /// the SDK and its variables (`OTEL_BSP_SCHEDULE_DELAY`, `OTEL_BLRP_SCHEDULE_DELAY`,
    /// `OTEL_METRIC_EXPORT_INTERVAL`).
    pub interval: Option<Duration>,
    /// The CA certificates and the client certificate its requests use.
    pub tls: Tls,
}

/// The TLS files of one signal, read and checked (PEM text).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Tls {
    /// Certificates to trust besides the system's (`OTEL_EXPORTER_OTLP_[SIGNAL_]CERTIFICATE`,
    /// every certificate in the file).
    pub roots: Option<Vec<u8>>,
    /// The client certificate followed by its private key
    /// (`OTEL_EXPORTER_OTLP_[SIGNAL_]CLIENT_CERTIFICATE` and `_CLIENT_KEY`).
    pub identity: Option<Vec<u8>>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("Tls")
            .field("roots", &self.roots.is_some())
            .field("identity", &self.identity.is_some())
            .finish()
    }
}

/// What the standard `OTEL_*` variables ask to export, and what about them is said on
/// stderr.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ExportPlan {
    /// The signals exported.
    pub signals: Vec<SignalPlan>,
    /// Notices for stderr: settings this build cannot follow, each once.
    pub notices: Vec<String>,
}

impl ExportPlan {
    /// The plan the variables `env` gives (`env(name)`: its value, if set).
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> Self {
        let set = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let mut plan = Self::default();
        if !env(ENABLE).is_some_and(|v| tool_core::env_truthy(&v)) {
            return plan;
        }
        if set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return plan;
        }
        // An endpoint that cannot be one, or a TLS file that cannot be used, with the signals
        // it costs: said once.
        let mut refused: Vec<(String, Vec<&str>)> = Vec::new();
        let mut refuse =
            |said: String, signal: Signal| match refused.iter_mut().find(|(s, _)| *s == said) {
                Some((_, whats)) => whats.push(signal.what()),
                None => refused.push((said, vec![signal.what()])),
            };
        for signal in Signal::ALL {
            let own_endpoint = signal.own_var("ENDPOINT");
            let endpoint = set(&own_endpoint)
                .map(|value| (own_endpoint.clone(), value))
                .or_else(|| set(ENDPOINT).map(|value| (ENDPOINT.to_owned(), value)));
            if !plan.exported(signal, endpoint.is_some(), &set) {
                continue;
            }
            let (endpoint_var, url) = match endpoint {
                Some((var, value)) if var == ENDPOINT => (var, join(&value, signal.path())),
                Some((var, value)) => (var, value.trim().to_owned()),
                None => (
                    "the default endpoint".to_owned(),
                    join(DEFAULT_ENDPOINT, signal.path()),
                ),
            };
            if let Err(why) = check_endpoint(&url) {
                let said = format!(
                    "{endpoint_var}={} {why}",
                    tool_core::escape_hidden(&tool_core::redact_url(
                        &env(&endpoint_var).unwrap_or_else(|| url.clone())
                    )),
                );
                refuse(said, signal);
                continue;
            }
            // A collector that asks for a client certificate or has a private CA gets
            // nothing without them: a file that cannot be used costs the signal, never a
            // silent export without it.
            let tls = match tls_files(signal, &set) {
                Ok(tls) => tls,
                Err(said) => {
                    refuse(said, signal);
                    continue;
                }
            };
            plan.check_protocol(signal, &set);
            plan.check_headers(signal, &env);
            let gzip = plan.compression(signal, &set);
            let timeout = plan.timeout(signal, &set);
            let interval = plan.interval(signal, &set);
            plan.signals.push(SignalPlan {
                signal,
                endpoint: url,
                timeout,
                gzip,
                interval,
                tls,
            });
        }
        for (said, whats) in refused {
            plan.notice(format!("{said}; {} are not exported", list(&whats)));
        }
        if plan.any()
            && let Some(value) = set(RESOURCE_ATTRIBUTES)
        {
            let (_, problems) = resource_attributes(&value);
            if !problems.is_empty() {
                plan.notice(format!(
                    "{RESOURCE_ATTRIBUTES}: {}; {} left out (the form is KEY=VALUE, entries \
                     separated by `,`, a `,` in a value written %2C)",
                    problems.join("; "),
                    if problems.len() == 1 {
                        "that entry is"
                    } else {
                        "those entries are"
                    }
                ));
            }
        }
        plan
    }

    /// Whether anything is exported.
    pub fn any(&self) -> bool {
        !self.signals.is_empty()
    }

    /// Whether `signal` is exported.
    #[cfg(test)]
    pub fn exports(&self, signal: Signal) -> bool {
        self.signals.iter().any(|s| s.signal == signal)
    }

    fn notice(&mut self, notice: String) {
        if !self.notices.contains(&notice) {
            self.notices.push(notice);
        }
    }

    /// Whether the exporter variable (Claude Code reads a comma-separated list) and the
    /// endpoint ask for `signal`.
    fn exported(
        &mut self,
        signal: Signal,
        has_endpoint: bool,
        set: &impl Fn(&str) -> Option<String>,
    ) -> bool {
        let var = signal.exporter_var();
        let values: Vec<String> = set(var)
            .unwrap_or_default()
            .split(',')
            .map(|v| v.trim().to_ascii_lowercase())
            .filter(|v| !v.is_empty())
            .collect();
        let otlp = values.iter().any(|v| v == "otlp");
        // Unset, traces and metrics go where an endpoint is (the SDKs' default); logs are
        // Claude Code's events, exported only when asked for, as there. A list without
        // `otlp` (`console`, which this build cannot do) sends nothing anywhere else.
        let on = otlp || (values.is_empty() && has_endpoint && signal != Signal::Logs);
        for value in values.iter().filter(|v| *v != "otlp" && *v != "none") {
            let instead = if on {
                "otlp is used".to_owned()
            } else {
                format!("{} are not exported", signal.what())
            };
            self.notice(format!(
                "{var}={} is not supported (only otlp and none); {instead}",
                tool_core::escape_hidden(value)
            ));
        }
        on
    }

    fn check_protocol(&mut self, signal: Signal, set: &impl Fn(&str) -> Option<String>) {
        let own = signal.own_var("PROTOCOL");
        let protocol = set(&own)
            .map(|v| (own, v))
            .or_else(|| set(PROTOCOL).map(|v| (PROTOCOL.to_owned(), v)));
        if let Some((var, value)) = protocol
            && !value.trim().eq_ignore_ascii_case(HTTP_PROTOBUF)
        {
            self.notice(format!(
                "{var}={} is not supported: this build exports OTLP over HTTP with protobuf \
                 ({HTTP_PROTOBUF}), so point the endpoint at the collector's HTTP port \
                 (usually 4318)",
                tool_core::escape_hidden(value.trim())
            ));
        }
    }

    /// Says which entries of the headers variables of `signal` (the generic one and the
    /// signal's own, both sent: [`merged_headers`]) the SDK would drop (naming a key at most:
    /// values hold tokens).
    fn check_headers(&mut self, signal: Signal, env: &impl Fn(&str) -> Option<String>) {
        for var in [HEADERS.to_owned(), signal.own_var("HEADERS")] {
            let Some(value) = env(&var) else { continue };
            let problems = header_problems(&value);
            if !problems.is_empty() {
                self.notice(format!(
                    "{var}: {}; {} not sent (the form is KEY=VALUE, entries separated by \
                     `,`, a space in a value written %20)",
                    problems.join("; "),
                    if problems.len() == 1 {
                        "that header is"
                    } else {
                        "those headers are"
                    }
                ));
            }
        }
    }

    /// Whether `signal`'s requests are gzip-compressed, as the SDK reads the variables (the
    /// signal's own, then the generic one); what it cannot apply is said.
    fn compression(&mut self, signal: Signal, set: &impl Fn(&str) -> Option<String>) -> bool {
        for var in [signal.own_var("COMPRESSION"), COMPRESSION.to_owned()] {
            let Some(value) = set(&var) else { continue };
            match value.trim().to_ascii_lowercase().as_str() {
                "gzip" => return true,
                "none" => return false,
                _ => self.notice(format!(
                    "{var}={} is not supported (only gzip and none); {}",
                    tool_core::escape_hidden(value.trim()),
                    if var == COMPRESSION {
                        "requests are sent uncompressed"
                    } else {
                        "OTEL_EXPORTER_OTLP_COMPRESSION applies"
                    }
                )),
            }
        }
        false
    }

    /// The export timeout of `signal`, as the SDK reads the variables (milliseconds; the
    /// signal's own, then the generic one); one that is no such number is said.
    fn timeout(&mut self, signal: Signal, set: &impl Fn(&str) -> Option<String>) -> Duration {
        let mut bad = Vec::new();
        let mut timeout = EXPORT_TIMEOUT;
        for var in [signal.own_var("TIMEOUT"), TIMEOUT.to_owned()] {
            let Some(value) = set(&var) else { continue };
            match positive_millis(&value) {
                Some(wanted) => {
                    timeout = wanted;
                    break;
                }
                None => bad.push((var, value)),
            }
        }
        for (var, value) in bad {
            self.notice(format!(
                "{var}={} is not a number of milliseconds above 0; it is ignored (exports \
                 time out after {} s)",
                tool_core::escape_hidden(value.trim()),
                seconds(timeout)
            ));
        }
        timeout
    }

    /// How often `signal` is exported, as Claude Code reads its variables (milliseconds):
    /// `OTEL_LOGS_EXPORT_INTERVAL` (default 5 s, not the SDK's 1 s, unless the SDK's own
    /// `OTEL_BLRP_SCHEDULE_DELAY` is set) and `OTEL_TRACES_EXPORT_INTERVAL` (else the SDK's
    /// `OTEL_BSP_SCHEDULE_DELAY`, 5 s as Claude Code's); metrics are the SDK's
    /// `OTEL_METRIC_EXPORT_INTERVAL` (60 s, as Claude Code's). A value that is no such number
    /// is said, and the default used.
    fn interval(
        &mut self,
        signal: Signal,
        set: &impl Fn(&str) -> Option<String>,
    ) -> Option<Duration> {
        let (var, sdk_var) = match signal {
            Signal::Traces => ("OTEL_TRACES_EXPORT_INTERVAL", "OTEL_BSP_SCHEDULE_DELAY"),
            Signal::Logs => ("OTEL_LOGS_EXPORT_INTERVAL", "OTEL_BLRP_SCHEDULE_DELAY"),
            Signal::Metrics => return None,
        };
        let Some(value) = set(var) else {
            return (signal == Signal::Logs && set(sdk_var).is_none()).then_some(EXPORT_INTERVAL);
        };
        match positive_millis(&value) {
            Some(interval) => Some(interval),
            None => {
                self.notice(format!(
                    "{var}={} is not a number of milliseconds above 0; {} are exported every \
                     {} s",
                    tool_core::escape_hidden(value.trim()),
                    signal.what(),
                    seconds(EXPORT_INTERVAL)
                ));
                Some(EXPORT_INTERVAL)
            }
        }
    }
}

/// `value` as the export variables give a duration: a whole number of milliseconds above 0
/// (white space around it aside).
fn positive_millis(value: &str) -> Option<Duration> {
    match value.trim().parse::<u64>() {
        Ok(ms) if ms > 0 => Some(Duration::from_millis(ms)),
        _ => None,
    }
}

/// The TLS files `signal` is exported with, each named by the signal's own variable or else
/// the generic one (`OTEL_EXPORTER_OTLP_[SIGNAL_]CERTIFICATE`, `_CLIENT_CERTIFICATE`,
/// `_CLIENT_KEY`), read and checked as the exporter's client will use them; what makes one
/// unusable, naming its variable and file, when one is.
fn tls_files(signal: Signal, set: &impl Fn(&str) -> Option<String>) -> Result<Tls, String> {
    use rustls::pki_types::pem::PemObject as _;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};

    let var = |suffix: &str| {
        let own = signal.own_var(suffix);
        let generic = format!("OTEL_EXPORTER_OTLP_{suffix}");
        set(&own)
            .map(|path| (own, path))
            .or_else(|| set(&generic).map(|path| (generic, path)))
            .map(|(var, path)| {
                let path = path.trim().to_owned();
                (format!("{var}={}", tool_core::escape_hidden(&path)), path)
            })
    };
    let read = |(named, path): &(String, String)| {
        std::fs::read(path).map_err(|e| {
            let why = match e.kind() {
                std::io::ErrorKind::NotFound => "no such file".to_owned(),
                std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
                std::io::ErrorKind::IsADirectory => "it is a folder".to_owned(),
                _ => e.to_string(),
            };
            format!("{named} cannot be read ({why})")
        })
    };
    let certificates = |named: &str, pem: &[u8]| {
        let certificates = CertificateDer::pem_slice_iter(pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("{named} is not valid PEM ({})", pem_problem(&e)))?;
        if certificates.is_empty() {
            return Err(format!("{named} holds no PEM certificate"));
        }
        Ok(certificates)
    };
    let mut tls = Tls::default();
    if let Some(ca) = var("CERTIFICATE") {
        let pem = read(&ca)?;
        let mut roots = rustls::RootCertStore::empty();
        for certificate in certificates(&ca.0, &pem)? {
            roots.add(certificate).map_err(|e| {
                format!("{} holds a certificate that cannot be trusted ({e})", ca.0)
            })?;
        }
        tls.roots = Some(pem);
    }
    let (certificate, key) = match (var("CLIENT_CERTIFICATE"), var("CLIENT_KEY")) {
        (None, None) => return Ok(tls),
        (Some(certificate), Some(key)) => (certificate, key),
        (Some((named, _)), None) => {
            let var = named.split('=').next().unwrap_or_default();
            return Err(format!(
                "{var} is set without a client key (OTEL_EXPORTER_OTLP_[SIGNAL_]CLIENT_KEY)"
            ));
        }
        (None, Some((named, _))) => {
            let var = named.split('=').next().unwrap_or_default();
            return Err(format!(
                "{var} is set without a client certificate \
                 (OTEL_EXPORTER_OTLP_[SIGNAL_]CLIENT_CERTIFICATE)"
            ));
        }
    };
    let (certificate_pem, key_pem) = (read(&certificate)?, read(&key)?);
    let chain = certificates(&certificate.0, &certificate_pem)?;
    let private_key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| match e {
        rustls::pki_types::pem::Error::NoItemsFound => {
            format!("{} holds no private key in PEM", key.0)
        }
        e => format!("{} is not valid PEM ({})", key.0, pem_problem(&e)),
    })?;
    rustls::sign::CertifiedKey::from_der(
        chain,
        private_key,
        &rustls::crypto::ring::default_provider(),
    )
    .map_err(|e| {
        let why = match e {
            rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch) => {
                "the key is not the certificate's".to_owned()
            }
            e => e.to_string(),
        };
        format!("{} and {} do not go together ({why})", certificate.0, key.0)
    })?;
    // As reqwest reads an identity: the certificate and its key in one PEM text.
    let mut identity = certificate_pem;
    identity.push(b'\n');
    identity.extend_from_slice(&key_pem);
    reqwest::Identity::from_pem(&identity)
        .map_err(|e| format!("{} and {} cannot be used ({e})", certificate.0, key.0))?;
    tls.identity = Some(identity);
    Ok(tls)
}

/// What is wrong with a PEM text, in plain words (the parser's own text shows bytes as
/// numbers).
fn pem_problem(e: &rustls::pki_types::pem::Error) -> String {
    use rustls::pki_types::pem::Error;
    match e {
        Error::MissingSectionEnd { .. } => "a section has no END line".to_owned(),
        Error::IllegalSectionStart { .. } => "a BEGIN line is malformed".to_owned(),
        Error::Base64Decode(_) => "a section is not base64".to_owned(),
        e => e.to_string(),
    }
}

/// `base` with `path` appended, as the SDK joins the generic endpoint and a signal's path.
fn join(base: &str, path: &str) -> String {
    let base = base.trim();
    match base.strip_suffix('/') {
        Some(trimmed) => format!("{trimmed}{path}"),
        None => format!("{base}{path}"),
    }
}

/// Why `url` cannot be an endpoint, if it cannot.
fn check_endpoint(url: &str) -> Result<(), String> {
    let uri: http::Uri = url
        .parse()
        .map_err(|e| format!("is not a valid URL ({e})"))?;
    match uri.scheme_str() {
        Some("http" | "https") if uri.host().is_some() => Ok(()),
        _ => Err("is not an http:// or https:// URL with a host".to_owned()),
    }
}

/// `items` as a sentence lists them: `a`, `a and b`, `a, b and c`.
fn list(items: &[&str]) -> String {
    match items.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// `seconds` as a person writes it: `3`, `0.5`.
fn seconds(duration: Duration) -> String {
    format!("{}", duration.as_secs_f64())
}

/// `text` with every URL in it redacted ([`tool_core::redact_url`]: user information, query
/// and fragment hidden).
#[cfg(any(feature = "otlp", test))]
pub fn mask_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let end = rest[i + 3..]
            .find(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | ')' | '>'))
            .map_or(rest.len(), |e| i + 3 + e);
        let scheme_start = rest[..i]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
            .map_or(0, |s| s + 1);
        out.push_str(&rest[..scheme_start]);
        out.push_str(&tool_core::redact_url(&rest[scheme_start..end]));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The SDK's reading of a header value: `%XX` decoded, the text as given when that fails.
fn url_decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let Some(byte) = value
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            else {
                return value.to_owned();
            };
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| value.to_owned())
}

/// The attributes of an `OTEL_RESOURCE_ATTRIBUTES` value as the OpenTelemetry specification
/// reads them (`KEY=VALUE` entries separated by `,`, trimmed, values %-decoded as Claude
/// Code's docs have users write them: `org.name=John%27s%20Organization`; a value that does
/// not decode is kept as written), and what is wrong with the entries left out, each named
/// by its place (an entry without `=` may be a value's text).
fn resource_attributes(value: &str) -> (Vec<(String, String)>, Vec<String>) {
    let entries: Vec<&str> = value.split_terminator(',').map(str::trim).collect();
    let (mut attributes, mut problems) = (Vec::new(), Vec::new());
    for (n, entry) in entries.iter().enumerate() {
        let place = format!("entry {} of {}", n + 1, entries.len());
        if entry.is_empty() {
            continue;
        }
        match entry.split_once('=') {
            None => problems.push(format!("{place} has no `=`")),
            Some((key, _)) if key.trim().is_empty() => problems.push(format!("{place} has no key")),
            Some((key, value)) => {
                attributes.push((key.trim().to_owned(), url_decode(value.trim())));
            }
        }
    }
    (attributes, problems)
}

/// The headers `signal`'s exports carry, merged as Claude Code's exporter merges them
/// (`getOtelOtlpHeaders`): those of `OTEL_EXPORTER_OTLP_HEADERS` and those of the signal's own
/// variable, the signal's value winning per key (names compared without regard to case, as
/// HTTP's are). The SDK alone reads one variable or the other, so a per-signal tenant header
/// would cost the generic `Authorization`. Values are as written: the SDK %-decodes them.
/// Entries the SDK would drop are left out ([`header_problems`] says which).
#[cfg(any(feature = "otlp", test))]
fn merged_headers(
    signal: Signal,
    env: impl Fn(&str) -> Option<String>,
) -> std::collections::HashMap<String, String> {
    let mut headers = std::collections::HashMap::new();
    for var in [HEADERS.to_owned(), signal.own_var("HEADERS")] {
        let Some(value) = env(&var) else { continue };
        for entry in value.split_terminator(',') {
            let Some((key, value)) = entry.split_once('=') else {
                continue;
            };
            let (key, value) = (key.trim(), value.trim());
            if !key.is_empty()
                && !value.is_empty()
                && http::HeaderName::from_bytes(key.as_bytes()).is_ok()
            {
                headers.insert(key.to_ascii_lowercase(), value.to_owned());
            }
        }
    }
    headers
}

/// What is wrong with the entries of an `OTEL_EXPORTER_OTLP_HEADERS` value the SDK would
/// drop, each named by its key or its place (never by its value).
fn header_problems(value: &str) -> Vec<String> {
    let entries: Vec<&str> = value.split_terminator(',').map(str::trim).collect();
    let mut problems = Vec::new();
    for (n, entry) in entries.iter().enumerate() {
        let place = format!("entry {} of {}", n + 1, entries.len());
        if entry.is_empty() {
            continue;
        }
        let Some((key, value)) = entry.split_once('=') else {
            let named = entry
                .split_once(':')
                .map(|(key, _)| key.trim())
                .filter(|key| http::HeaderName::from_bytes(key.as_bytes()).is_ok());
            problems.push(match named {
                Some(key) => format!(
                    "`{}` is followed by `:` where `=` belongs",
                    tool_core::escape_hidden(key)
                ),
                None => format!("{place} has no `=`"),
            });
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        if key.is_empty() {
            problems.push(format!("{place} has no key"));
        } else if http::HeaderName::from_bytes(key.as_bytes()).is_err() {
            problems.push(format!(
                "`{}` is not a valid header name",
                tool_core::escape_hidden(key)
            ));
        } else if value.is_empty() {
            problems.push(format!("`{key}` has no value"));
        } else if http::HeaderValue::from_str(&url_decode(value)).is_err() {
            problems.push(format!(
                "the value of `{key}` is not a valid header value (a line break or another \
                 control character, once %-decoded)"
            ));
        }
    }
    problems
}

/// Installs the OTLP exporters the variables ask for (see [`ExportPlan`]) when this build
/// has the `otlp` feature; otherwise says so on stderr once when telemetry is asked for.
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
                        eoutln!("toolwright: telemetry export is off: {}", mask_urls(&e));
                        None
                    }
                }),
        }
    }
    #[cfg(not(feature = "otlp"))]
    {
        if plan.any() {
            eoutln!(
                "toolwright: telemetry export is asked for ({ENABLE} and the OTEL_* \
                 variables), but this build has no OTLP exporter (build with `--features \
                 otlp`); telemetry is not exported"
            );
        }
        Telemetry {}
    }
}

#[cfg(feature = "otlp")]
mod otlp {
    use std::io::Read as _;
    use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex, PoisonError};
    use std::time::{Duration, Instant, SystemTime};

    use opentelemetry::logs::{AnyValue, LogRecord as _, Logger as _, LoggerProvider as _};
    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_http::{Bytes, HttpClient, HttpError};
    use opentelemetry_otlp::{
        Compression, LogExporter, MetricExporter, RetryPolicy, SpanExporter, WithExportConfig as _,
        WithHttpConfig as _,
    };
    use opentelemetry_sdk::Resource;
    use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
    use opentelemetry_sdk::logs::{BatchLogProcessor, LogBatch, SdkLogger, SdkLoggerProvider};
    use opentelemetry_sdk::metrics::data::ResourceMetrics;
    use opentelemetry_sdk::metrics::{
        Aggregation, Instrument, SdkMeterProvider, Stream, Temporality,
    };
    use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData};
    use tracing_subscriber::Layer;
    use tracing_subscriber::filter::filter_fn;
    use tracing_subscriber::layer::SubscriberExt as _;

    use super::{ExportPlan, Signal, SignalPlan, mask_urls, seconds};

    /// How long the final flush of all signals may take, together.
    const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(2);

    /// The export queue's size when `OTEL_BSP_MAX_QUEUE_SIZE` does not set one: eight times
    /// the SDK's 2,048, so that a turn of many calls on a collector that takes a second per
    /// batch loses nothing (a span is a few hundred bytes).
    const QUEUE_SIZE: usize = 16_384;

    /// The duration histogram's name (tool-exec's `histogram.` field).
    const DURATION: &str = "toolwright.tool.duration";
    /// Its bucket bounds, in seconds: OpenTelemetry's GenAI duration buckets (0.01 s doubling
    /// to 81.92 s) with 5 ms first, as a Read takes a millisecond and a build minutes.
    const DURATION_BOUNDS: [f64; 15] = [
        0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96,
        81.92,
    ];
    /// The histogram's documented attributes (tool-exec's fields); any other is dropped.
    const DURATION_ATTRIBUTES: [&str; 2] = ["gen_ai.tool.name", "success"];

    /// The target of the events that feed metrics, not spans.
    const METRICS_TARGET: &str = "toolwright::metrics";
    /// Claude Code's two log events: target, name.
    const LOG_EVENTS: [(&str, &str, &str); 2] = [
        (
            "toolwright::tool_decision",
            "tool_decision",
            "claude_code.tool_decision",
        ),
        (
            "toolwright::tool_result",
            "tool_result",
            "claude_code.tool_result",
        ),
    ];

    /// Whether `target` is Toolwright's own (the binary, its library and the workspace's
    /// crates), not a dependency's.
    fn ours(target: &str) -> bool {
        let krate = target.split("::").next().unwrap_or(target);
        matches!(
            krate,
            "toolwright"
                | "tool_core"
                | "tool_perms"
                | "tool_hooks"
                | "tool_exec"
                | "tool_registry"
        ) || krate.starts_with("tools_")
    }

    /// What one signal's exports have come to, shared by its HTTP client and its exporter.
    #[derive(Debug)]
    struct Channel {
        signal: Signal,
        /// The endpoint, masked.
        endpoint: String,
        timeout: Duration,
        /// Set for the final flush: a refused connection is not retried then.
        closing: Arc<AtomicBool>,
        /// The plain cause of the HTTP client's last failure.
        cause: Mutex<Option<String>>,
        /// The first export failure, in plain words, to report at exit (an export runs on
        /// the SDK's thread, where nothing can be said without interleaving with the output).
        first_error: Mutex<Option<String>>,
    }

    impl Channel {
        fn record_failure(&self, error: &OTelSdkError) {
            let cause = lock(&self.cause).take();
            lock(&self.first_error).get_or_insert_with(|| {
                cause.unwrap_or_else(|| match error {
                    OTelSdkError::Timeout(d) => format!("timed out after {} s", seconds(*d)),
                    OTelSdkError::InternalFailure(m) => mask_urls(m),
                    OTelSdkError::AlreadyShutdown => "it was already shut down".to_owned(),
                })
            });
        }
    }

    fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The exporters' HTTP client: reqwest's blocking client, with the retries here rather
    /// than in the SDK so that the final flush does not retry a collector that refuses
    /// connections, and each failure's cause kept in plain words (the SDK keeps only
    /// "network error").
    #[derive(Debug)]
    struct Client {
        inner: reqwest::blocking::Client,
        channel: Arc<Channel>,
    }

    /// The largest response body read (the SDK's limit).
    const MAX_RESPONSE_BYTES: u64 = 4 * 1024 * 1024;
    /// Retries of one export after its first attempt.
    const MAX_RETRIES: u32 = 3;
    /// The longest wait a `Retry-After` may ask for.
    const MAX_THROTTLE: Duration = Duration::from_secs(30);

    impl Client {
        /// Sends once within `remaining`.
        fn attempt(
            &self,
            method: &http::Method,
            url: &reqwest::Url,
            headers: &http::HeaderMap,
            body: &Bytes,
            remaining: Duration,
        ) -> Result<reqwest::blocking::Response, reqwest::Error> {
            let mut request = reqwest::blocking::Request::new(method.clone(), url.clone());
            *request.headers_mut() = headers.clone();
            *request.body_mut() = Some(body.to_vec().into());
            *request.timeout_mut() = Some(remaining);
            self.inner.execute(request)
        }

        fn send(&self, request: http::Request<Bytes>) -> Result<http::Response<Bytes>, HttpError> {
            let started = Instant::now();
            let deadline = self.channel.timeout;
            let url = reqwest::Url::parse(&request.uri().to_string())?;
            let (method, headers) = (request.method().clone(), request.headers().clone());
            let body = request.into_body();
            let mut delay = Duration::from_millis(100);
            let mut retries = 0;
            loop {
                let remaining = deadline.saturating_sub(started.elapsed());
                // A retry that would start past the deadline is not made.
                let may_wait = |wait: Duration, retries: u32| {
                    retries < MAX_RETRIES && started.elapsed() + wait < deadline
                };
                match self.attempt(&method, &url, &headers, &body, remaining) {
                    Ok(mut response) => {
                        let status = response.status();
                        if !status.is_success() {
                            *lock(&self.channel.cause) = Some(format!(
                                "HTTP status {}{}",
                                status.as_u16(),
                                status
                                    .canonical_reason()
                                    .map(|r| format!(" {r}"))
                                    .unwrap_or_default()
                            ));
                            if matches!(status.as_u16(), 429 | 502 | 503 | 504) {
                                let asked =
                                    toolwright::agent::client::retry_after(response.headers())
                                        .map(|wait| wait.min(MAX_THROTTLE));
                                let wait = asked.map_or(delay, |a| a.max(delay));
                                if may_wait(wait, retries) {
                                    std::thread::sleep(wait);
                                    retries += 1;
                                    delay = (delay * 2).min(Duration::from_millis(1600));
                                    continue;
                                }
                            }
                        }
                        let mut bytes = Vec::new();
                        (&mut response)
                            .take(MAX_RESPONSE_BYTES)
                            .read_to_end(&mut bytes)?;
                        let mut answer = http::Response::builder()
                            .status(status)
                            .body(Bytes::from(bytes))?;
                        *answer.headers_mut() = std::mem::take(response.headers_mut());
                        return Ok(answer);
                    }
                    Err(e) => {
                        let (cause, refused) = plain_cause(&e, deadline);
                        *lock(&self.channel.cause) = Some(cause);
                        let closing = self.channel.closing.load(Ordering::Relaxed);
                        // A timeout used the whole budget; a refused connection at the final
                        // flush would be refused again.
                        let last = e.is_timeout() || (closing && refused);
                        if !last && may_wait(delay, retries) {
                            std::thread::sleep(delay);
                            retries += 1;
                            delay = (delay * 2).min(Duration::from_millis(1600));
                            continue;
                        }
                        return Err(Box::new(e.without_url()));
                    }
                }
            }
        }
    }

    /// A failed request's cause in plain words (never its URL), and whether the connection
    /// was refused.
    fn plain_cause(e: &reqwest::Error, timeout: Duration) -> (String, bool) {
        if e.is_timeout() {
            return (format!("timed out after {} s", seconds(timeout)), false);
        }
        let mut deepest: &dyn std::error::Error = e;
        while let Some(source) = deepest.source() {
            if let Some(io) = source.downcast_ref::<std::io::Error>()
                && io.kind() == std::io::ErrorKind::ConnectionRefused
            {
                return ("connection refused".to_owned(), true);
            }
            deepest = source;
        }
        let text = mask_urls(&deepest.to_string());
        if e.is_connect() {
            (format!("could not connect: {text}"), false)
        } else {
            (text, false)
        }
    }

    #[async_trait::async_trait]
    impl HttpClient for Client {
        async fn send_bytes(
            &self,
            request: http::Request<Bytes>,
        ) -> Result<http::Response<Bytes>, HttpError> {
            // The SDK's batch processors call this on threads of their own, outside any
            // async runtime, as they do the SDK's own blocking client.
            self.send(request)
        }
    }

    /// Spans finished and spans exported, to tell at exit how many never reached the
    /// collector (the SDK drops what does not fit its queue, and says nothing).
    #[derive(Debug, Default)]
    struct SpanCounts {
        ended: AtomicUsize,
        exported: AtomicUsize,
    }

    /// An exporter that remembers its first failure (and, for spans, counts what it
    /// exported).
    #[derive(Debug)]
    struct Reporting<E> {
        inner: E,
        channel: Arc<Channel>,
        counts: Arc<SpanCounts>,
    }

    impl<E> Reporting<E> {
        fn note(&self, result: &OTelSdkResult) {
            if let Err(e) = result {
                self.channel.record_failure(e);
            }
        }
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
            self.note(&result);
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

    impl<E: opentelemetry_sdk::metrics::exporter::PushMetricExporter>
        opentelemetry_sdk::metrics::exporter::PushMetricExporter for Reporting<E>
    {
        async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
            let result = self.inner.export(metrics).await;
            self.note(&result);
            result
        }

        fn force_flush(&self) -> OTelSdkResult {
            self.inner.force_flush()
        }

        fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
            self.inner.shutdown_with_timeout(timeout)
        }

        fn temporality(&self) -> Temporality {
            self.inner.temporality()
        }
    }

    impl<E: opentelemetry_sdk::logs::LogExporter> opentelemetry_sdk::logs::LogExporter
        for Reporting<E>
    {
        async fn export(&self, batch: LogBatch<'_>) -> OTelSdkResult {
            let result = self.inner.export(batch).await;
            self.note(&result);
            result
        }

        fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
            self.inner.shutdown_with_timeout(timeout)
        }

        fn set_resource(&mut self, resource: &Resource) {
            self.inner.set_resource(resource);
        }
    }

    /// Claude Code's `tool_decision` and `tool_result` events as OTLP log records, named and
    /// shaped as Claude Code's (`logOTelEvent`): body `claude_code.NAME`, attributes
    /// `event.name`, `event.timestamp`, `event.sequence` and the event's fields as strings.
    struct ToolEvents {
        logger: SdkLogger,
        sequence: AtomicI64,
    }

    /// Writes an event's fields as string attributes (Claude Code's are all strings).
    struct Fields<'a>(&'a mut opentelemetry_sdk::logs::SdkLogRecord);

    impl Fields<'_> {
        fn add(&mut self, field: &tracing::field::Field, value: String) {
            if field.name() != "message" {
                self.0.add_attribute(field.name(), value);
            }
        }
    }

    impl tracing::field::Visit for Fields<'_> {
        fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
            self.add(field, format!("{value:?}"));
        }

        fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
            self.add(field, value.to_owned());
        }

        fn record_bool(&mut self, field: &tracing::field::Field, value: bool) {
            self.add(field, value.to_string());
        }

        fn record_i64(&mut self, field: &tracing::field::Field, value: i64) {
            self.add(field, value.to_string());
        }

        fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
            self.add(field, value.to_string());
        }

        fn record_f64(&mut self, field: &tracing::field::Field, value: f64) {
            self.add(field, value.to_string());
        }
    }

    impl<S: tracing::Subscriber> Layer<S> for ToolEvents {
        fn on_event(
            &self,
            event: &tracing::Event<'_>,
            _ctx: tracing_subscriber::layer::Context<'_, S>,
        ) {
            let target = event.metadata().target();
            let Some(&(_, name, full_name)) = LOG_EVENTS.iter().find(|(t, ..)| *t == target) else {
                return;
            };
            let mut record = self.logger.create_log_record();
            record.set_event_name(full_name);
            record.set_body(AnyValue::from(full_name));
            record.set_timestamp(SystemTime::now());
            record.set_severity_number(opentelemetry::logs::Severity::Info);
            record.set_severity_text("INFO");
            record.add_attribute("event.name", name);
            record.add_attribute(
                "event.timestamp",
                chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            );
            record.add_attribute(
                "event.sequence",
                self.sequence.fetch_add(1, Ordering::Relaxed),
            );
            event.record(&mut Fields(&mut record));
            self.logger.emit(record);
        }
    }

    pub(super) struct Providers {
        tracer: Option<SdkTracerProvider>,
        meter: Option<SdkMeterProvider>,
        logger: Option<SdkLoggerProvider>,
        channels: Vec<Arc<Channel>>,
        closing: Arc<AtomicBool>,
        span_counts: Arc<SpanCounts>,
    }

    /// Shuts a provider down (its final flush).
    type Flush = Box<dyn FnOnce() -> OTelSdkResult + Send>;

    impl Drop for Providers {
        fn drop(&mut self) {
            // Flushes what is buffered, all signals side by side within one deadline (the
            // meter's shutdown takes no timeout of its own), without retrying a collector
            // that refuses connections; a collector that is gone is reported, not fatal.
            self.closing.store(true, Ordering::Relaxed);
            let mut flushes: Vec<(Signal, Flush)> = Vec::new();
            if let Some(tracer) = self.tracer.take() {
                flushes.push((
                    Signal::Traces,
                    Box::new(move || tracer.shutdown_with_timeout(SHUTDOWN_TIMEOUT)),
                ));
            }
            if let Some(meter) = self.meter.take() {
                flushes.push((
                    Signal::Metrics,
                    Box::new(move || meter.shutdown_with_timeout(SHUTDOWN_TIMEOUT)),
                ));
            }
            if let Some(logger) = self.logger.take() {
                flushes.push((
                    Signal::Logs,
                    Box::new(move || logger.shutdown_with_timeout(SHUTDOWN_TIMEOUT)),
                ));
            }
            let (done, finished) = std::sync::mpsc::channel();
            let mut pending: Vec<Signal> = Vec::new();
            for (signal, flush) in flushes {
                let done = done.clone();
                let spawned = std::thread::Builder::new()
                    .name("toolwright-otlp-flush".into())
                    .spawn(move || {
                        let started = Instant::now();
                        let result = flush();
                        let _ = done.send((signal, result, started.elapsed()));
                    });
                if spawned.is_ok() {
                    pending.push(signal);
                }
            }
            drop(done);
            let deadline = Instant::now() + SHUTDOWN_TIMEOUT + Duration::from_millis(500);
            let mut problems = Vec::new();
            // The signals whose last export did not end in time: still flushing, or given up.
            let mut late = Vec::new();
            while !pending.is_empty() {
                let Ok((signal, result, took)) =
                    finished.recv_timeout(deadline.saturating_duration_since(Instant::now()))
                else {
                    break;
                };
                pending.retain(|s| *s != signal);
                let Err(e) = result else { continue };
                let channel = self.channels.iter().find(|c| c.signal == signal);
                match e {
                    OTelSdkError::AlreadyShutdown => {}
                    // The processors wrap their timeouts (`Shutdown errors: [Timeout(2s)]`).
                    OTelSdkError::Timeout(_) => late.push(signal),
                    OTelSdkError::InternalFailure(message)
                        if message.contains("Timeout")
                            || took + Duration::from_millis(100) >= SHUTDOWN_TIMEOUT =>
                    {
                        late.push(signal);
                    }
                    OTelSdkError::InternalFailure(message) => {
                        // The export's own failure, when there was one, says why.
                        if channel.is_none_or(|c| lock(&c.first_error).is_none()) {
                            problems.push(format!(
                                "exporting the last {} failed: {}",
                                signal.what(),
                                mask_urls(&message)
                            ));
                        }
                    }
                }
            }
            late.extend(pending);
            for channel in &self.channels {
                if let Some(cause) = lock(&channel.first_error).take() {
                    eoutln!(
                        "toolwright: telemetry: exporting {} to {} failed: {cause}",
                        channel.signal.what(),
                        channel.endpoint
                    );
                }
            }
            for problem in problems {
                eoutln!("toolwright: telemetry: {problem}");
            }
            if !late.is_empty() {
                late.sort_by_key(|s| Signal::ALL.iter().position(|a| a == s));
                let what = super::list(&late.iter().map(|s| s.what()).collect::<Vec<_>>());
                eoutln!(
                    "toolwright: telemetry: the collector did not take the last {what} within \
                     {} s; they are dropped",
                    SHUTDOWN_TIMEOUT.as_secs()
                );
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

    /// The resource: the SDK's own attributes (`telemetry.sdk.*`), those of
    /// `OTEL_RESOURCE_ATTRIBUTES` (values %-decoded, which the SDK does not do), and the
    /// service name of `OTEL_SERVICE_NAME`, else of the attributes (the specification's
    /// order, which the SDK's detectors reverse), else `toolwright`.
    fn resource() -> Resource {
        let (attributes, _) = super::resource_attributes(
            &std::env::var(super::RESOURCE_ATTRIBUTES).unwrap_or_default(),
        );
        let service = std::env::var(super::SERVICE_NAME)
            .ok()
            .filter(|name| !name.trim().is_empty())
            .or_else(|| {
                attributes
                    .iter()
                    .rev()
                    .find(|(key, _)| key == "service.name")
                    .map(|(_, name)| name.clone())
            })
            .unwrap_or_else(|| "toolwright".to_owned());
        Resource::builder_empty()
            .with_detector(Box::new(
                opentelemetry_sdk::resource::TelemetryResourceDetector,
            ))
            .with_attributes(
                attributes
                    .into_iter()
                    .map(|(key, value)| opentelemetry::KeyValue::new(key, value)),
            )
            .with_service_name(service)
            .build()
    }

    /// The duration histogram's stream: seconds, second-scale buckets, its documented
    /// attributes only.
    fn duration_view(instrument: &Instrument) -> Option<Stream> {
        if instrument.name() != DURATION {
            return None;
        }
        Stream::builder()
            .with_unit("s")
            .with_description("How long a tool call took through the whole pipeline")
            .with_aggregation(Aggregation::ExplicitBucketHistogram {
                boundaries: DURATION_BOUNDS.to_vec(),
                record_min_max: true,
            })
            .with_allowed_attribute_keys(
                DURATION_ATTRIBUTES.map(opentelemetry::Key::from_static_str),
            )
            .build()
            .ok()
    }

    /// The proxies of the settings other than the project's own (managed, user,
    /// `--settings`), else of the environment Toolwright was started with, read as reqwest
    /// reads them (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and `NO_PROXY`, each also in
    /// lower case, the settings' in either case before the environment's; under CGI the
    /// environment's `HTTP_PROXY`, which may be a request's `Proxy:` header, is passed
    /// over), not as the settings' `env` left them: a trusted project's settings do not
    /// choose where telemetry goes (docs/cli.md), and a proxy sees each request, the
    /// user's OTLP headers with it. The project's proxy still applies to its tools, which
    /// inherit the environment.
    fn proxies() -> Vec<reqwest::Proxy> {
        let cgi = crate::session::var_before_settings("REQUEST_METHOD").is_some();
        let before = |names: [&str; 2]| {
            let set = |v: &str| !v.trim().is_empty();
            let of_settings = names.into_iter().find_map(|name| {
                crate::session::settings_proxy_var(name)
                    .filter(|v| set(v))
                    .map(str::to_owned)
            });
            of_settings.or_else(|| {
                if cgi && names[0] == "HTTP_PROXY" {
                    return None;
                }
                names.into_iter().find_map(|name| {
                    crate::session::var_before_settings(name)
                        .and_then(|v| v.into_string().ok())
                        .filter(|v| set(v))
                })
            })
        };
        let no_proxy =
            before(["NO_PROXY", "no_proxy"]).and_then(|list| reqwest::NoProxy::from_string(&list));
        let of = |names: [&str; 2], proxy: fn(&str) -> reqwest::Result<reqwest::Proxy>| {
            // One that is no URL is passed over, as reqwest does.
            let url = before(names)?;
            Some(proxy(url.trim()).ok()?.no_proxy(no_proxy.clone()))
        };
        [
            of(["HTTP_PROXY", "http_proxy"], |url| {
                reqwest::Proxy::http(url)
            }),
            of(["HTTPS_PROXY", "https_proxy"], |url| {
                reqwest::Proxy::https(url)
            }),
            of(["ALL_PROXY", "all_proxy"], |url| reqwest::Proxy::all(url)),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// Applies what every exporter builder takes from the plan of its signal.
    macro_rules! configured {
        ($builder:expr, $plan:expr, $client:expr) => {{
            let builder = $builder
                .with_http()
                .with_endpoint($plan.endpoint.clone())
                .with_timeout($plan.timeout)
                .with_headers(super::merged_headers($plan.signal, |name| {
                    std::env::var(name).ok()
                }))
                .with_retry_policy(RetryPolicy::disabled())
                .with_http_client($client);
            if $plan.gzip {
                builder.with_compression(Compression::Gzip)
            } else {
                builder
            }
        }};
    }

    pub(super) fn install(plan: &ExportPlan) -> Result<Providers, String> {
        // reqwest is built without a default TLS provider (as everywhere in Toolwright).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let closing = Arc::new(AtomicBool::new(false));
        let span_counts = Arc::<SpanCounts>::default();
        let mut channels = Vec::new();
        let mut pipe = |signal: &SignalPlan| -> Result<(Client, Arc<Channel>), String> {
            let channel = Arc::new(Channel {
                signal: signal.signal,
                endpoint: tool_core::redact_url(&signal.endpoint),
                timeout: signal.timeout,
                closing: Arc::clone(&closing),
                cause: Mutex::default(),
                first_error: Mutex::default(),
            });
            channels.push(Arc::clone(&channel));
            let mut builder = reqwest::blocking::Client::builder().no_proxy();
            for proxy in proxies() {
                builder = builder.proxy(proxy);
            }
            // The plan read and checked these files.
            let unusable = |e: reqwest::Error| {
                format!("cannot use the TLS files for {}: {e}", signal.signal.what())
            };
            if let Some(roots) = &signal.tls.roots {
                builder = builder.tls_certs_merge(
                    reqwest::Certificate::from_pem_bundle(roots).map_err(unusable)?,
                );
            }
            if let Some(identity) = &signal.tls.identity {
                builder =
                    builder.identity(reqwest::Identity::from_pem(identity).map_err(unusable)?);
            }
            let inner = builder
                .build()
                .map_err(|e| format!("cannot make the OTLP HTTP client: {e}"))?;
            Ok((
                Client {
                    inner,
                    channel: Arc::clone(&channel),
                },
                channel,
            ))
        };
        let of = |signal: Signal| plan.signals.iter().find(|s| s.signal == signal);
        let built = |signal: Signal, e: opentelemetry_otlp::ExporterBuildError| {
            format!(
                "cannot build the OTLP {} exporter: {}",
                signal.what(),
                mask_urls(&e.to_string())
            )
        };

        let tracer = match of(Signal::Traces) {
            Some(signal) => {
                let (client, channel) = pipe(signal)?;
                let spans = configured!(SpanExporter::builder(), signal, client)
                    .build()
                    .map_err(|e| built(Signal::Traces, e))?;
                let mut config = opentelemetry_sdk::trace::BatchConfigBuilder::default();
                if std::env::var_os("OTEL_BSP_MAX_QUEUE_SIZE").is_none_or(|v| v.is_empty()) {
                    config = config.with_max_queue_size(QUEUE_SIZE);
                }
                if let Some(interval) = signal.interval {
                    config = config.with_scheduled_delay(interval);
                }
                let batches = opentelemetry_sdk::trace::BatchSpanProcessor::builder(Reporting {
                    inner: spans,
                    channel,
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
            }
            None => None,
        };
        let meter = match of(Signal::Metrics) {
            Some(signal) => {
                let (client, channel) = pipe(signal)?;
                let metrics = configured!(MetricExporter::builder(), signal, client)
                    .build()
                    .map_err(|e| built(Signal::Metrics, e))?;
                Some(
                    SdkMeterProvider::builder()
                        .with_resource(resource())
                        .with_view(duration_view)
                        .with_periodic_exporter(Reporting {
                            inner: metrics,
                            channel,
                            counts: Arc::default(),
                        })
                        .build(),
                )
            }
            None => None,
        };
        let logger = match of(Signal::Logs) {
            Some(signal) => {
                let (client, channel) = pipe(signal)?;
                let logs = configured!(LogExporter::builder(), signal, client)
                    .build()
                    .map_err(|e| built(Signal::Logs, e))?;
                let mut config = opentelemetry_sdk::logs::BatchConfigBuilder::default();
                if let Some(interval) = signal.interval {
                    config = config.with_scheduled_delay(interval);
                }
                Some(
                    SdkLoggerProvider::builder()
                        .with_resource(resource())
                        .with_log_processor(
                            BatchLogProcessor::builder(Reporting {
                                inner: logs,
                                channel,
                                counts: Arc::default(),
                            })
                            .with_batch_config(config.build())
                            .build(),
                        )
                        .build(),
                )
            }
            None => None,
        };

        // Only Toolwright's own targets leave the machine, at INFO and above; the events
        // that feed the histogram are no span events; the logs take Claude Code's two
        // events only.
        let info_and_ours = |meta: &tracing::Metadata<'_>| {
            *meta.level() <= tracing::Level::INFO && ours(meta.target())
        };
        let subscriber = tracing_subscriber::registry()
            .with(tracer.as_ref().map(|tracer| {
                tracing_opentelemetry::layer()
                    .with_tracer(tracer.tracer("toolwright"))
                    .with_filter(filter_fn(move |meta| {
                        info_and_ours(meta) && meta.target() != METRICS_TARGET
                    }))
            }))
            .with(meter.as_ref().map(|meter| {
                tracing_opentelemetry::MetricsLayer::new(meter.clone())
                    .with_filter(filter_fn(info_and_ours))
            }))
            .with(logger.as_ref().map(|logger| {
                ToolEvents {
                    logger: logger.logger("toolwright"),
                    sequence: AtomicI64::new(0),
                }
                .with_filter(filter_fn(|meta| {
                    LOG_EVENTS
                        .iter()
                        .any(|(target, ..)| *target == meta.target())
                }))
            }));
        tracing::subscriber::set_global_default(subscriber)
            .map_err(|e| format!("a tracing subscriber is already installed: {e}"))?;
        Ok(Providers {
            tracer,
            meter,
            logger,
            channels,
            closing,
            span_counts,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ON: (&str, &str) = (ENABLE, "1");

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
        assert!(!plan(&[ON]).any());
        assert!(!plan(&[ON, (ENDPOINT, " ")]).any());
        let both = plan(&[ON, (ENDPOINT, url)]);
        assert!(both.exports(Signal::Traces) && both.exports(Signal::Metrics));
        assert!(!both.exports(Signal::Logs) && both.notices.is_empty());
        assert_eq!(both.signals[0].endpoint, "http://127.0.0.1:4318/v1/traces");
        assert_eq!(both.signals[0].timeout, EXPORT_TIMEOUT);
        // The SDK switch.
        assert!(!plan(&[ON, (ENDPOINT, url), ("OTEL_SDK_DISABLED", "TRUE")]).any());
        assert!(
            plan(&[ON, (ENDPOINT, url), ("OTEL_SDK_DISABLED", "false")]).exports(Signal::Traces)
        );
        // A signal's own endpoint exports that signal only, as it is written.
        let traces = plan(&[ON, ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", url)]);
        assert!(traces.exports(Signal::Traces) && !traces.exports(Signal::Metrics));
        assert_eq!(traces.signals[0].endpoint, url);
        let metrics = plan(&[ON, ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", url)]);
        assert!(!metrics.exports(Signal::Traces) && metrics.exports(Signal::Metrics));
        // `none` turns a signal off; an exporter we lack is said.
        let no_traces = plan(&[ON, (ENDPOINT, url), ("OTEL_TRACES_EXPORTER", "none")]);
        assert!(!no_traces.exports(Signal::Traces) && no_traces.exports(Signal::Metrics));
        // An exporter we lack is not replaced by the endpoint: nothing leaves for it.
        let console = plan(&[ON, (ENDPOINT, url), ("OTEL_METRICS_EXPORTER", "console")]);
        assert!(!console.exports(Signal::Metrics) && console.exports(Signal::Traces));
        assert!(console.notices[0].contains("OTEL_METRICS_EXPORTER=console"));
        assert!(
            console.notices[0].contains("metrics are not exported"),
            "{console:?}"
        );
        let logs = plan(&[ON, (ENDPOINT, url), ("OTEL_LOGS_EXPORTER", "console")]);
        assert!(!logs.exports(Signal::Logs), "{logs:?}");
        // An explicit `otlp` without an endpoint goes to the SDK's default one.
        let default = plan(&[ON, ("OTEL_METRICS_EXPORTER", "otlp")]);
        assert_eq!(default.signals.len(), 1);
        assert_eq!(
            default.signals[0].endpoint,
            "http://localhost:4318/v1/metrics"
        );
    }

    #[test]
    fn nothing_is_exported_unless_telemetry_is_switched_on() {
        let url = "http://127.0.0.1:4318";
        for off in [None, Some("0"), Some("false"), Some(""), Some("off")] {
            let mut vars = vec![(ENDPOINT, url), ("OTEL_LOGS_EXPORTER", "otlp")];
            if let Some(off) = off {
                vars.push((ENABLE, off));
            }
            let plan = plan(&vars);
            assert!(!plan.any() && plan.notices.is_empty(), "{off:?}");
        }
        for on in ["1", "true", "YES", " on "] {
            assert!(plan(&[(ENDPOINT, url), (ENABLE, on)]).any(), "{on}");
        }
    }

    #[test]
    fn logs_are_exported_when_asked_for() {
        let url = "http://127.0.0.1:4318";
        let logs = plan(&[ON, (ENDPOINT, url), ("OTEL_LOGS_EXPORTER", "otlp")]);
        assert!(logs.exports(Signal::Logs), "{logs:?}");
        let log_plan = logs
            .signals
            .iter()
            .find(|s| s.signal == Signal::Logs)
            .unwrap();
        assert_eq!(log_plan.endpoint, "http://127.0.0.1:4318/v1/logs");
        let own = plan(&[
            ON,
            ("OTEL_LOGS_EXPORTER", "otlp"),
            ("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "http://h:1/logs"),
        ]);
        assert_eq!(own.signals.len(), 1);
        assert_eq!(own.signals[0].endpoint, "http://h:1/logs");
        // Claude Code's list form, and an exporter we lack.
        let list = plan(&[ON, (ENDPOINT, url), ("OTEL_LOGS_EXPORTER", "console,otlp")]);
        assert!(list.exports(Signal::Logs));
        assert!(list.notices[0].contains("OTEL_LOGS_EXPORTER=console is not supported"));
        let console = plan(&[ON, ("OTEL_LOGS_EXPORTER", "console")]);
        assert!(!console.any());
        assert!(
            console.notices[0].contains("log records are not exported"),
            "{console:?}"
        );
    }

    #[test]
    fn a_protocol_not_built_in_is_said_once() {
        let url = "http://127.0.0.1:4317";
        let grpc = plan(&[ON, (ENDPOINT, url), (PROTOCOL, "grpc")]);
        assert_eq!(grpc.notices.len(), 1, "{:?}", grpc.notices);
        assert!(grpc.notices[0].contains("OTEL_EXPORTER_OTLP_PROTOCOL=grpc"));
        assert!(grpc.notices[0].contains("4318"));
        // The signal's own variable wins over the generic one.
        let own = plan(&[
            ON,
            (ENDPOINT, url),
            (PROTOCOL, "grpc"),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"),
        ]);
        assert_eq!(own.notices.len(), 1);
        let fine = plan(&[ON, (ENDPOINT, url), (PROTOCOL, "http/protobuf")]);
        assert!(fine.notices.is_empty());
        // The SDK reads the value without regard to case.
        let upper = plan(&[ON, (ENDPOINT, url), (PROTOCOL, "HTTP/Protobuf")]);
        assert!(upper.notices.is_empty(), "{:?}", upper.notices);
        // A signal not exported says nothing about its protocol.
        let off = plan(&[
            ON,
            (ENDPOINT, url),
            ("OTEL_TRACES_EXPORTER", "none"),
            ("OTEL_METRICS_EXPORTER", "none"),
            (PROTOCOL, "grpc"),
        ]);
        assert!(!off.any() && off.notices.is_empty());
    }

    #[test]
    fn resource_attributes_are_read_as_the_specification_has_them() {
        let (attributes, problems) =
            resource_attributes(" a = x%20y ,, b=100%,c=%E2%9C%93,=orphan,lonely, d=e=f");
        let got: Vec<(&str, &str)> = attributes
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        // A value that does not decode is kept as written; `=` in a value is its own.
        assert_eq!(got, [("a", "x y"), ("b", "100%"), ("c", "✓"), ("d", "e=f")]);
        assert_eq!(
            problems,
            ["entry 5 of 7 has no key", "entry 6 of 7 has no `=`"]
        );
        let said = plan(&[
            ON,
            (ENDPOINT, "http://collector:4318"),
            (RESOURCE_ATTRIBUTES, "team=tools,secretword"),
        ])
        .notices;
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains("entry 2 of 2 has no `=`"), "{said:?}");
        assert!(!said[0].contains("secretword"), "{said:?}");
        // Nothing exported, nothing said.
        assert!(
            plan(&[(RESOURCE_ATTRIBUTES, "secretword")])
                .notices
                .is_empty()
        );
    }

    #[test]
    fn headers_the_sdk_would_drop_are_said_without_their_values() {
        let url = "http://127.0.0.1:4318";
        let said = |headers: &str| {
            let plan = plan(&[ON, (ENDPOINT, url), (HEADERS, headers)]);
            assert!(plan.notices.len() <= 1, "{:?}", plan.notices);
            plan.notices.first().cloned().unwrap_or_default()
        };
        assert_eq!(said("Authorization=Bearer%20abc,x-team=tools"), "");
        let colon = said("Authorization: Bearer abc");
        assert!(
            colon.contains("`Authorization` is followed by `:`"),
            "{colon}"
        );
        assert!(colon.starts_with("OTEL_EXPORTER_OTLP_HEADERS: "), "{colon}");
        assert!(!colon.contains("abc"), "{colon}");
        let garbage = said("garbage");
        assert!(garbage.contains("entry 1 of 1 has no `=`"), "{garbage}");
        assert!(!garbage.contains("garbage"), "{garbage}");
        let space = said("my key=secret1,ok=fine");
        assert!(
            space.contains("`my key` is not a valid header name"),
            "{space}"
        );
        assert!(!space.contains("secret1"), "{space}");
        let newline = said("x-token=abc%0Adef");
        assert!(newline.contains("the value of `x-token`"), "{newline}");
        assert!(!newline.contains("abc"), "{newline}");
        let empty = said("x-token=");
        assert!(empty.contains("`x-token` has no value"), "{empty}");
        // The signal's own variable is the one the SDK reads for that signal.
        let own = plan(&[
            ON,
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", url),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "bad"),
            (HEADERS, "fine=1"),
        ]);
        assert!(own.notices[0].starts_with("OTEL_EXPORTER_OTLP_TRACES_HEADERS"));
        // Both variables are sent, so both are checked: the generic one once for all.
        let both = plan(&[
            ON,
            (ENDPOINT, url),
            ("OTEL_LOGS_EXPORTER", "otlp"),
            ("OTEL_EXPORTER_OTLP_LOGS_HEADERS", "x-scope-orgid=tenant1"),
            (HEADERS, "Authorization: Bearer abc"),
        ]);
        assert_eq!(both.notices.len(), 1, "{:?}", both.notices);
        assert!(both.notices[0].starts_with("OTEL_EXPORTER_OTLP_HEADERS: "));
    }

    #[test]
    fn a_signals_own_headers_are_merged_over_the_generic_ones() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        let vars = &[
            (
                HEADERS,
                "Authorization=Bearer%20s3cret, X-Team = generic,bad",
            ),
            (
                "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
                "X-Scope-OrgID=tenant1,x-team=logs,empty=",
            ),
        ];
        let mut logs: Vec<(String, String)> = merged_headers(Signal::Logs, env(vars))
            .into_iter()
            .collect();
        logs.sort();
        assert_eq!(
            logs,
            [
                ("authorization".into(), "Bearer%20s3cret".into()),
                ("x-scope-orgid".into(), "tenant1".into()),
                ("x-team".into(), "logs".into()),
            ]
        );
        let traces = merged_headers(Signal::Traces, env(vars));
        assert_eq!(traces.len(), 2, "{traces:?}");
        assert_eq!(traces["x-team"], "generic");
        assert!(merged_headers(Signal::Metrics, env(&[])).is_empty());
    }

    #[test]
    fn compression_and_timeout_are_read_as_the_sdk_reads_them() {
        let url = "http://127.0.0.1:4318";
        let gzip = plan(&[ON, (ENDPOINT, url), (COMPRESSION, "GZIP")]);
        assert!(gzip.signals.iter().all(|s| s.gzip) && gzip.notices.is_empty());
        for value in ["zstd", "bogus"] {
            let other = plan(&[ON, (ENDPOINT, url), (COMPRESSION, value)]);
            assert!(other.signals.iter().all(|s| !s.gzip));
            assert_eq!(other.notices.len(), 1, "{:?}", other.notices);
            assert!(
                other.notices[0].contains(&format!("{COMPRESSION}={value} is not supported")),
                "{:?}",
                other.notices
            );
            assert!(other.notices[0].contains("uncompressed"));
        }
        let none = plan(&[
            ON,
            (ENDPOINT, url),
            ("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "none"),
            (COMPRESSION, "gzip"),
        ]);
        assert!(!none.signals[0].gzip && none.signals[1].gzip);

        let ms = plan(&[ON, (ENDPOINT, url), (TIMEOUT, "500")]);
        assert!(
            ms.signals
                .iter()
                .all(|s| s.timeout == Duration::from_millis(500))
        );
        let bad = plan(&[ON, (ENDPOINT, url), (TIMEOUT, "abc")]);
        assert!(bad.signals.iter().all(|s| s.timeout == EXPORT_TIMEOUT));
        assert_eq!(bad.notices.len(), 1, "{:?}", bad.notices);
        assert!(bad.notices[0].contains("OTEL_EXPORTER_OTLP_TIMEOUT=abc is not a number"));
        assert!(bad.notices[0].contains("after 3 s"), "{:?}", bad.notices);
        let own = plan(&[
            ON,
            (ENDPOINT, url),
            ("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "2000"),
            (TIMEOUT, "700"),
        ]);
        assert_eq!(own.signals[0].timeout, Duration::from_millis(700));
        assert_eq!(own.signals[1].timeout, Duration::from_secs(2));
    }

    #[test]
    fn the_export_intervals_are_claude_codes() {
        let url = "http://127.0.0.1:4318";
        let logs = ("OTEL_LOGS_EXPORTER", "otlp");
        let intervals = |vars: &[(&str, &str)]| {
            let mut all = vec![ON, (ENDPOINT, url), logs];
            all.extend_from_slice(vars);
            let plan = plan(&all);
            let of = |signal| {
                plan.signals
                    .iter()
                    .find(|s| s.signal == signal)
                    .unwrap()
                    .interval
            };
            (
                [of(Signal::Traces), of(Signal::Metrics), of(Signal::Logs)],
                plan.notices,
            )
        };
        let ms = |ms| Some(Duration::from_millis(ms));
        // Claude Code's default for logs; the SDK's for spans (5 s too) and metrics.
        assert_eq!(intervals(&[]), ([None, None, ms(5000)], vec![]));
        assert_eq!(
            intervals(&[
                ("OTEL_LOGS_EXPORT_INTERVAL", "60000"),
                ("OTEL_TRACES_EXPORT_INTERVAL", " 250 "),
                ("OTEL_BSP_SCHEDULE_DELAY", "100"),
            ]),
            ([ms(250), None, ms(60000)], vec![])
        );
        // The SDK's own variable for logs is left to it when Claude Code's is not set.
        assert_eq!(
            intervals(&[("OTEL_BLRP_SCHEDULE_DELAY", "2000")]).0,
            [None, None, None]
        );
        let (bad, notices) = intervals(&[
            ("OTEL_LOGS_EXPORT_INTERVAL", "5s"),
            ("OTEL_TRACES_EXPORT_INTERVAL", "0"),
        ]);
        assert_eq!(bad, [ms(5000), None, ms(5000)]);
        assert_eq!(
            notices,
            [
                "OTEL_TRACES_EXPORT_INTERVAL=0 is not a number of milliseconds above 0; spans \
                 are exported every 5 s",
                "OTEL_LOGS_EXPORT_INTERVAL=5s is not a number of milliseconds above 0; log \
                 records are exported every 5 s",
            ]
        );
    }

    #[test]
    fn a_tls_file_that_cannot_be_used_costs_its_signals() {
        let dir = tempfile::tempdir().unwrap();
        let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
        std::fs::write(path("key.pem"), "-----BEGIN PRIVATE KEY-----\nAAAA\n").unwrap();
        let url = "https://127.0.0.1:4318";
        let missing = path("missing.pem");
        let refused = plan(&[
            ON,
            (ENDPOINT, url),
            ("OTEL_EXPORTER_OTLP_CERTIFICATE", &missing),
        ]);
        assert!(!refused.any());
        assert_eq!(
            refused.notices,
            [format!(
                "OTEL_EXPORTER_OTLP_CERTIFICATE={missing} cannot be read (no such file); spans \
                 and metrics are not exported"
            )]
        );
        // The signal's own variable wins; a file with no certificate is said.
        let key = path("key.pem");
        let own = plan(&[
            ON,
            (ENDPOINT, url),
            ("OTEL_EXPORTER_OTLP_CERTIFICATE", &missing),
            ("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", &key),
        ]);
        assert!(!own.any());
        assert_eq!(own.notices.len(), 2, "{:?}", own.notices);
        assert!(own.notices[0].starts_with(&format!(
            "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE={key} is not valid PEM"
        )));
        assert!(own.notices[0].ends_with("; spans are not exported"));
        // A client certificate without its key is no silent export without it.
        let half = plan(&[
            ON,
            ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", url),
            ("OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE", &missing),
        ]);
        assert!(!half.any());
        assert!(
            half.notices[0].starts_with(
                "OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE is set without a client key"
            ),
            "{:?}",
            half.notices
        );
        // A key is never shown.
        let tls = Tls {
            roots: None,
            identity: Some(b"-----BEGIN PRIVATE KEY-----secret".to_vec()),
        };
        assert!(!format!("{tls:?}").contains("secret"));
    }

    #[test]
    fn an_endpoint_is_checked_and_shown_without_its_password() {
        let bad = plan(&[ON, (ENDPOINT, "http://user:PW@127.0.0.1:1/a b")]);
        assert!(!bad.any());
        assert_eq!(bad.notices.len(), 1, "{:?}", bad.notices);
        assert!(bad.notices[0].starts_with(
            "OTEL_EXPORTER_OTLP_ENDPOINT=http://redacted@127.0.0.1:1/a b is not a valid URL"
        ));
        assert!(bad.notices[0].ends_with("; spans and metrics are not exported"));
        assert!(!bad.notices.concat().contains("PW"));
        let scheme = plan(&[ON, ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "localhost:4318")]);
        assert!(!scheme.any());
        assert!(scheme.notices[0].contains("not an http:// or https:// URL"));

        assert_eq!(
            mask_urls("invalid endpoint 'http://u:secret@h/a b': bad"),
            "invalid endpoint 'http://redacted@h/a b': bad"
        );
        assert_eq!(mask_urls("no url here"), "no url here");
    }
}
