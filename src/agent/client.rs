//! The model behind the loop: the [`ModelClient`] trait and its implementation for the
//! Anthropic Messages API ([`AnthropicClient`]).
//!
//! A client takes a [`ModelRequest`] and returns the response as a stream of
//! [`StreamEvent`]s, each yielded the moment the bytes that complete it arrive, so that a
//! tool_use block reaches the executor as soon as its `content_block_stop` is read.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::{Value, json};
use tool_core::async_trait;
use tool_exec::{AnthropicStream, StreamEvent};

use super::{TokenUsage, UsageMeter};

/// The Messages API version header.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The beta that enables deferred tools (`defer_loading`) and `tool_reference` blocks.
pub const TOOL_SEARCH_BETA: &str = "advanced-tool-use-2025-11-20";

/// Why a request, a response or the loop failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum AgentError {
    /// The HTTP request failed for good (after the retries).
    #[error("the model request failed: {0}")]
    Request(String),
    /// The API answered with an error status (after the retries, for retryable ones).
    #[error("the API answered {status}{}: {body}", attempts_made(*attempts))]
    Api {
        /// HTTP status.
        status: u16,
        /// Response body.
        body: String,
        /// The attempts made, this one included; 0 when not said (an answer not retried,
        /// to a first attempt).
        attempts: u32,
    },
    /// The stream was malformed, cut short, or carried an `error` event.
    #[error("{0}")]
    Stream(String),
    /// The client could not be set up.
    #[error("{0}")]
    Setup(String),
}

/// ` (N attempts made)`, or nothing for 0 (not said).
fn attempts_made(attempts: u32) -> String {
    match attempts {
        0 => String::new(),
        1 => " (1 attempt made)".to_owned(),
        n => format!(" ({n} attempts made)"),
    }
}

/// One request to the model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelRequest {
    /// The model name.
    pub model: String,
    /// `max_tokens`.
    pub max_tokens: u32,
    /// The system prompt, if any.
    pub system: Option<String>,
    /// The tool definitions (`{name, description, input_schema[, defer_loading]}`).
    pub tools: Vec<Value>,
    /// The conversation, in the API's message format.
    pub messages: Vec<Value>,
    /// `anthropic-beta` values.
    pub betas: Vec<String>,
    /// Whether the body marks prompt-cache breakpoints (see [`ModelRequest::body`]).
    pub prompt_caching: bool,
    /// Asked before each retry: a reason not to retry any more (the run's spending limit
    /// reached meanwhile, by a sub-agent beside this request); `None` retries as configured.
    pub stop_retrying: Option<RetryStop>,
    /// Where the client counts the tokens an attempt's stream reports before its first
    /// content block, as they arrive: those events are held back until the attempt is
    /// known to answer, and an attempt retried after an overload, or one that fails there,
    /// still cost what its `message_start` said (the check before the next retry,
    /// [`stop_retrying`](Self::stop_retrying), sees it). The reader of the stream reports
    /// the rest on the same meter. `None`: nothing is counted here.
    pub usage: Option<UsageMeter>,
}

/// A check made before a request is retried ([`ModelRequest::stop_retrying`]): the reason
/// not to retry, if there is one.
#[derive(Clone)]
pub struct RetryStop(pub Arc<dyn Fn() -> Option<String> + Send + Sync>);

impl RetryStop {
    /// Why the request is not retried, if it must not be.
    fn reason(&self) -> Option<String> {
        (self.0)()
    }
}

impl std::fmt::Debug for RetryStop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RetryStop")
    }
}

