//! The HTTP client under rmcp's Streamable HTTP transport: reqwest, plus one repair.
//!
//! The MCP specification says a server answers a request for a session it does not know
//! with HTTP 404, and rmcp then starts a new session and sends the request again. Many
//! deployed servers (the TypeScript SDK's examples among them, server-everything included)
//! answer `400 Bad Request` with a JSON-RPC error that has no `id` instead. rmcp cannot
//! route an id-less error to the waiting request and drops it, so after a server restart
//! the next call would wait until the heartbeat gives up on the connection.
//!
//! [`SessionAwareClient`] reads such an answer as what it is, and only such an answer: sent
//! inside a session, an id-less error with the SDK's session codes (`-32000` or `-32001`)
//! whose message speaks of the session ("No valid session ID provided", "Session not
//! found"). The server rejected the message at its transport, before it read it as a
//! request, so nothing ran. The client reports [`StreamableHttpError::SessionExpired`], and
//! rmcp re-initialises and sends the message once more. Every other id-less error (a
//! `-32603` internal error, which may come after the request was dispatched, a parse error,
//! an unsupported protocol version) stays what it was, so a request that may have run is
//! never sent again.
//!
//! It also takes the request's URL out of reqwest's errors (see [`without_url`]), says what
//! a failure means in words ([`plain_error`]: a refused connection, a 401) instead of rmcp's
//! texts, which quote Rust type names, and names the headers a configuration may not set
//! ([`reserved_header`]).