impl PartialEq for RetryStop {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl ModelRequest {
    /// The request body (`stream: true`). With `prompt_caching`, the last block of the last
    /// message, and of the message the previous request ended with (the user message two
    /// back), carry `cache_control`: each request reads the prefix (tools, system prompt,
    /// conversation) the one before it wrote, at a tenth of the input price, and writes its
    /// own. The conversation itself is left unmarked (at most four breakpoints are allowed).
    pub fn body(&self) -> Value {
        let messages = if self.prompt_caching {
            let mut messages = self.messages.clone();
            let n = messages.len();
            for i in [n.checked_sub(1), n.checked_sub(3)].into_iter().flatten() {
                mark_for_cache(&mut messages[i]);
            }
            Value::Array(messages)
        } else {
            Value::Array(self.messages.clone())
        };
        let mut body = json!({
            "model": self.model,
            "max_tokens": self.max_tokens,
            "stream": true,
            "messages": messages,
        });
        if let Some(system) = &self.system {
            body["system"] = Value::String(system.clone());
        }
        if !self.tools.is_empty() {
            body["tools"] = Value::Array(self.tools.clone());
        }
        body
    }
}

/// Puts a prompt-cache breakpoint on `message`'s last content block (a text content
/// becomes one text block). Not on an empty text, nor on thinking, which cannot carry one.
fn mark_for_cache(message: &mut Value) {
    let content = &mut message["content"];
    if let Value::String(text) = content {
        if text.is_empty() {
            return;
        }
        *content = json!([{"type": "text", "text": text}]);
    }
    let Some(last) = content.as_array_mut().and_then(|blocks| blocks.last_mut()) else {
        return;
    };
    let markable = match last["type"].as_str() {
        Some("thinking" | "redacted_thinking") | None => false,
        Some("text") => last["text"].as_str().is_some_and(|t| !t.is_empty()),
        Some(_) => true,
    };
    if markable && let Some(block) = last.as_object_mut() {
        block.insert("cache_control".into(), json!({"type": "ephemeral"}));
    }
}

/// Whether prompt caching is turned off (`DISABLE_PROMPT_CACHING`, as in Claude Code).
pub fn prompt_caching_disabled() -> bool {
    std::env::var("DISABLE_PROMPT_CACHING").is_ok_and(|v| tool_core::env_truthy(&v))
}

/// A response as it streams: each item is an event, or the error that ended the stream.
pub type EventStream = BoxStream<'static, Result<StreamEvent, AgentError>>;

/// Something that answers [`ModelRequest`]s with a stream of events.
#[async_trait]
pub trait ModelClient: Send + Sync {
    /// Sends `request` and returns its response's events. Retries, if any, happen here,
    /// before the first event.
    async fn stream(&self, request: &ModelRequest) -> Result<EventStream, AgentError>;
}

/// Where and how to reach the Messages API. Its `Debug` never shows the key or the token.
#[derive(Clone)]
pub struct ClientConfig {
    /// `ANTHROPIC_BASE_URL` (default `https://api.anthropic.com`).
    pub base_url: String,
    /// `ANTHROPIC_API_KEY`, sent as `x-api-key`.
    pub api_key: Option<String>,
    /// `ANTHROPIC_AUTH_TOKEN`, sent as `Authorization: Bearer <token>` (a gateway's usual
    /// credential). Both are sent when both are set, as the Anthropic SDKs send them.
    pub auth_token: Option<String>,
    /// Attempts per request (first try included) on retryable failures.
    pub attempts: u32,
    /// The first retry's delay; each retry doubles it, up to 32 s, less a random part of up
    /// to a quarter (a `retry-after` header can lengthen it, up to a minute).
    pub backoff: Duration,
    /// `ANTHROPIC_CUSTOM_HEADERS`' headers ([`custom_headers`]), sent on every request: each
    /// replaces the header of its name the client sets (`User-Agent` included), but an
    /// `anthropic-beta` one is joined with the request's betas. Marked sensitive: a
    /// gateway's key often rides in one.
    pub headers: reqwest::header::HeaderMap,
}

impl std::fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let redacted = |set: &Option<String>| {
            if set.is_some() {
                "<redacted>"
            } else {
                "<unset>"
            }
        };
        f.debug_struct("ClientConfig")
            .field("base_url", &tool_core::redact_url(&self.base_url))
            .field("api_key", &redacted(&self.api_key))
            .field("auth_token", &redacted(&self.auth_token))
            .field("attempts", &self.attempts)
            .field("backoff", &self.backoff)
            // The names only: the values are often secrets.
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl ClientConfig {
    /// A POST of `body` to the API's Messages endpoint through `http`, asking for `accept`,
    /// with the API version and the key or token. The custom headers are the caller's to add
    /// last, each replacing the one of its name set here.
    pub(super) fn messages_request(
        &self,
        http: &reqwest::Client,
        accept: &str,
        body: &Value,
    ) -> reqwest::RequestBuilder {
        let url = format!("{}/v1/messages", self.base_url.trim_end_matches('/'));
        let mut builder = http
            .post(url)
            .header("anthropic-version", ANTHROPIC_VERSION)
            .header("accept", accept)
            .json(body);
        if let Some(key) = &self.api_key {
            builder = builder.header("x-api-key", key);
        }
        if let Some(token) = &self.auth_token {
            builder = builder.bearer_auth(token);
        }
        builder
    }

    /// From the environment: `ANTHROPIC_API_KEY` or `ANTHROPIC_AUTH_TOKEN` (at least one;
    /// both are sent when both are set), `ANTHROPIC_BASE_URL`, `CLAUDE_CODE_MAX_RETRIES`
    /// (retries after the first attempt, default 3) and `ANTHROPIC_CUSTOM_HEADERS`. What is
    /// wrong with the last two is traced as a warning; a host that shows it to its user takes
    /// it from [`from_env_with_warnings`](Self::from_env_with_warnings).
    pub fn from_env() -> Result<Self, AgentError> {
        let (config, warnings) = Self::from_env_with_warnings()?;
        for warning in warnings {
            tracing::warn!("{warning}");
        }
        Ok(config)
    }

    /// [`from_env`](Self::from_env), with what a user should be told of the variables'
    /// values (a line of `ANTHROPIC_CUSTOM_HEADERS` that is no header), each a sentence.
    pub fn from_env_with_warnings() -> Result<(Self, Vec<String>), AgentError> {
        let (api_key, auth_token) = credentials(
            credential_var("ANTHROPIC_API_KEY")?,
            credential_var("ANTHROPIC_AUTH_TOKEN")?,
        )?;
        let mut warnings = Vec::new();
        let (retries, said) = max_retries(std::env::var("CLAUDE_CODE_MAX_RETRIES").ok().as_deref());
        warnings.extend(said);
        let headers = match std::env::var("ANTHROPIC_CUSTOM_HEADERS") {
            Ok(value) => {
                let (headers, said) = custom_headers(&value);
                warnings.extend(said);
                headers
            }
            Err(std::env::VarError::NotPresent) => reqwest::header::HeaderMap::new(),
            Err(std::env::VarError::NotUnicode(_)) => {
                warnings.push(
                    "ANTHROPIC_CUSTOM_HEADERS is not valid UTF-8: none of its headers is sent"
                        .to_owned(),
                );
                reqwest::header::HeaderMap::new()
            }
        };
        let config = Self {
            base_url: base_url(std::env::var("ANTHROPIC_BASE_URL").ok())?,
            api_key,
            auth_token,
            attempts: retries.saturating_add(1),
            backoff: Duration::from_millis(500),
            headers,
        };
        Ok((config, warnings))
    }
}

/// The retries after a first attempt `CLAUDE_CODE_MAX_RETRIES`' `value` asks for: a whole
/// number, 0 or more (white space around it allowed; one too large to hold is the largest).
/// Unset or blank, the default, 3; any other value (`abc`, `-1`, `1.5`) is not used: the
/// default is, and a sentence naming the variable, its value and what is used says so, as
/// for the other numeric variables.
fn max_retries(value: Option<&str>) -> (u32, Option<String>) {
    const DEFAULT: u32 = 3;
    let Some(raw) = value else {
        return (DEFAULT, None);
    };
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return (DEFAULT, None);
    }
    if !trimmed.bytes().all(|b| b.is_ascii_digit()) {
        return (
            DEFAULT,
            Some(format!(
                "CLAUDE_CODE_MAX_RETRIES={raw:?} is not a whole number of retries (0 or more); the default, {DEFAULT}, is used"
            )),
        );
    }
    (trimmed.parse::<u32>().unwrap_or(u32::MAX), None)
}

/// Says a retry to whoever runs the client ([`AnthropicClient::with_retry_notices`]): one
/// sentence each, what failed, the wait and the attempt coming (`the API answered 529
/// (overloaded_error: Overloaded); retrying in 2.0 s (attempt 2 of 4)`).
#[derive(Clone)]
pub struct RetryNotices(pub Arc<dyn Fn(&str) + Send + Sync>);

impl std::fmt::Debug for RetryNotices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RetryNotices")
    }
}

/// An error answer in a few words for a retry's line: its status, and the API's error type
/// and message when its body is the API's JSON error (an HTML page or a long body is left
/// out; the final error, if it comes to that, has it whole).
fn answer_in_brief(status: u16, body: &str) -> String {
    let error = serde_json::from_str::<Value>(body)
        .ok()
        .map(|v| v["error"].clone())
        .filter(Value::is_object);
    let detail = error.map(|e| {
        let kind = e["type"].as_str().unwrap_or("error");
        match e["message"].as_str().filter(|m| !m.is_empty()) {
            Some(message) => format!(" ({kind}: {})", brief(message)),
            None => format!(" ({})", brief(kind)),
        }
    });
    format!("the API answered {status}{}", detail.unwrap_or_default())
}

/// `text` cut to 200 characters, its cut said.
fn brief(text: &str) -> String {
    const MAX: usize = 200;
    match text.char_indices().nth(MAX) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// The headers of `ANTHROPIC_CUSTOM_HEADERS`' `value`, as Claude Code reads it: one
/// `Name: Value` a line (LF or CRLF), white space around the name and the value dropped,
/// blank lines skipped, a name given twice taking its last value. A line that is no header
/// (no `:`, no name, a name or a value no HTTP header can have) is not sent, and a sentence
/// says so by its line number, never its text (the values are secrets, and a broken line
/// may be one whole). The values are marked sensitive.
pub fn custom_headers(value: &str) -> (reqwest::header::HeaderMap, Vec<String>) {
    use reqwest::header::{HeaderName, HeaderValue};
    let mut headers = reqwest::header::HeaderMap::new();
    let mut warnings = Vec::new();
    for (i, line) in value.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim().is_empty() {
            continue;
        }
        let wrong = match line.split_once(':') {
            None => Some("it has no `:` between a name and a value"),
            Some((name, _)) if name.trim().is_empty() => Some("it has no name before its `:`"),
            Some((name, value)) => match (
                HeaderName::from_bytes(name.trim().as_bytes()),
                HeaderValue::from_str(value.trim()),
            ) {
                (Err(_), _) => Some("its name is not one an HTTP header can have"),
                (_, Err(_)) => Some("its value holds a character an HTTP header cannot carry"),
                (Ok(name), Ok(mut value)) => {
                    value.set_sensitive(true);
                    headers.insert(name, value);
                    None
                }
            },
        };
        if let Some(wrong) = wrong {
            warnings.push(format!(
                "ANTHROPIC_CUSTOM_HEADERS line {} is not a header (`Name: Value`): {wrong}; it is not sent",
                i + 1
            ));
        }
    }
    (headers, warnings)
}

/// The `User-Agent` of every request, unless `ANTHROPIC_CUSTOM_HEADERS` sets one.
pub const USER_AGENT: &str = concat!("toolwright/", env!("CARGO_PKG_VERSION"));

/// The API's base URL from `ANTHROPIC_BASE_URL`'s value (`https://api.anthropic.com` when
/// unset or blank): an absolute http(s) URL, or an error naming the variable.
fn base_url(value: Option<String>) -> Result<String, AgentError> {
    let Some(value) = value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()) else {
        return Ok("https://api.anthropic.com".to_owned());
    };
    match reqwest::Url::parse(&value) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.has_host() => Ok(value),
        Ok(url) => Err(AgentError::Setup(format!(
            "ANTHROPIC_BASE_URL ({:?}) is not an http or https URL (scheme `{}`)",
            tool_core::redact_url(&value),
            url.scheme()
        ))),
        Err(e) => Err(AgentError::Setup(format!(
            "ANTHROPIC_BASE_URL ({:?}) is not a URL: {e}",
            tool_core::redact_url(&value)
        ))),
    }
}

/// The credential of the variable `name` whose value is `value`: surrounding whitespace (a
/// key read from a file with CRLF line ends) is dropped, and a blank value is none; one that
/// holds a control character is refused with what is wrong (never shown: it is a secret),
/// never sent as a header the HTTP client refuses.
fn credential(name: &str, value: Option<String>) -> Result<Option<String>, AgentError> {
    let value = value.as_deref().map(str::trim).unwrap_or_default();
    if value.is_empty() {
        return Ok(None);
    }
    if let Some(c) = value.chars().find(|c| c.is_control()) {
        return Err(AgentError::Setup(format!(
            "{name} contains a control character ({c:?}); check how it was set"
        )));
    }
    Ok(Some(value.to_owned()))
}

/// The value of the credential variable `name`: `None` when it is not set; an error that
/// says so when it is set but is not UTF-8 (no header can carry it; never "not set").
fn credential_var(name: &str) -> Result<Option<String>, AgentError> {
    match std::env::var(name) {
        Ok(value) => Ok(Some(value)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(AgentError::Setup(format!(
            "{name} is set but is not valid UTF-8; check how it was set"
        ))),
    }
}

/// The API key and the auth token of `ANTHROPIC_API_KEY`'s and `ANTHROPIC_AUTH_TOKEN`'s
/// values ([`credential`]): at least one of them, else an error that names both.
fn credentials(
    key: Option<String>,
    token: Option<String>,
) -> Result<(Option<String>, Option<String>), AgentError> {
    let key = credential("ANTHROPIC_API_KEY", key)?;
    let token = credential("ANTHROPIC_AUTH_TOKEN", token)?;
    if key.is_none() && token.is_none() {
        return Err(AgentError::Setup(
            "ANTHROPIC_API_KEY is not set, nor is ANTHROPIC_AUTH_TOKEN: set the API key (sent as x-api-key) or a gateway's token (sent as Authorization: Bearer)".into(),
        ));
    }
    Ok((key, token))
}

/// The Anthropic Messages API over HTTPS (reqwest with rustls): `POST {base}/v1/messages`
/// with `stream: true`, retried with backoff on 408, 409, 429, 529 and 5xx answers (or as
/// `x-should-retry` says) and on connection failures before the first byte.
#[derive(Debug, Clone)]
pub struct AnthropicClient {
    http: reqwest::Client,
    config: ClientConfig,
    silence: SilenceLimit,
    notices: Option<RetryNotices>,
}

/// How long a response may stay silent, and whether `API_TIMEOUT_MS` said so: what a
/// silence that ended the request is reported as. WebSearch's requests share it.
#[derive(Debug, Clone, Copy)]
pub(super) struct SilenceLimit {
    limit: Duration,
    from_env: bool,
}

impl std::fmt::Display for SilenceLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = self.limit.as_millis();
        if self.from_env {
            write!(f, "no byte came for {ms} ms (API_TIMEOUT_MS={ms})")
        } else {
            write!(
                f,
                "no byte came for {ms} ms (API_TIMEOUT_MS is not set: the default)"
            )
        }
    }
}

impl SilenceLimit {
    /// `e` in words: a silence past the limit says so (reqwest's own text is "error decoding
    /// response body: operation timed out"), anything else (a connection that could not be
    /// made in time included) is the error and its sources.
    pub(super) fn describe(self, e: &reqwest::Error) -> String {
        if e.is_timeout() && !e.is_connect() {
            self.to_string()
        } else {
            request_error(e)
        }
    }
}

/// Whether an error answer is retried: what the API's `x-should-retry` header says when it
/// says it, else 408 (timeout), 409 (conflict), 429 (rate limit), 529 (overloaded) and other
/// 5xx, as the Anthropic SDKs and Claude Code retry. WebSearch's requests retry the same.
pub(super) fn retryable(status: u16, should_retry: Option<&str>) -> bool {
    match should_retry {
        Some("true") => true,
        Some("false") => false,
        _ => matches!(status, 408 | 409 | 429) || (500..600).contains(&status),
    }
}