use std::collections::HashMap;
use std::error::Error;
use std::sync::Arc;

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::ServiceError;
use rmcp::model::{ClientJsonRpcMessage, ErrorData, JsonRpcMessage};
use rmcp::service::ClientInitializeError;
use rmcp::transport::DynamicTransportError;
use rmcp::transport::streamable_http_client::{
    HttpStatusError, SseError, StreamableHttpClient, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::Sse;

/// reqwest's client for rmcp, with id-less error answers inside a session read as a lost
/// session (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct SessionAwareClient(pub(crate) reqwest::Client);

type PostResult = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;

/// Whether an id-less error says the server does not know the session.
fn is_session_rejection(error: &ErrorData) -> bool {
    matches!(error.code.0, -32000 | -32001) && error.message.to_lowercase().contains("session")
}

/// A session rejection in answer to a message sent inside a session means the session is
/// gone (see the module docs).
fn session_lost(in_session: bool, result: PostResult) -> PostResult {
    match result {
        Ok(StreamableHttpPostResponse::Json(JsonRpcMessage::Error(error), _))
            if in_session && error.id.is_none() && is_session_rejection(&error.error) =>
        {
            tracing::debug!(
                error = %error.error.message,
                "MCP server answered without an id inside a session: starting a new session"
            );
            Err(StreamableHttpError::SessionExpired)
        }
        other => other,
    }
}

/// `error` without the request's URL: reqwest's errors end with ` for url (<the whole
/// URL>)`, query included, where a token often sits (`?key=${API_KEY}`), and error texts
/// reach the model and the transcript.
fn without_url(error: StreamableHttpError<reqwest::Error>) -> StreamableHttpError<reqwest::Error> {
    match error {
        StreamableHttpError::Client(e) => StreamableHttpError::Client(e.without_url()),
        other => other,
    }
}

/// The `User-Agent` of every request, unless the server's `headers` set one.
pub(crate) const USER_AGENT: &str = concat!("toolwright/", env!("CARGO_PKG_VERSION"));

/// Headers the transport sets itself, which a server's `headers` may not replace: the
/// request would go out wrong (a JSON body labelled `Content-Type: text/plain`, a session id
/// that is not the session's) or be refused by rmcp halfway. Compared case-insensitively.
const RESERVED_HEADERS: &[&str] = &[
    "accept",
    "content-type",
    "content-length",
    "transfer-encoding",
    "connection",
    "host",
    "mcp-protocol-version",
    "mcp-session-id",
    "last-event-id",
];

/// Why a server's `headers` may not have an entry named `name`, if it may not.
pub(crate) fn reserved_header(name: &str) -> Option<String> {
    RESERVED_HEADERS
        .iter()
        .any(|r| r.eq_ignore_ascii_case(name.trim()))
        .then(|| {
            format!(
                "the header \"{name}\" in the server's \"headers\" cannot be set: the MCP client \
                 sets it itself; remove it from the configuration"
            )
        })
}

const UNAUTHORIZED: &str =
    "the server answered 401 Unauthorized: it needs credentials (headers in the server's config)";
const FORBIDDEN: &str = "the server answered 403 Forbidden: it refused the credentials it was \
                         given, or they lack a permission (headers in the server's config)";

/// What went wrong talking to a Streamable HTTP server, told in words.
pub(crate) enum Failure {
    /// No connection could be made: `cannot connect to <url>: connection refused`.
    Connect(String),
    /// The server answered, or the exchange broke: what it answered or how it broke.
    Exchange(String),
}

/// `error` in words for a message about the server at `url` (as shown in error texts): what
/// happened at the HTTP level when that can be told (a refused connection, a 401), and
/// otherwise rmcp's own text without the transport's Rust type name.
pub(crate) fn plain_error(error: &(dyn Error + 'static), url: &str) -> Failure {
    if let Some(failure) = http_failure(error, url) {
        return failure;
    }
    Failure::Exchange(without_type_names(error))
}

impl Failure {
    /// The text, for a message that names the URL already (`Connect`'s names it too).
    pub(crate) fn text(&self) -> &str {
        match self {
            Self::Connect(text) | Self::Exchange(text) => text,
        }
    }
}

/// rmcp's text for `error` with the transport's type name left out (`Transport
/// [rmcp::transport::worker::WorkerTransport<...>] error: ...` is the error it wraps).
pub(crate) fn without_type_names(error: &(dyn Error + 'static)) -> String {
    if let Some(e) = error.downcast_ref::<ClientInitializeError>() {
        return match e {
            ClientInitializeError::TransportError { error, context } => {
                format!(
                    "{} (while {})",
                    without_type_names(&*error.error),
                    while_doing(context)
                )
            }
            ClientInitializeError::ExpectedInitResult(result) => {
                init_result_problem(result.as_ref())
            }
            ClientInitializeError::ExpectedInitResponse(_) => {
                "the server did not answer `initialize` with a result".to_owned()
            }
            ClientInitializeError::JsonRpcError(error) => format!(
                "the server answered `initialize` with an error: {} (code {})",
                error.message, error.code.0
            ),
            other => other.to_string(),
        };
    }
    if let Some(inner) = transport_wrapped(error) {
        return without_type_names(inner);
    }
    match error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        Some(StreamableHttpError::Client(e)) => return with_causes(e),
        Some(StreamableHttpError::SessionExpired) => {
            return "the server did not know the session (HTTP 404, or 400 with a session \
                    error), and a new one did not mend it"
                .to_owned();
        }
        Some(StreamableHttpError::UnexpectedContentType(content_type)) => {
            let what = match content_type {
                Some(t) => format!("content type `{t}`"),
                None => "no content type".to_owned(),
            };
            return format!(
                "the server answered with {what}, not JSON (`application/json`) or an event \
                 stream (`text/event-stream`) as an MCP endpoint does"
            );
        }
        _ => {}
    }
    if let Some(ServiceError::TransportClosed) = error.downcast_ref::<ServiceError>() {
        return "the connection was closed".to_owned();
    }
    error.to_string()
}

/// rmcp's context of a failed step of the handshake (`send initialize request`) as words
/// after "while": `sending the initialize request`.
fn while_doing(context: &str) -> String {
    match context.strip_prefix("send ") {
        Some(what) => format!("sending the {what}"),
        None => context.to_owned(),
    }
}

/// What is wrong with the server's answer to `initialize` when rmcp could not read it as an
/// initialize result: the required fields it lacks or has of another type
/// (`protocolVersion`, `capabilities`, `serverInfo`), else what the reading found; never
/// rmcp's `CustomResult(Object {…})`.
fn init_result_problem(result: Option<&rmcp::model::ServerResult>) -> String {
    const PREFIX: &str = "the server's answer to `initialize`";
    // `{}` and `[]` both read as rmcp's empty result: which one came is not known here.
    if let Some(rmcp::model::ServerResult::EmptyResult(_)) = result {
        return format!(
            "{PREFIX} is empty (`{{}}` or `[]`), not an initialize result: it has no \
             `protocolVersion`, `capabilities` or `serverInfo`"
        );
    }
    let Some(value) = result.and_then(|r| serde_json::to_value(r).ok()) else {
        return format!("{PREFIX} is not an initialize result");
    };
    let serde_json::Value::Object(fields) = &value else {
        return format!(
            "{PREFIX} is {}, not an object",
            tool_core::shown_setting(&value)
        );
    };
    let mut problems = Vec::new();
    for (field, object) in [
        ("protocolVersion", false),
        ("capabilities", true),
        ("serverInfo", true),
    ] {
        let wanted = if object { "an object" } else { "a string" };
        match fields.get(field) {
            None | Some(serde_json::Value::Null) => problems.push(format!("it has no `{field}`")),
            Some(v) if v.is_object() != object || (!object && !v.is_string()) => {
                problems.push(format!(
                    "its `{field}` is {}, not {wanted}",
                    tool_core::shown_setting(v)
                ));
            }
            Some(_) => {}
        }
    }
    if problems.is_empty() {
        problems = inner_problems(fields);
    }
    if !problems.is_empty() {
        return format!(
            "{PREFIX} is not an initialize result: {}",
            problems.join("; ")
        );
    }
    match serde_json::from_value::<rmcp::model::InitializeResult>(value) {
        Err(e) => format!(
            "{PREFIX} is not a valid initialize result ({})",
            without_struct_names(&e.to_string())
        ),
        Ok(_) => format!("{PREFIX} is not an initialize result"),
    }
}

/// The capabilities an initialize result's `capabilities` may hold, each an object when
/// present (rmcp reads each into a struct or a map).
const OBJECT_CAPABILITIES: &[&str] = &[
    "experimental",
    "extensions",
    "logging",
    "completions",
    "prompts",
    "resources",
    "tools",
];

/// What is wrong inside the `capabilities` and `serverInfo` objects of an initialize result
/// (a capability that is no object, `serverInfo` without its `name` or `version`), in the
/// result's own terms.
fn inner_problems(fields: &serde_json::Map<String, serde_json::Value>) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(serde_json::Value::Object(capabilities)) = fields.get("capabilities") {
        for name in OBJECT_CAPABILITIES {
            match capabilities.get(*name) {
                None | Some(serde_json::Value::Null | serde_json::Value::Object(_)) => {}
                Some(other) => problems.push(format!(
                    "`capabilities.{name}` must be an object, not {}",
                    tool_core::shown_setting(other)
                )),
            }
        }
    }
    if let Some(serde_json::Value::Object(info)) = fields.get("serverInfo") {
        for field in ["name", "version"] {
            match info.get(field) {
                None | Some(serde_json::Value::Null) => {
                    problems.push(format!("`serverInfo` has no `{field}`"));
                }
                Some(serde_json::Value::String(_)) => {}
                Some(other) => problems.push(format!(
                    "`serverInfo.{field}` must be a string, not {}",
                    tool_core::shown_setting(other)
                )),
            }
        }
    }
    problems
}

/// serde's text with the Rust type it expected (`expected struct ToolsCapability`) told as
/// what the JSON should have been: `expected an object`.
fn without_struct_names(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("struct ") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "struct ".len()..];
        let name_len = after
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        if name_len == 0 {
            out.push_str("struct ");
        } else {
            out.push_str("an object");
        }
        rest = &after[name_len..];
    }
    out.push_str(rest);
    out
}

/// Most characters of an error page that an error text quotes.
const BODY_QUOTED: usize = 300;

/// rmcp's text for an HTTP answer that is no MCP answer (`HTTP 404 Not Found: <the whole
/// page>`) in words: `the server answered 404 Not Found: <the start of the page>`, its
/// markup and runs of white space left out, at most [`BODY_QUOTED`] characters of it.
fn unexpected_answer(text: &str) -> String {
    let Some(rest) = text.strip_prefix("HTTP ") else {
        return format!(
            "the server's answer was not an MCP answer: {}",
            quoted_body(text)
        );
    };
    let (status, body) = rest.split_once(": ").unwrap_or((rest, ""));
    let body = quoted_body(body);
    if body.is_empty() {
        format!("the server answered {status}")
    } else {
        format!("the server answered {status}: {body}")
    }
}

/// The start of an answer's body for an error text: for markup, its tags and the contents of
/// `<style>` and `<script>` left out and the common entities decoded; white space runs as
/// one space; at most [`BODY_QUOTED`] characters.
fn quoted_body(body: &str) -> String {
    let body = body.trim();
    let text = if body.starts_with('<') {
        page_text(body)
    } else {
        body.chars().take(8 * BODY_QUOTED).collect()
    };
    let words: Vec<&str> = text.split_whitespace().collect();
    let joined = words.join(" ");
    if joined.chars().count() > BODY_QUOTED {
        let cut: String = joined.chars().take(BODY_QUOTED).collect();
        format!("{cut}…")
    } else {
        joined
    }
}