/// The longest wait between two attempts: doubling stops here (Claude Code's 32 s).
const MAX_BACKOFF: Duration = Duration::from_secs(32);

/// The wait before attempt `attempt + 1`: `base` doubled per attempt up to [`MAX_BACKOFF`],
/// less up to a quarter at random so that agents hitting a limit together do not all come
/// back at the same moment, and never less than what the server asked for. WebSearch's
/// retries wait the same.
pub(super) fn retry_delay(base: Duration, attempt: u32, asked: Option<Duration>) -> Duration {
    use std::hash::{BuildHasher as _, Hasher as _};
    let doubled = base
        .saturating_mul(
            1u32.checked_shl(attempt.saturating_sub(1))
                .unwrap_or(u32::MAX),
        )
        .min(MAX_BACKOFF);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(attempt);
    #[expect(clippy::cast_precision_loss, reason = "a fraction for jitter")]
    let random = (hasher.finish() % 1000) as f64 / 1000.0;
    let jittered = doubled.mul_f64(1.0 - 0.25 * random);
    asked.map_or(jittered, |w| w.max(jittered))
}

/// A request's error in words ([`error_chain`]), the URL it names with its user info and
/// query redacted ([`tool_core::redact_url`]): a gateway's key in `ANTHROPIC_BASE_URL`'s
/// query would otherwise be printed, and stderr is often logged.
fn request_error(e: &reqwest::Error) -> String {
    let text = error_chain(e);
    match e.url() {
        Some(url) => text.replace(url.as_str(), &tool_core::redact_url(url.as_str())),
        None => text,
    }
}

/// An error and its sources, joined with `: ` (reqwest's own text alone hides the cause).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

/// The delay an HTTP answer's headers ask for before a retry (`retry-after-ms` in
/// milliseconds, else `Retry-After` in seconds or as an HTTP-date), capped at a minute;
/// `None` when they ask for none this reads. The Messages API client and the telemetry
/// exporter both heed it.
pub fn retry_after(headers: &http::HeaderMap) -> Option<Duration> {
    let text = |name: &str| -> Option<&str> { Some(headers.get(name)?.to_str().ok()?.trim()) };
    let number = |name: &str| -> Option<f64> {
        text(name)?
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
    };
    // An HTTP-date (`Wed, 21 Oct 2015 07:28:00 GMT`): the wait until then, none once past.
    let until_date = || -> Option<f64> {
        let date = chrono::DateTime::parse_from_rfc2822(text("retry-after")?).ok()?;
        let wait = date.with_timezone(&chrono::Utc) - chrono::Utc::now();
        Some(wait.to_std().map_or(0.0, |d| d.as_secs_f64()))
    };
    let secs = number("retry-after-ms")
        .map(|ms| ms / 1000.0)
        .or_else(|| number("retry-after"))
        .or_else(until_date)?;
    Some(Duration::from_secs_f64(secs.min(60.0)))
}

/// How long a response may stay silent: `API_TIMEOUT_MS` (Claude Code's variable), else ten
/// minutes.
pub(super) fn read_timeout() -> SilenceLimit {
    let set = std::env::var("API_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|ms| *ms > 0);
    SilenceLimit {
        limit: set.map_or(Duration::from_secs(600), Duration::from_millis),
        from_env: set.is_some(),
    }
}

/// The most of an error response's body that is kept (and printed).
const MAX_ERROR_BODY: usize = 64 * 1024;

/// `head` (what was read of a body already) and the rest of the body from `rest`, up to
/// [`MAX_ERROR_BODY`], as text; what is cut is said. A read that fails ends the body there.
async fn capped_text<S, B, E>(mut head: Vec<u8>, mut rest: S) -> String
where
    S: futures::Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
{
    while head.len() <= MAX_ERROR_BODY {
        match rest.next().await {
            Some(Ok(chunk)) => head.extend_from_slice(chunk.as_ref()),
            Some(Err(_)) | None => break,
        }
    }
    let cut = head.len() > MAX_ERROR_BODY;
    head.truncate(MAX_ERROR_BODY);
    let mut text = String::from_utf8_lossy(&head).into_owned();
    if cut {
        text.push_str("… [response cut at 64 KiB]");
    }
    text
}

/// The HTTP client of requests to the Messages API (the streaming client's and
/// WebSearch's): rustls, [`USER_AGENT`], 30 seconds to connect, and `silence` the longest a
/// response may stay silent.
pub(super) fn http_client(silence: SilenceLimit) -> Result<reqwest::Client, AgentError> {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may have installed one meanwhile; either way one is installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    reqwest::Client::builder()
        // A default header: one `ANTHROPIC_CUSTOM_HEADERS` sets replaces it.
        .user_agent(USER_AGENT)
        .connect_timeout(Duration::from_secs(30))
        // A connection that goes silent (no byte, not even the stream's pings) for this
        // long fails instead of hanging the run.
        .read_timeout(silence.limit)
        .build()
        .map_err(|e| AgentError::Setup(format!("cannot build the HTTP client: {e}")))
}

impl AnthropicClient {
    /// A client for `config`.
    pub fn new(config: ClientConfig) -> Result<Self, AgentError> {
        let silence = read_timeout();
        let http = http_client(silence)?;
        Ok(Self {
            http,
            config,
            silence,
            notices: None,
        })
    }

    /// The client, saying each retry to `notices` (the command line prints it on stderr)
    /// besides tracing it: a wait of up to a minute is not silence.
    #[must_use]
    pub fn with_retry_notices(mut self, notices: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.notices = Some(RetryNotices(Arc::new(notices)));
        self
    }

    /// Says a retry: `cause`, the wait, and the attempt coming of `attempts`.
    fn say_retry(&self, cause: &str, wait: Duration, next: u32, attempts: u32) {
        let text = format!(
            "{cause}; retrying in {:.1} s (attempt {next} of {attempts})",
            wait.as_secs_f64()
        );
        tracing::warn!("{text}");
        if let Some(notices) = &self.notices {
            (notices.0)(&text);
        }
    }

    /// Before retry `attempt + 1` of `request`, after `cause`: asks whether the request
    /// must stop retrying (the spending limit reached), then says the retry and waits
    /// `delay`, then asks again (a sub-agent beside it may have reached the limit
    /// meanwhile). The reason not to retry, if there is one: a retry is never said that is
    /// not made, nor waited for.
    async fn wait_to_retry(
        &self,
        request: &ModelRequest,
        cause: &str,
        delay: Duration,
        attempt: u32,
    ) -> Option<String> {
        let stop = || request.stop_retrying.as_ref().and_then(RetryStop::reason);
        if let Some(why) = stop() {
            return Some(why);
        }
        self.say_retry(cause, delay, attempt + 1, self.config.attempts.max(1));
        tokio::time::sleep(delay).await;
        stop()
    }

    /// The client's configuration.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// Sends `request` until it is answered with a success status or the attempts are used
    /// up; `attempt` is the number of the first attempt, and is left at the last one made.
    async fn send(
        &self,
        request: &ModelRequest,
        attempt: &mut u32,
    ) -> Result<reqwest::Response, AgentError> {
        let body = request.body();
        let attempts = self.config.attempts.max(1);
        loop {
            let mut builder = self
                .config
                .messages_request(&self.http, "text/event-stream", &body);
            // The custom headers last, each replacing the one of its name set above; a
            // custom `anthropic-beta` keeps the request's betas beside its own.
            let mut headers = self.config.headers.clone();
            let mut betas: Vec<&str> = headers
                .get_all("anthropic-beta")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .collect();
            if !request.betas.is_empty() {
                betas.extend(request.betas.iter().map(String::as_str));
                if let Ok(value) = reqwest::header::HeaderValue::from_str(&betas.join(",")) {
                    headers.insert("anthropic-beta", value);
                }
            }
            builder = builder.headers(headers);
            let attempt_now = *attempt;
            let failure = match builder.send().await {
                Ok(response) if response.status().is_success() => return Ok(response),
                Ok(response) => {
                    let status = response.status().as_u16();
                    let wait = retry_after(response.headers());
                    let should_retry = response
                        .headers()
                        .get("x-should-retry")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned);
                    let text = capped_text(Vec::new(), Box::pin(response.bytes_stream())).await;
                    let retried = retryable(status, should_retry.as_deref());
                    if !retried || attempt_now >= attempts {
                        // How many attempts were made, when retries were made or would have
                        // been (whether raising CLAUDE_CODE_MAX_RETRIES could help).
                        let said = if retried || attempt_now > 1 {
                            attempt_now
                        } else {
                            0
                        };
                        return Err(AgentError::Api {
                            status,
                            body: text,
                            attempts: said,
                        });
                    }
                    (
                        format!("{status}: {text}"),
                        answer_in_brief(status, &text),
                        wait,
                    )
                }
                Err(e) if e.is_builder() => {
                    return Err(AgentError::Request(self.silence.describe(&e)));
                }
                Err(e) if attempt_now >= attempts => {
                    return Err(AgentError::Request(format!(
                        "{}{}",
                        self.silence.describe(&e),
                        attempts_made(attempt_now)
                    )));
                }
                Err(e) => {
                    let cause = self.silence.describe(&e);
                    let brief_cause = format!("the model request failed: {}", brief(&cause));
                    (cause, brief_cause, None)
                }
            };
            let (failure, brief_failure, wait) = failure;
            let delay = retry_delay(self.config.backoff, attempt_now, wait);
            if let Some(why) = self
                .wait_to_retry(request, &brief_failure, delay, attempt_now)
                .await
            {
                return Err(AgentError::Request(format!(
                    "{failure} (not retried: {why})"
                )));
            }
            *attempt += 1;
        }
    }
}