/// The text of a page (HTML or XML): a space for each tag, the contents of `<style>` and
/// `<script>` left out, entities decoded; a little more than [`BODY_QUOTED`] needs.
fn page_text(page: &str) -> String {
    let mut text = String::new();
    let mut rest = page;
    while text.len() <= 8 * BODY_QUOTED {
        let Some(open) = rest.find('<') else {
            text.push_str(rest);
            break;
        };
        text.push_str(&rest[..open]);
        let tag = &rest[open + 1..];
        let Some(close) = tag.find('>') else {
            break;
        };
        let name: String = tag
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase();
        rest = &tag[close + 1..];
        text.push(' ');
        if name == "style" || name == "script" {
            // Up to its end tag, which the next round reads as a tag. ASCII lower-casing
            // keeps byte offsets.
            let end = format!("</{name}");
            rest = match rest.to_ascii_lowercase().find(&end) {
                Some(at) => &rest[at..],
                None => "",
            };
        }
    }
    decode_entities(&text)
}

/// `text` with the common entities decoded (`&amp;` `&lt;` `&gt;` `&quot;` `&#39;` `&apos;`,
/// `&nbsp;` as a space); others stay as they are.
fn decode_entities(text: &str) -> String {
    const ENTITIES: &[(&str, char)] = &[
        ("&amp;", '&'),
        ("&lt;", '<'),
        ("&gt;", '>'),
        ("&quot;", '"'),
        ("&#39;", '\''),
        ("&#x27;", '\''),
        ("&apos;", '\''),
        ("&nbsp;", ' '),
    ];
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        match ENTITIES.iter().find(|(name, _)| rest.starts_with(name)) {
            Some((name, c)) => {
                out.push(*c);
                rest = &rest[name.len()..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The error rmcp's transport wrappers (a failed send, the dynamic transport) hold, if
/// `error` is one of them.
fn transport_wrapped<'a>(error: &'a (dyn Error + 'static)) -> Option<&'a (dyn Error + 'static)> {
    if let Some(ServiceError::TransportSend(e)) = error.downcast_ref::<ServiceError>() {
        return Some(&*e.error);
    }
    error
        .downcast_ref::<DynamicTransportError>()
        .map(|e| &*e.error as &(dyn Error + 'static))
}

/// Whether `error` (rmcp's wrappers followed down) is a lost session that a new session did
/// not mend: the server refused the request at its transport (each time it was sent: once,
/// or again in the new session) before it read it as a request.
pub(crate) fn is_session_refusal(error: &(dyn Error + 'static)) -> bool {
    if let Some(inner) = transport_wrapped(error) {
        return is_session_refusal(inner);
    }
    matches!(
        error.downcast_ref::<StreamableHttpError<reqwest::Error>>(),
        Some(StreamableHttpError::SessionExpired)
    )
}

/// Whether `error` (rmcp's wrappers followed down) is an HTTP answer with a status other
/// than success (a 500, a 429, a 404 page): the server answered, it did not go away.
pub(crate) fn answered_with_status(error: &(dyn Error + 'static)) -> bool {
    if let Some(inner) = transport_wrapped(error) {
        return answered_with_status(inner);
    }
    matches!(
        error.downcast_ref::<StreamableHttpError<reqwest::Error>>(),
        Some(StreamableHttpError::HttpStatus(_) | StreamableHttpError::UnexpectedServerResponse(_))
    )
}

/// `error`'s text followed by its causes' (`error sending request: connection closed before
/// message completed`), each once.
fn with_causes(error: &(dyn Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        let more = e.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        cause = e.source();
    }
    text
}

/// The HTTP-level failure inside `error` (rmcp's wrappers followed down), if there is one.
fn http_failure(error: &(dyn Error + 'static), url: &str) -> Option<Failure> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(e) = e.downcast_ref::<ClientInitializeError>() {
            current = match e {
                ClientInitializeError::TransportError { error, .. } => Some(&*error.error),
                _ => None,
            };
            continue;
        }
        if let Some(e) = e.downcast_ref::<DynamicTransportError>() {
            current = Some(&*e.error);
            continue;
        }
        if let Some(e) = e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            return match e {
                StreamableHttpError::Client(e) => Some(reqwest_failure(e, url)),
                StreamableHttpError::AuthRequired(_) => {
                    Some(Failure::Exchange(UNAUTHORIZED.into()))
                }
                StreamableHttpError::InsufficientScope(_) => {
                    Some(Failure::Exchange(FORBIDDEN.into()))
                }
                // A 401 or 403 without a `WWW-Authenticate` challenge: `HTTP 401 Unauthorized:
                // <body>`.
                StreamableHttpError::UnexpectedServerResponse(text)
                    if text.starts_with("HTTP 401") =>
                {
                    Some(Failure::Exchange(UNAUTHORIZED.into()))
                }
                StreamableHttpError::UnexpectedServerResponse(text)
                    if text.starts_with("HTTP 403") =>
                {
                    Some(Failure::Exchange(FORBIDDEN.into()))
                }
                // A 5xx or 429 answer: rmcp keeps only the status (and `Retry-After`).
                StreamableHttpError::HttpStatus(status) => {
                    Some(Failure::Exchange(status_in_words(status)))
                }
                // Any other status (a 404 page): the status, and the page quoted in part.
                StreamableHttpError::UnexpectedServerResponse(text) => {
                    Some(Failure::Exchange(unexpected_answer(text)))
                }
                _ => None,
            };
        }
        if let Some(e) = e.downcast_ref::<reqwest::Error>() {
            return Some(reqwest_failure(e, url));
        }
        current = e.source();
    }
    None
}

/// rmcp's body-less status error (`HTTP 503`) in words: `the server answered 503 Service
/// Unavailable`, with the wait a `Retry-After` asks for.
fn status_in_words(error: &HttpStatusError) -> String {
    let status = match http::StatusCode::from_u16(error.status) {
        Ok(code) => code.to_string(),
        Err(_) => error.status.to_string(),
    };
    match &error.retry_after {
        Some(wait) => format!("the server answered {status} (it asks to wait: Retry-After {wait})"),
        None => format!("the server answered {status}"),
    }
}

/// What a reqwest error means: a connection that could not be made (and why: `connection
/// refused`, the DNS or TLS error), a timeout, or a request that broke (and how).
fn reqwest_failure(error: &reqwest::Error, url: &str) -> Failure {
    if error.is_connect() {
        // The io error says it best (`connection refused`); otherwise the innermost cause
        // (a DNS or TLS error).
        let mut io = None;
        let mut innermost: &(dyn Error + 'static) = error;
        let mut cause = error.source();
        while let Some(e) = cause {
            io = io.or_else(|| e.downcast_ref::<std::io::Error>());
            innermost = e;
            cause = e.source();
        }
        let why = match io.map(std::io::Error::kind) {
            Some(std::io::ErrorKind::ConnectionRefused) => "connection refused".to_owned(),
            Some(std::io::ErrorKind::ConnectionReset) => "connection reset".to_owned(),
            Some(std::io::ErrorKind::TimedOut) => "timed out".to_owned(),
            _ => innermost.to_string(),
        };
        Failure::Connect(format!("cannot connect to {url}: {why}"))
    } else if error.is_timeout() {
        Failure::Exchange("the request timed out".into())
    } else if let Some(status) = error.status() {
        Failure::Exchange(format!("the server answered {status}"))
    } else {
        Failure::Exchange(with_causes(error))
    }
}

impl StreamableHttpClient for SessionAwareClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> PostResult {
        let in_session = session_id.is_some();
        let result = self
            .0
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await
            .map_err(without_url);
        session_lost(in_session, result)
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> PostResult {
        let in_session = session_id.is_some();
        let result = self
            .0
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
            .map_err(without_url);
        session_lost(in_session, result)
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> PostResult {
        let in_session = session_id.is_some();
        let result = self
            .0
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await
            .map_err(without_url);
        session_lost(in_session, result)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.0
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
            .map_err(without_url)
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.0
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
            .map_err(without_url)
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.0
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
            .map_err(without_url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ErrorCode, JsonRpcError, NumberOrString, ServerJsonRpcMessage};

    const NO_SESSION: (i32, &str) = (-32000, "Bad Request: No valid session ID provided");

    fn answer(id: Option<NumberOrString>, (code, message): (i32, &'static str)) -> PostResult {
        let error = ErrorData::new(ErrorCode(code), message, None);
        let message: ServerJsonRpcMessage = JsonRpcMessage::Error(JsonRpcError::new(id, error));
        Ok(StreamableHttpPostResponse::Json(message, None))
    }

    fn error_answer(id: Option<NumberOrString>) -> PostResult {
        answer(id, NO_SESSION)
    }

    #[test]
    fn only_session_rejections_inside_a_session_mean_a_lost_session() {
        assert!(matches!(
            session_lost(true, error_answer(None)),
            Err(StreamableHttpError::SessionExpired)
        ));
        assert!(matches!(
            session_lost(true, answer(None, (-32001, "Session not found"))),
            Err(StreamableHttpError::SessionExpired)
        ));
        // Id-less errors that are not about the session stay errors: an internal error may
        // come after the request ran, so it must never be sent again.
        for other in [
            (-32603, "Internal server error"),
            (-32700, "Parse error: Invalid JSON"),
            (-32000, "Bad Request: Unsupported protocol version"),
            (
                -32000,
                "Not Acceptable: Client must accept text/event-stream",
            ),
        ] {
            assert!(
                matches!(
                    session_lost(true, answer(None, other)),
                    Ok(StreamableHttpPostResponse::Json(..))
                ),
                "{other:?}"
            );
        }
        // Before a session exists (initialize), the error is the server's answer.
        assert!(matches!(
            session_lost(false, error_answer(None)),
            Ok(StreamableHttpPostResponse::Json(..))
        ));
        // An error with an id answers that request: rmcp routes it.
        assert!(matches!(
            session_lost(true, error_answer(Some(NumberOrString::Number(7)))),
            Ok(StreamableHttpPostResponse::Json(..))
        ));
        assert!(matches!(
            session_lost(true, Ok(StreamableHttpPostResponse::Accepted)),
            Ok(StreamableHttpPostResponse::Accepted)
        ));
    }
}

#[cfg(test)]
mod wording_tests {
    use super::*;
    use rmcp::model::ServerResult;
    use serde_json::json;

    /// What `init_result_problem` says of `result` as rmcp reads it from a server's answer.
    fn problem(result: serde_json::Value) -> String {
        let read: ServerResult = serde_json::from_value(result).unwrap();
        init_result_problem(Some(&read))
    }

    const GOOD_INFO: &str = r#"{"name": "s", "version": "1"}"#;

    /// An answer to `initialize` that is an empty array (or object) says it is empty, not
    /// that it lacks three fields one by one. rmcp reads `[]` and `{}` alike, so the text
    /// names both; another array is named as what it is.
    #[test]
    fn an_empty_answer_to_initialize_says_it_is_empty() {
        for empty in [json!([]), json!({})] {
            let text = problem(empty);
            assert!(text.contains("is empty (`{}` or `[]`)"), "{text}");
        }
        let text = problem(json!([1, 2]));
        assert!(text.contains("is an array, not an object"), "{text}");
    }

    /// A capability that is not an object is named as `capabilities.<name>`, never by rmcp's
    /// Rust type (`ToolsCapability`).
    #[test]
    fn a_capability_that_is_no_object_is_named() {
        let info: serde_json::Value = serde_json::from_str(GOOD_INFO).unwrap();
        for (cap, value) in [("tools", json!(false)), ("resources", json!("yes"))] {
            let text = problem(json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {cap: value},
                "serverInfo": info,
            }));
            assert!(
                text.contains(&format!("`capabilities.{cap}` must be an object")),
                "{text}"
            );
            assert!(!text.contains("Capability"), "{text}");
        }
    }

    /// `serverInfo` without `version` (or `name`) says where the field is missing.
    #[test]
    fn server_info_without_version_says_where() {
        for (info, missing) in [
            (json!({"name": "s"}), "version"),
            (json!({"version": "1"}), "name"),
        ] {
            let text = problem(json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "serverInfo": info,
            }));
            assert!(
                text.contains(&format!("`serverInfo` has no `{missing}`")),
                "{text}"
            );
        }
    }

    /// An error page is quoted without its markup, the contents of `<style>` and `<script>`
    /// left out and the common entities decoded.
    #[test]
    fn quoted_pages_drop_styles_scripts_and_decode_entities() {
        let page = "<html><head><style>body { color: red }</style><script>var x = 1 < 2;\
                    </script></head><body><h1>Bad&nbsp;Gateway</h1><p>a &amp; b &lt;c&gt; \
                    &quot;d&quot; &#39;e&#39;</p><SCRIPT type=\"x\">alert(1)</SCRIPT></body></html>";
        assert_eq!(quoted_body(page), "Bad Gateway a & b <c> \"d\" 'e'");
    }

    /// A 5xx or 429 answer (rmcp's body-less status error) is told in words with its reason.
    #[test]
    fn a_status_error_is_told_in_words() {
        let error: StreamableHttpError<reqwest::Error> =
            rmcp::transport::streamable_http_client::HttpStatusError::new(503, None).into();
        let Some(Failure::Exchange(text)) = http_failure(&error, "http://x") else {
            panic!("no failure")
        };
        assert_eq!(text, "the server answered 503 Service Unavailable");
        let error: StreamableHttpError<reqwest::Error> =
            rmcp::transport::streamable_http_client::HttpStatusError::new(429, Some("30".into()))
                .into();
        let Some(Failure::Exchange(text)) = http_failure(&error, "http://x") else {
            panic!("no failure")
        };
        assert_eq!(
            text,
            "the server answered 429 Too Many Requests (it asks to wait: Retry-After 30)"
        );
    }
}