/// The state of one response being parsed.
struct Parsing {
    /// The body's chunks; an error is the text of what broke the stream.
    bytes: BoxStream<'static, Result<Vec<u8>, String>>,
    parser: AnthropicStream,
    /// Bytes of an incomplete UTF-8 character at the end of the last chunk.
    carry: Vec<u8>,
    ready: VecDeque<StreamEvent>,
    done: bool,
    /// The last error was an `error` event the API says to retry (`overloaded_error`,
    /// `api_error`: a 529 or 500 that came after the 200).
    retryable: bool,
    /// The last error was the connection's: the body broke off, stayed silent past the
    /// limit, or ended before `message_stop` (not something the body said).
    cut: bool,
    /// Whether any byte of the body came.
    bytes_seen: bool,
}

impl Parsing {
    /// Parses the response body `bytes`.
    fn new(bytes: BoxStream<'static, Result<Vec<u8>, String>>) -> Self {
        Self {
            bytes,
            parser: AnthropicStream::new(),
            carry: Vec::new(),
            ready: VecDeque::new(),
            done: false,
            retryable: false,
            cut: false,
            bytes_seen: false,
        }
    }

    fn feed(&mut self, chunk: &[u8]) -> Result<(), AgentError> {
        self.carry.extend_from_slice(chunk);
        let valid = match std::str::from_utf8(&self.carry) {
            Ok(_) => self.carry.len(),
            // An incomplete character at the end waits for the next chunk; anything else is
            // replaced, as `from_utf8_lossy` would.
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => self.carry.len(),
        };
        let rest = self.carry.split_off(valid);
        let text = String::from_utf8_lossy(&self.carry).into_owned();
        self.carry = rest;
        let events = self.parser.feed(&text).map_err(|e| self.failed(&e))?;
        self.ready.extend(events);
        Ok(())
    }

    /// `e` as the run reports it, noting whether the API said to retry.
    fn failed(&mut self, e: &tool_exec::StreamError) -> AgentError {
        self.retryable = matches!(
            e,
            tool_exec::StreamError::Api { kind, .. }
                if kind == "overloaded_error" || kind == "api_error"
        );
        AgentError::Stream(e.to_string())
    }

    async fn next(&mut self) -> Option<Result<StreamEvent, AgentError>> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                if event == StreamEvent::MessageStop {
                    // The message is complete: what the connection may still carry (a
                    // gateway's end marker, or nothing while it stays open) is not waited for.
                    self.ready.clear();
                    self.done = true;
                }
                return Some(Ok(event));
            }
            if self.done {
                return None;
            }
            match self.bytes.next().await {
                Some(Ok(chunk)) => {
                    self.bytes_seen |= !chunk.is_empty();
                    if let Err(e) = self.feed(&chunk) {
                        self.done = true;
                        return Some(Err(e));
                    }
                }
                Some(Err(e)) => {
                    self.done = true;
                    self.cut = true;
                    return Some(Err(AgentError::Stream(format!(
                        "the response stream broke off: {e}"
                    ))));
                }
                None if !self.bytes_seen => {
                    self.done = true;
                    self.cut = true;
                    return Some(Err(AgentError::Stream(
                        "the response was empty: its stream ended before any event".into(),
                    )));
                }
                None => {
                    self.done = true;
                    let tail = std::mem::take(&mut self.carry);
                    if !tail.is_empty()
                        && let Err(e) = self.parser.feed(&String::from_utf8_lossy(&tail))
                    {
                        return Some(Err(self.failed(&e)));
                    }
                    match self.parser.finish() {
                        Ok(events) => self.ready.extend(events),
                        Err(e) => {
                            self.cut = matches!(e, tool_exec::StreamError::Truncated);
                            return Some(Err(self.failed(&e)));
                        }
                    }
                }
            }
        }
    }
}

/// Whether a `Content-Type` names an event stream. Media types are case-insensitive (RFC
/// 9110 8.3.1): `Text/Event-Stream; charset=utf-8` is one.
fn is_event_stream(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("text/event-stream"))
}

/// The most of a body read to tell whether it is an event stream (blank lines before the
/// first field included).
const MAX_SNIFF: usize = 64 * 1024;

/// Whether a body beginning with `head` is an event stream: its first line that is not
/// blank is an SSE field (`event:`, `data:`, `id:`, `retry:`) or comment (`:`), after a
/// byte-order mark, if any. `None`: `head` is too short to tell (`ended`: the body has no
/// more, so what is there decides).
fn starts_as_event_stream(head: &[u8], ended: bool) -> Option<bool> {
    const FIELDS: [&[u8]; 5] = [b":", b"event:", b"data:", b"id:", b"retry:"];
    let head = head.strip_prefix("\u{feff}".as_bytes()).unwrap_or(head);
    let start = head.iter().position(|b| !matches!(b, b'\r' | b'\n'));
    let Some(start) = start else {
        return (ended || head.len() >= MAX_SNIFF).then_some(false);
    };
    let line = &head[start..];
    if FIELDS.iter().any(|f| line.starts_with(f)) {
        return Some(true);
    }
    let complete = ended || line.contains(&b'\n') || line.contains(&b'\r');
    if !complete && FIELDS.iter().any(|f| f.starts_with(line)) {
        return None;
    }
    Some(false)
}

#[async_trait]
impl ModelClient for AnthropicClient {
    async fn stream(&self, request: &ModelRequest) -> Result<EventStream, AgentError> {
        let attempts = self.config.attempts.max(1);
        let mut attempt = 1;
        loop {
            let response = self.send(request, &mut attempt).await?;
            let content_type = response
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_owned();
            let status = response.status().as_u16();
            // The API's id of this response, which the transcript records (`requestId`).
            let request_id = response
                .headers()
                .get("request-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let silence = self.silence;
            let mut bytes = response
                .bytes_stream()
                .map(move |chunk| chunk.map(|b| b.to_vec()).map_err(|e| silence.describe(&e)))
                .boxed();
            // Another Content-Type (a gateway's `text/plain`, or none): the body decides, as
            // the SDKs parse any body as an event stream. One that is not (a proxy that
            // ignored `stream: true`, an error page sent as a success) is refused with what
            // it was.
            let mut head = Vec::new();
            if !is_event_stream(&content_type) {
                let mut ended = false;
                loop {
                    match starts_as_event_stream(&head, ended) {
                        // No body at all is no other kind of body: said to be empty, and
                        // retried, as an event stream that ended before any event is.
                        Some(true) => break,
                        Some(false) if ended && head.is_empty() => break,
                        Some(false) => {
                            let body = capped_text(head, &mut bytes).await;
                            return Err(AgentError::Stream(format!(
                                "the API answered {status} with {} instead of an event stream: {body}",
                                if content_type.is_empty() {
                                    "no Content-Type"
                                } else {
                                    &content_type
                                }
                            )));
                        }
                        None => match bytes.next().await {
                            Some(Ok(chunk)) => head.extend_from_slice(&chunk),
                            Some(Err(e)) => {
                                return Err(AgentError::Stream(format!(
                                    "the response stream broke off: {e}"
                                )));
                            }
                            None => ended = true,
                        },
                    }
                }
            }
            let bytes = if head.is_empty() {
                bytes
            } else {
                futures::stream::iter([Ok(head)]).chain(bytes).boxed()
            };
            let mut parsing = Parsing::new(bytes);
            // Up to the first content: an overload reported then (nothing shown, nothing
            // run) is retried like a 529.
            let mut early = VecDeque::new();
            let failed = loop {
                match parsing.next().await {
                    Some(Ok(event)) => {
                        let content = !matches!(
                            event,
                            StreamEvent::MessageStart { .. } | StreamEvent::Usage { .. }
                        );
                        // Counted as it arrives: whatever happens next, the attempt cost it.
                        if let (Some(meter), Some(now)) =
                            (&request.usage, TokenUsage::reported(&event))
                        {
                            meter.report(&now);
                        }
                        early.push_back(event);
                        if content {
                            break None;
                        }
                    }
                    Some(Err(e)) => break Some(e),
                    None => break None,
                }
            };
            match failed {
                Some(e) if parsing.retryable && attempt < attempts => {
                    // Its tokens stay counted; the next attempt's start from zero.
                    if let Some(meter) = &request.usage {
                        meter.next_attempt();
                    }
                    let delay = retry_delay(self.config.backoff, attempt, None);
                    if let Some(why) = self
                        .wait_to_retry(request, &brief(&e.to_string()), delay, attempt)
                        .await
                    {
                        return Err(AgentError::Request(format!(
                            "the API reported an overload before any content (not retried: {why})"
                        )));
                    }
                    attempt += 1;
                }
                // A 200 whose body broke off, stayed silent or ended before any content
                // (nothing, or only its `message_start`): nothing was shown or run, so it is
                // retried as a connection that failed before its first byte is.
                Some(e) if parsing.cut && attempt < attempts => {
                    if let Some(meter) = &request.usage {
                        meter.next_attempt();
                    }
                    let delay = retry_delay(self.config.backoff, attempt, None);
                    if let Some(why) = self
                        .wait_to_retry(request, &brief(&e.to_string()), delay, attempt)
                        .await
                    {
                        return Err(AgentError::Request(format!("{e} (not retried: {why})")));
                    }
                    attempt += 1;
                }
                // An overload, or a stream cut before any content, still there at the last
                // attempt: how many were made.
                Some(AgentError::Stream(e)) if parsing.retryable || parsing.cut => {
                    return Err(AgentError::Stream(format!("{e}{}", attempts_made(attempt))));
                }
                Some(e) => return Err(e),
                None => {
                    early.append(&mut parsing.ready);
                    parsing.ready = early;
                    return Ok(futures::stream::unfold(parsing, |mut p| async move {
                        let item = p.next().await?;
                        Some((item, p))
                    })
                    .map(move |item| match item {
                        Ok(StreamEvent::MessageStart { id, model, .. }) => {
                            Ok(StreamEvent::MessageStart {
                                id,
                                model,
                                request_id: request_id.clone(),
                            })
                        }
                        other => other,
                    })
                    .boxed());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {

    /// Any case and parameters: an event stream; anything else (a proxy's HTML page, JSON,
    /// a type that only begins like one): not.
    #[test]
    fn event_streams_are_known_by_media_type_in_any_case() {
        for yes in [
            "text/event-stream",
            "Text/Event-Stream",
            " text/event-stream; charset=utf-8",
        ] {
            assert!(is_event_stream(yes), "{yes}");
        }
        for no in ["", "application/json", "text/html", "text/event-streamx"] {
            assert!(!is_event_stream(no), "{no}");
        }
    }

    /// A body is an event stream when its first line that is not blank is an SSE field or
    /// comment; a partial first line that could still become one waits for more.
    #[test]
    fn a_body_is_known_as_an_event_stream_by_its_first_line() {
        for (head, ended, verdict) in [
            (&b"event: message_start\n"[..], false, Some(true)),
            (b"\r\n\n: ping\n", false, Some(true)),
            (b"\xef\xbb\xbfdata: {}", false, Some(true)),
            (b"\n\neve", false, None),
            (b"\n\neve", true, Some(false)),
            (b"", false, None),
            (b"", true, Some(false)),
            (b"{\"type\": \"message\"}", false, Some(false)),
            (b"<html>", false, Some(false)),
            (b"events: x\n", false, Some(false)),
        ] {
            assert_eq!(
                starts_as_event_stream(head, ended),
                verdict,
                "{:?}",
                String::from_utf8_lossy(head)
            );
        }
    }

    /// A key from a CRLF file loses its line end; a control character inside, or neither a
    /// key nor a token, is refused with a message that names the variables (never the
    /// value); a token alone, or both, will do.
    #[test]
    fn the_credentials_are_trimmed_and_checked() {
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(
            credentials(some("sk-x\r\n"), None).unwrap(),
            (some("sk-x"), None)
        );
        assert_eq!(
            credentials(some(" "), some("tok\n")).unwrap(),
            (None, some("tok"))
        );
        assert_eq!(
            credentials(some("k"), some("t")).unwrap(),
            (some("k"), some("t"))
        );
        let err = credentials(some("sk-\u{7}x"), None)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("ANTHROPIC_API_KEY contains a control character") && !err.contains("sk-"),
            "{err}"
        );
        let err = credentials(None, some("secret\u{1b}"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("ANTHROPIC_AUTH_TOKEN contains a control character")
                && !err.contains("secret"),
            "{err}"
        );
        let err = credentials(some("  "), None).unwrap_err().to_string();
        assert!(
            err.contains("ANTHROPIC_API_KEY is not set, nor is ANTHROPIC_AUTH_TOKEN"),
            "{err}"
        );
        assert!(credentials(None, None).is_err());
        let config = ClientConfig {
            base_url: "http://x".into(),
            api_key: some("sk-secret"),
            auth_token: some("tok-secret"),
            attempts: 1,
            backoff: Duration::ZERO,
            headers: custom_headers("X-Gateway-Key: gw-secret").0,
        };
        let shown = format!("{config:?}");
        assert!(
            !shown.contains("secret") && shown.contains("x-gateway-key"),
            "{shown}"
        );
    }

    /// Found by review: `ANTHROPIC_CUSTOM_HEADERS` was ignored. Its lines are read as
    /// Claude Code reads them (`Name: Value`, white space around each dropped, blank lines
    /// skipped, LF or CRLF, the last of a name winning); a line that is no header is said
    /// by its number, never with its text, and is not sent.
    #[test]
    fn custom_headers_are_read_as_claude_code_reads_them() {
        let (headers, warnings) = custom_headers(
            "X-Gateway-Key:  gw-secret \r\n\n  X-Team: infra\nno-colon-secret\n: bare-secret\nbad name: v\nX-Ctl: a\u{7}b-secret\nx-team: ops\nX-Empty:",
        );
        let got: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_owned()))
            .collect();
        assert_eq!(
            got,
            [
                ("x-gateway-key".to_owned(), "gw-secret".to_owned()),
                ("x-team".to_owned(), "ops".to_owned()),
                ("x-empty".to_owned(), String::new()),
            ]
        );
        assert!(
            headers
                .values()
                .all(reqwest::header::HeaderValue::is_sensitive)
        );
        assert_eq!(warnings.len(), 4, "{warnings:?}");
        for (warning, line) in warnings.iter().zip([4, 5, 6, 7]) {
            assert!(
                warning.starts_with(&format!(
                    "ANTHROPIC_CUSTOM_HEADERS line {line} is not a header"
                )),
                "{warning}"
            );
            assert!(
                !warning.contains("secret") && !warning.contains("bad"),
                "{warning}"
            );
        }
        assert!(custom_headers("").0.is_empty() && custom_headers("").1.is_empty());
    }

    /// Found by review: an invalid `CLAUDE_CODE_MAX_RETRIES` fell back to the default
    /// without a word; it is said, as for the other numeric variables. Blank is unset.
    #[test]
    fn max_retries_is_a_whole_number_or_the_default_with_a_warning() {
        assert_eq!(max_retries(None), (3, None));
        assert_eq!(max_retries(Some(" ")), (3, None));
        assert_eq!(max_retries(Some("0")), (0, None));
        assert_eq!(max_retries(Some(" 7 ")), (7, None));
        assert_eq!(max_retries(Some("99999999999")), (u32::MAX, None));
        for bad in ["abc", "-1", "1.5", "+2"] {
            let (retries, warning) = max_retries(Some(bad));
            assert_eq!(retries, 3, "{bad}");
            assert_eq!(
                warning.as_deref(),
                Some(
                    format!(
                        "CLAUDE_CODE_MAX_RETRIES={bad:?} is not a whole number of retries (0 or more); the default, 3, is used"
                    )
                    .as_str()
                )
            );
        }
    }

    /// A retry's line says the status and, of the API's JSON error, its type and message
    /// (cut to 200 characters); another body (a proxy's page) is left out of it. The final
    /// error says how many attempts were made once retries were or would have been made.
    #[test]
    fn retries_and_their_end_are_said_in_brief() {
        assert_eq!(
            answer_in_brief(
                529,
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            "the API answered 529 (overloaded_error: Overloaded)"
        );
        assert_eq!(
            answer_in_brief(502, "<html>Bad gateway</html>"),
            "the API answered 502"
        );
        let long = json!({"error": {"type": "x", "message": "m".repeat(500)}}).to_string();
        assert_eq!(
            answer_in_brief(500, &long).chars().count(),
            "the API answered 500 (x: )".chars().count() + 201
        );
        let api = |attempts| {
            AgentError::Api {
                status: 529,
                body: "b".into(),
                attempts,
            }
            .to_string()
        };
        assert_eq!(api(0), "the API answered 529: b");
        assert_eq!(api(1), "the API answered 529 (1 attempt made): b");
        assert_eq!(api(4), "the API answered 529 (4 attempts made): b");
    }

    /// `ANTHROPIC_BASE_URL` must be an absolute http(s) URL; what is wrong names the
    /// variable (reqwest's own "builder error: relative URL without a base" did not).
    #[test]
    fn the_base_url_is_checked() {
        assert_eq!(base_url(None).unwrap(), "https://api.anthropic.com");
        assert_eq!(
            base_url(Some(" ".into())).unwrap(),
            "https://api.anthropic.com"
        );
        assert_eq!(
            base_url(Some(" http://127.0.0.1:8080 ".into())).unwrap(),
            "http://127.0.0.1:8080"
        );
        for bad in ["not-a-url", "ftp://example.com", "file:///tmp/x"] {
            let err = base_url(Some(bad.into())).unwrap_err().to_string();
            assert!(
                err.contains("ANTHROPIC_BASE_URL") && err.contains(bad),
                "{err}"
            );
        }
    }

    #[test]
    fn retries_wait_doubling_up_to_a_cap_with_jitter() {
        let base = Duration::from_millis(500);
        for attempt in 1..=20u32 {
            let wait = retry_delay(base, attempt, None);
            let full = base
                .saturating_mul(1u32.checked_shl(attempt - 1).unwrap_or(u32::MAX))
                .min(MAX_BACKOFF);
            assert!(
                wait <= full && wait >= full.mul_f64(0.75),
                "{attempt}: {wait:?}"
            );
        }
        // What the server asks for is a floor.
        let asked = Duration::from_secs(40);
        assert_eq!(retry_delay(base, 1, Some(asked)), asked);
    }

    #[test]
    fn which_answers_are_retried() {
        for status in [408, 409, 429, 500, 503, 529] {
            assert!(retryable(status, None), "{status}");
        }
        for status in [400, 401, 403, 404, 413] {
            assert!(!retryable(status, None), "{status}");
        }
        assert!(retryable(400, Some("true")));
        assert!(!retryable(529, Some("false")));
    }
    use super::*;

    #[test]
    fn the_body_carries_what_was_set() {
        let request = ModelRequest {
            model: "m".into(),
            max_tokens: 10,
            system: Some("be brief".into()),
            tools: vec![json!({"name": "Read"})],
            messages: vec![json!({"role": "user", "content": "hi"})],
            betas: Vec::new(),
            prompt_caching: false,
            stop_retrying: None,
            usage: None,
        };
        let body = request.body();
        assert_eq!(body["messages"][0]["content"], "hi");
        assert_eq!(body["stream"], true);
        assert_eq!(body["system"], "be brief");
        assert_eq!(body["tools"][0]["name"], "Read");
        let bare = ModelRequest {
            tools: Vec::new(),
            system: None,
            ..request
        }
        .body();
        assert!(bare.get("tools").is_none() && bare.get("system").is_none());
    }

    /// With prompt caching, the last message's last block and the one of the user message
    /// two back carry `cache_control` (two breakpoints, whatever the length), the request's
    /// own conversation stays unmarked, and thinking or empty text is never marked.
    #[test]
    fn prompt_cache_breakpoints_mark_this_and_the_previous_request() {
        let user = |content: Value| json!({"role": "user", "content": content});
        let assistant = |content: Value| json!({"role": "assistant", "content": content});
        let request = ModelRequest {
            model: "m".into(),
            max_tokens: 10,
            messages: vec![
                user(json!("go")),
                assistant(json!([{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}])),
                user(json!([{"type": "tool_result", "tool_use_id": "t1", "content": "x"}])),
                assistant(json!([{"type": "tool_use", "id": "t2", "name": "Read", "input": {}}])),
                user(json!([
                    {"type": "tool_result", "tool_use_id": "t2", "content": "y"},
                    {"type": "text", "text": "context"}
                ])),
            ],
            prompt_caching: true,
            ..ModelRequest::default()
        };
        let body = request.body();
        let marked: Vec<(usize, usize)> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .flat_map(|(i, m)| {
                m["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .enumerate()
                    .filter(|(_, b)| b.get("cache_control").is_some())
                    .map(move |(j, _)| (i, j))
            })
            .collect();
        assert_eq!(marked, [(2, 0), (4, 1)]);
        assert!(
            request
                .messages
                .iter()
                .all(|m| !m.to_string().contains("cache_control"))
        );
        // A first request: its prompt, as a text block.
        let first = ModelRequest {
            messages: vec![user(json!("go"))],
            ..request.clone()
        };
        assert_eq!(
            first.body()["messages"][0]["content"],
            json!([{"type": "text", "text": "go", "cache_control": {"type": "ephemeral"}}])
        );
        let mut thinking = json!({"role": "assistant", "content": [{"type": "thinking", "thinking": "", "signature": "s"}]});
        mark_for_cache(&mut thinking);
        assert!(!thinking.to_string().contains("cache_control"));
        let mut empty = user(json!(""));
        mark_for_cache(&mut empty);
        assert_eq!(empty, user(json!("")));
    }

    #[test]
    fn retry_after_is_seconds_or_an_http_date() {
        let answer = |name: &str, value: &str| {
            let mut headers = http::HeaderMap::new();
            headers.insert(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                http::HeaderValue::from_str(value).unwrap(),
            );
            headers
        };
        assert_eq!(
            retry_after(&answer("retry-after", "7")),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            retry_after(&answer("retry-after-ms", "1500")),
            Some(Duration::from_millis(1500))
        );
        let date = |from_now: i64| {
            (chrono::Utc::now() + chrono::TimeDelta::seconds(from_now))
                .format("%a, %d %b %Y %H:%M:%S GMT")
                .to_string()
        };
        let wait =
            retry_after(&answer("retry-after", &date(20))).expect("an HTTP-date is understood");
        assert!(
            wait <= Duration::from_secs(20) && wait >= Duration::from_secs(17),
            "{wait:?}"
        );
        // A date gone by asks for no wait; one far ahead is capped at a minute.
        assert_eq!(
            retry_after(&answer("retry-after", &date(-30))),
            Some(Duration::ZERO)
        );
        assert_eq!(
            retry_after(&answer("retry-after", &date(3600))),
            Some(Duration::from_secs(60))
        );
        assert_eq!(retry_after(&answer("retry-after", "soon")), None);
    }

    #[tokio::test]
    async fn a_character_split_across_chunks_survives() {
        let text = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"é\"}}\n\n";
        let start = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n";
        let bytes = [start.as_bytes(), text.as_bytes()].concat();
        let split = start.len() + text.find('é').unwrap_or(0) + 1; // inside the 2-byte 'é'
        let chunks: Vec<Result<Vec<u8>, String>> =
            vec![Ok(bytes[..split].to_vec()), Ok(bytes[split..].to_vec())];
        let mut p = Parsing::new(futures::stream::iter(chunks).boxed());
        let first = p.next().await;
        assert!(
            matches!(first, Some(Ok(StreamEvent::Text(ref t))) if t == "é"),
            "{first:?}"
        );
        // No message_stop: the end is reported as a truncated stream.
        let end = p.next().await;
        assert!(
            matches!(&end, Some(Err(AgentError::Stream(m))) if m.contains("truncated")),
            "{end:?}"
        );
    }
}
