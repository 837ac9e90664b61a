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
//! an unsupported protocol version) is never sent again: it is the error of the request
//! whose POST it answered (see [`answers_its_request`]), which rmcp would otherwise drop,
//! leaving the request to wait for its timeout. A JSON body that answers another request,
//! or is no response at all, fails the request at once for the same reason.
//!
//! It also takes the request's URL out of reqwest's errors (see [`without_url`]), says what
//! a failure means in words ([`plain_error`]: a refused connection, a 401) instead of rmcp's
//! texts, which quote Rust type names, and names the headers a configuration may not set
//! ([`reserved_header`]).
//!
//! # Redirects
//!
//! No request carries a `Referer` (reqwest's would quote the configured URL, query token and
//! all, to wherever a redirect leads). A redirect within the configured origin (scheme, host
//! and port) is followed as reqwest follows it, headers and all: it is the same server. A
//! redirect to another origin is followed as Claude Code's `fetch` follows it (a server that
//! moved keeps working), but the request is sent there again by this client **without any
//! configured header** (`headers`, `Authorization` included) and without the configured
//! URL's user info; `fetch` would keep every header but `Authorization`. Such a redirect is
//! refused, with an error naming its target (query and user info redacted), when following
//! it would change the request (a 301, 302 or 303 turns a POST into a GET without its
//! message), leave TLS (`https` to `http`), or leave `http(s)`. At most [`MAX_REDIRECTS`]
//! redirects are followed for one request. Where the answer came from is kept
//! ([`AnswerLog`]), so that errors name the URL that answered.

use std::collections::HashMap;
use std::error::Error;
use std::future::Future;
use std::sync::{Arc, Mutex};

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue, Method, StatusCode};
use rmcp::ServiceError;
use rmcp::model::{
    ClientJsonRpcMessage, ErrorData, JsonRpcMessage, NumberOrString, RequestId,
    ServerJsonRpcMessage,
};
use rmcp::service::ClientInitializeError;
use rmcp::transport::DynamicTransportError;
use rmcp::transport::streamable_http_client::{
    HttpStatusError, SseError, StreamableHttpClient, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::Sse;

/// reqwest's client for rmcp, with id-less error answers inside a session read as a lost
/// session, and redirects followed as the module docs say.
#[derive(Clone, Debug)]
pub(crate) struct SessionAwareClient {
    client: reqwest::Client,
    /// Where the last request's answer came from, when a redirect led elsewhere.
    answered: Arc<AnswerLog>,
}

/// Most redirects one request follows, within its origin and to others together.
pub(crate) const MAX_REDIRECTS: usize = 10;

/// Where the answer to the last request a [`SessionAwareClient`] sent came from, when a
/// redirect led away from the configured URL: error texts name it.
#[derive(Debug, Default)]
pub(crate) struct AnswerLog(Mutex<Option<Answered>>);

/// The URL an answer came from after one or more redirects.
#[derive(Debug, Clone)]
pub(crate) struct Answered {
    /// The URL that answered.
    pub(crate) url: reqwest::Url,
    /// Whether a redirect to another origin was followed on the way: the configured headers
    /// were not sent there.
    pub(crate) other_origin: bool,
}

impl AnswerLog {
    /// Where the last request's answer came from, if a redirect led elsewhere.
    pub(crate) fn get(&self) -> Option<Answered> {
        crate::client::lock(&self.0).clone()
    }

    /// Records where a request's answer came from (`None`: from the URL it was sent to).
    pub(crate) fn set(&self, answered: Option<Answered>) {
        *crate::client::lock(&self.0) = answered;
    }
}

/// What the redirect policy saw while one request was sent once (the task-local [`TRAIL`]).
#[derive(Debug)]
struct Trail {
    /// The request's method: whether a redirect keeps it decides whether one to another
    /// origin can be followed.
    method: Method,
    /// Redirects followed by earlier sends of the same request.
    hops_before: usize,
    /// Redirects within an origin followed by this send.
    hops: usize,
    /// The URL the last of them led to.
    last: Option<reqwest::Url>,
    /// A redirect to another origin, to be sent again there without the configured headers.
    elsewhere: Option<reqwest::Url>,
}

tokio::task_local! {
    /// The [`Trail`] of the request being sent, for the redirect policy (which reqwest calls
    /// while the request's future is polled, on its task).
    static TRAIL: Arc<Mutex<Trail>>;
}

/// A redirect this client does not follow, and why, in words.
#[derive(Debug)]
pub(crate) struct RedirectRefused(String);

impl std::fmt::Display for RedirectRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Error for RedirectRefused {}

/// Whether a redirect with `status` sends the request again with the same `method` (and
/// body), as `fetch` and reqwest follow them: a 307 or 308 always; a 301 or 302 unless it
/// is a POST; a 303 only a GET or HEAD (it turns everything else into a GET).
fn keeps_method(method: &Method, status: StatusCode) -> bool {
    match status.as_u16() {
        307 | 308 => true,
        301 | 302 => method != Method::POST,
        303 => method == Method::GET || method == Method::HEAD,
        _ => false,
    }
}

/// Why a redirect with `status` from `from` to `next`, another origin, is not followed, if
/// it is not: it would change the request, leave TLS, or leave `http(s)`.
fn refused_elsewhere(
    method: &Method,
    status: StatusCode,
    from: Option<&reqwest::Url>,
    next: &reqwest::Url,
) -> Option<String> {
    let shown = tool_core::redact_url(next.as_str());
    if !matches!(next.scheme(), "http" | "https") {
        return Some(format!(
            "the server redirected the request to {shown}, which is no http(s) URL: not followed"
        ));
    }
    if next.scheme() == "http" && from.is_some_and(|from| from.scheme() == "https") {
        return Some(format!(
            "the server redirected the request from https to {shown}, without TLS: not followed"
        ));
    }
    if !keeps_method(method, status) {
        return Some(format!(
            "the server redirected the request ({status}) to {shown}, another origin, which \
             would send it there as a GET without its message: not followed (if the server \
             has moved there, configure that URL)"
        ));
    }
    None
}

/// reqwest's redirect policy (see the module docs): a redirect within the origin of the
/// URL a request was sent to is followed; one to another origin stops this send, and is
/// noted in the request's [`TRAIL`] to be sent again there without the configured headers,
/// or refused with the reason. Without a trail (never, for rmcp's requests), a redirect to
/// another origin is refused.
fn redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let next = attempt.url().clone();
        let status = attempt.status();
        let previous = attempt.previous();
        let same_origin = previous
            .first()
            .is_some_and(|first| first.origin() == next.origin());
        let too_many = || {
            format!(
                "the server redirected the request more than {MAX_REDIRECTS} times: not followed"
            )
        };
        let decided = TRAIL.try_with(|trail| {
            let mut trail = crate::client::lock(trail);
            if trail.hops_before + trail.hops >= MAX_REDIRECTS {
                return Err(too_many());
            }
            if same_origin {
                trail.hops += 1;
                trail.last = Some(next.clone());
                return Ok(true);
            }
            match refused_elsewhere(&trail.method, status, previous.last(), &next) {
                Some(why) => Err(why),
                None => {
                    trail.elsewhere = Some(next.clone());
                    Ok(false)
                }
            }
        });
        match decided {
            Ok(Ok(true)) => attempt.follow(),
            // Not shown: the request is sent there again (`SessionAwareClient::following`).
            Ok(Ok(false)) => attempt.error(RedirectRefused(format!(
                "the server redirected the request to {}, another origin",
                tool_core::redact_url(next.as_str())
            ))),
            Ok(Err(why)) => attempt.error(RedirectRefused(why)),
            Err(_) if same_origin && previous.len() <= MAX_REDIRECTS => attempt.follow(),
            Err(_) if same_origin => attempt.error(RedirectRefused(too_many())),
            Err(_) => attempt.error(RedirectRefused(format!(
                "the server redirected the request to {}, another origin: not followed",
                tool_core::redact_url(next.as_str())
            ))),
        }
    })
}

impl SessionAwareClient {
    /// A client sending `User-Agent: toolwright/<version>` and no `Referer`, following
    /// redirects as the module docs say, recording where answers came from in `answered`.
    pub(crate) fn new(answered: Arc<AnswerLog>) -> Result<Self, String> {
        let client = reqwest::Client::builder()
            // A `User-Agent` in the server's `headers` replaces it (a request's own
            // headers win over the client's defaults).
            .user_agent(USER_AGENT)
            .referer(false)
            .redirect(redirect_policy())
            .build()
            .map_err(|e| format!("cannot create the HTTP client: {e}"))?;
        Ok(Self { client, answered })
    }

    /// Sends a request with `send` (rmcp's reqwest client, given the URL, the bearer token
    /// and the configured headers) to `uri`; when a redirect leads to another origin and may
    /// be followed, sends it again there, without the token and the configured headers.
    /// Records where the answer came from.
    async fn following<T, F, Fut>(
        &self,
        method: Method,
        uri: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        mut send: F,
    ) -> Result<T, StreamableHttpError<reqwest::Error>>
    where
        F: FnMut(Arc<str>, Option<String>, HashMap<HeaderName, HeaderValue>) -> Fut,
        Fut: Future<Output = Result<T, StreamableHttpError<reqwest::Error>>>,
    {
        let mut target = uri;
        let mut auth_header = auth_header;
        let mut custom_headers = custom_headers;
        let mut hops = 0;
        let mut other_origin = false;
        loop {
            let trail = Arc::new(Mutex::new(Trail {
                method: method.clone(),
                hops_before: hops,
                hops: 0,
                last: None,
                elsewhere: None,
            }));
            let sent = send(
                target.clone(),
                auth_header.take(),
                std::mem::take(&mut custom_headers),
            );
            let result = TRAIL.scope(trail.clone(), sent).await;
            let (followed, last, elsewhere) = {
                let mut trail = crate::client::lock(&trail);
                (trail.hops, trail.last.take(), trail.elsewhere.take())
            };
            hops += followed;
            if let (Err(_), Some(next)) = (&result, elsewhere) {
                tracing::debug!(
                    to = %tool_core::redact_url(next.as_str()),
                    "redirected to another origin: sent again there without the configured headers"
                );
                hops += 1;
                other_origin = true;
                target = next.as_str().into();
                continue;
            }
            let answered_at = last.or_else(|| {
                other_origin
                    .then(|| reqwest::Url::parse(&target).ok())
                    .flatten()
            });
            self.answered
                .set(answered_at.map(|url| Answered { url, other_origin }));
            return result;
        }
    }
}

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

/// The id of `message` when it is a request (an answer is awaited for it).
fn request_id(message: &ClientJsonRpcMessage) -> Option<RequestId> {
    match message {
        JsonRpcMessage::Request(request) => Some(request.id.clone()),
        _ => None,
    }
}

/// Whether a response's id names the request `sent`, as rmcp routes it: the same id, or
/// the number as a string (`"3"` for request 3).
fn same_request(sent: &RequestId, answered: &RequestId) -> bool {
    sent == answered
        || matches!(
            (sent, answered),
            (NumberOrString::Number(n), NumberOrString::String(s)) if s.parse::<i64>() == Ok(*n)
        )
}

/// Why `message`, the whole JSON body answering the POST of request `sent`, is not its
/// answer, if it is not (`None`: it is).
fn not_its_answer(sent: &RequestId, message: &ServerJsonRpcMessage) -> Option<String> {
    let answered = match message {
        JsonRpcMessage::Response(response) => &response.id,
        JsonRpcMessage::Error(error) => error.id.as_ref()?,
        other => {
            let (what, method) = match other {
                JsonRpcMessage::Notification(_) => ("a notification", method_of(other)),
                _ => ("a request", method_of(other)),
            };
            let method = method.map_or_else(String::new, |m| format!(" ({m})"));
            return Some(format!(
                "the server answered request {sent} with {what}{method}, not with its response"
            ));
        }
    };
    (!same_request(sent, answered)).then(|| {
        format!(
            "the server's answer names request {}, not request {sent}, which it was sent",
            id_as_written(answered)
        )
    })
}

/// A request id as the JSON it was: a string id quoted (`" 2"` is no `2`).
fn id_as_written(id: &RequestId) -> String {
    match id {
        NumberOrString::Number(n) => n.to_string(),
        NumberOrString::String(s) => serde_json::Value::from(s.as_ref()).to_string(),
    }
}

/// The `method` of a server's message, when it has one.
fn method_of(message: &ServerJsonRpcMessage) -> Option<String> {
    serde_json::to_value(message)
        .ok()?
        .get("method")?
        .as_str()
        .map(str::to_owned)
}

/// A request's POST answered with a whole JSON body is answered by that body, or never:
/// rmcp hands a body for another id (or a notification) to the service, which finds no
/// request waiting for it, and the request would wait for its timeout (or the idle limit).
/// Such a body fails the request at once, saying what came
/// ([`StreamableHttpError::UnexpectedServerResponse`], told by [`unexpected_answer`]). An
/// error without an id (a server that could not read the request, or failed it in a layer
/// that does not know ids) is the request's error: it is given the request's id, so that rmcp
/// hands it to the request waiting for it. The same holds for such an error sent as an event
/// of the request's own event stream, which rmcp would drop and then, the stream ended,
/// report as a lost connection. (Otherwise an event stream is rmcp's to follow: one that ends
/// without the answer fails the request already.)
fn answers_its_request(sent: Option<&RequestId>, result: PostResult) -> PostResult {
    let Some(sent) = sent else {
        return result;
    };
    match result {
        Ok(StreamableHttpPostResponse::Sse(events, session)) => {
            let id = serde_json::to_value(sent).unwrap_or_default();
            let events = futures::StreamExt::map(events, move |event| {
                event.map(|mut event| {
                    if let Some(data) = event.data.as_deref()
                        && let Some(mended) = idless_error_for(data, &id)
                    {
                        event.data = Some(mended);
                    }
                    event
                })
            });
            Ok(StreamableHttpPostResponse::Sse(Box::pin(events), session))
        }
        Ok(StreamableHttpPostResponse::Json(JsonRpcMessage::Error(mut error), session))
            if error.id.is_none() =>
        {
            error.id = Some(sent.clone());
            Ok(StreamableHttpPostResponse::Json(
                JsonRpcMessage::Error(error),
                session,
            ))
        }
        Ok(StreamableHttpPostResponse::Json(message, session)) => {
            match not_its_answer(sent, &message) {
                Some(why) => {
                    tracing::debug!("{why}");
                    Err(StreamableHttpError::UnexpectedServerResponse(why.into()))
                }
                None => Ok(StreamableHttpPostResponse::Json(message, session)),
            }
        }
        other => other,
    }
}

/// `data` (an event of a request's own event stream) given the request's `id` when it is an
/// error response without one; `None` for anything else (read only when it may be one).
fn idless_error_for(data: &str, id: &serde_json::Value) -> Option<String> {
    if !data.contains("\"error\"") {
        return None;
    }
    let mut message: serde_json::Value = serde_json::from_str(data).ok()?;
    let fields = message.as_object_mut()?;
    let idless = fields.get("id").is_none_or(serde_json::Value::is_null);
    if !idless || !fields.contains_key("error") || fields.contains_key("method") {
        return None;
    }
    fields.insert("id".to_owned(), id.clone());
    Some(message.to_string())
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
///
/// rmcp's other texts are said in words too: a JSON body it could not read as a JSON-RPC
/// message ([`unreadable_body`]), an `initialize` answered without an answer. This client's
/// own texts ([`not_its_answer`]) are passed on as they are.
fn unexpected_answer(text: &str) -> String {
    if text.starts_with(OWN_TEXT) {
        return text.to_owned();
    }
    if let Some(rest) = text.strip_prefix(UNREADABLE_JSON) {
        return format!(
            "the server's answer was not an MCP answer: {}",
            unreadable_body(rest)
        );
    }
    match text {
        "expect initialized, accepted" => {
            return "the server accepted `initialize` (202 Accepted) without answering it"
                .to_owned();
        }
        "empty sse stream" => {
            return "the server's event stream ended without the answer to `initialize`".to_owned();
        }
        _ => {}
    }
    if text.starts_with("expect accepted or json, got") {
        return "the server answered a notification with an event stream instead of accepting \
                it"
        .to_owned();
    }
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

/// How rmcp's text for a JSON answer it could not read as a JSON-RPC message begins; serde's
/// error and the start of the body follow (`EOF while parsing a value at line 1 column 0:
/// <empty>`).
const UNREADABLE_JSON: &str = "could not parse JSON response as ServerJsonRpcMessage: ";

/// How this client's own texts in rmcp's errors begin ([`not_its_answer`]): they are words
/// already. (None of rmcp's own texts begins so.)
const OWN_TEXT: &str = "the server";

/// The first syntax errors' texts of serde_json: a body with one of them is not JSON; any
/// other error is of JSON that is no JSON-RPC message.
const SYNTAX_ERRORS: &[&str] = &[
    "EOF while parsing",
    "expected `",
    "expected ident",
    "expected value",
    "invalid escape",
    "invalid number",
    "number out of range",
    "invalid unicode code point",
    "control character",
    "key must be a string",
    "lone leading surrogate",
    "trailing comma",
    "trailing characters",
    "unexpected end of hex escape",
];

/// What rmcp's text about a JSON body it could not read says, in words (`rest`: serde's
/// error, `: `, and the body's start, or `<empty>`): the body was empty, is not JSON (with
/// serde's position), is nested deeper than serde reads, or is JSON but no JSON-RPC message
/// (serde's text then names the SDK's types, so the body's start is shown instead).
fn unreadable_body(rest: &str) -> String {
    let (error, body) = split_serde_error(rest);
    if body == "<empty>" {
        return "its body was empty".to_owned();
    }
    if error.starts_with("recursion limit exceeded") {
        return "it is nested too deeply (JSON arrays and objects more than 128 levels deep, \
                which cannot be read)"
            .to_owned();
    }
    let body = quoted_body(body);
    let shown = if body.is_empty() {
        String::new()
    } else {
        format!(": {body}")
    };
    if SYNTAX_ERRORS.iter().any(|syntax| error.starts_with(syntax)) {
        format!("it is not JSON ({error}){shown}")
    } else {
        format!("it is JSON, but not a JSON-RPC message{shown}")
    }
}

/// serde's error (which ends with its position, ` at line 1 column 5`) and what follows it
/// after `: ` in `text`. rmcp's own error for JSON that is no JSON-RPC message has no
/// position (`unrecognized JSON-RPC message: <body>`); another without one is the whole
/// text.
fn split_serde_error(text: &str) -> (&str, &str) {
    const UNRECOGNIZED: &str = "unrecognized JSON-RPC message";
    if let Some(body) = text
        .strip_prefix(UNRECOGNIZED)
        .and_then(|rest| rest.strip_prefix(": "))
    {
        return (UNRECOGNIZED, body);
    }
    let mut from = 0;
    while let Some(found) = text[from..].find(" at line ") {
        let at = from + found;
        let after = &text[at + " at line ".len()..];
        let line_digits = after.chars().take_while(char::is_ascii_digit).count();
        if line_digits > 0
            && let Some(column) = after[line_digits..].strip_prefix(" column ")
        {
            let column_digits = column.chars().take_while(char::is_ascii_digit).count();
            if column_digits > 0 {
                let end = text.len() - column.len() + column_digits;
                let body = text[end..].strip_prefix(": ").unwrap_or(&text[end..]);
                return (&text[..end], body);
            }
        }
        from = at + 1;
    }
    (text, "")
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
/// message completed`), each once; hyper's wrapper that only names its own kind of error
/// (`client error (SendRequest)`, a Rust name) is left out.
fn with_causes(error: &(dyn Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        let more = e.to_string();
        if !text.contains(&more) && !names_a_kind_only(&more) {
            text = format!("{text}: {more}");
        }
        cause = e.source();
    }
    text
}

/// Whether `text` is hyper's `client error (SendRequest)`: a wrapper's text that says no
/// more than the name of its kind of error.
fn names_a_kind_only(text: &str) -> bool {
    text.strip_prefix("client error (")
        .and_then(|rest| rest.strip_suffix(')'))
        .is_some_and(|kind| !kind.is_empty() && kind.chars().all(|c| c.is_ascii_alphanumeric()))
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

/// What a reqwest error means: a redirect this client refused (and why), a connection that
/// could not be made (and why: `connection refused`, the DNS or TLS error), a timeout, or a
/// request that broke (and how).
fn reqwest_failure(error: &reqwest::Error, url: &str) -> Failure {
    // A redirect this client refused: its own words (reqwest's say only "error following
    // redirect").
    let mut cause = error.source();
    while let Some(e) = cause {
        if let Some(refused) = e.downcast_ref::<RedirectRefused>() {
            return Failure::Exchange(refused.to_string());
        }
        cause = e.source();
    }
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
    } else if let Some(words) = broken_exchange(error) {
        Failure::Exchange(words.to_owned())
    } else {
        Failure::Exchange(with_causes(error))
    }
}

/// How hyper says a connection closed before the whole answer came (its `IncompleteMessage`).
const INCOMPLETE_MESSAGE: &str = "connection closed before message completed";

/// A request whose connection broke after it was made, in words: the connection closed (or
/// was reset) before the answer came. `None` for other failures.
fn broken_exchange(error: &(dyn Error + 'static)) -> Option<&'static str> {
    let mut cause = Some(error);
    while let Some(e) = cause {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            match io.kind() {
                std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::ConnectionAborted => {
                    return Some("the connection was reset before the answer came");
                }
                std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::BrokenPipe => {
                    return Some("the connection closed before the answer came");
                }
                _ => {}
            }
        }
        if e.to_string().contains(INCOMPLETE_MESSAGE) {
            return Some("the connection closed before the answer came");
        }
        cause = e.source();
    }
    None
}

/// Whether `error` (rmcp's wrappers followed down) is a connection that could not be made
/// (refused, a DNS or TLS failure): the request was never sent, so it cannot have run.
pub(crate) fn never_sent(error: &(dyn Error + 'static)) -> bool {
    matches!(http_failure(error, ""), Some(Failure::Connect(_)))
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
        let sent = request_id(&message);
        let client = &self.client;
        let result = self
            .following(
                Method::POST,
                uri,
                auth_header,
                custom_headers,
                |uri, auth_header, custom_headers| {
                    client.post_message(
                        uri,
                        message.clone(),
                        session_id.clone(),
                        auth_header,
                        custom_headers,
                    )
                },
            )
            .await
            .map_err(without_url);
        answers_its_request(sent.as_ref(), session_lost(in_session, result))
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
        let sent = request_id(&message);
        let client = &self.client;
        let result = self
            .following(
                Method::POST,
                uri,
                auth_header,
                custom_headers,
                |uri, auth_header, custom_headers| {
                    client.post_message_with_max_sse_event_size(
                        uri,
                        message.clone(),
                        session_id.clone(),
                        auth_header,
                        custom_headers,
                        max_sse_event_size,
                    )
                },
            )
            .await
            .map_err(without_url);
        answers_its_request(sent.as_ref(), session_lost(in_session, result))
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
        let sent = request_id(&message);
        let client = &self.client;
        let result = self
            .following(
                Method::POST,
                uri,
                auth_header,
                custom_headers,
                |uri, auth_header, custom_headers| {
                    client.post_message_with_response_limits(
                        uri,
                        message.clone(),
                        session_id.clone(),
                        auth_header,
                        custom_headers,
                        limits,
                    )
                },
            )
            .await
            .map_err(without_url);
        answers_its_request(sent.as_ref(), session_lost(in_session, result))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        let client = &self.client;
        self.following(
            Method::DELETE,
            uri,
            auth_header,
            custom_headers,
            |uri, auth_header, custom_headers| {
                client.delete_session(uri, session_id.clone(), auth_header, custom_headers)
            },
        )
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
        let client = &self.client;
        self.following(
            Method::GET,
            uri,
            auth_header,
            custom_headers,
            |uri, auth_header, custom_headers| {
                client.get_stream(
                    uri,
                    session_id.clone(),
                    last_event_id.clone(),
                    auth_header,
                    custom_headers,
                )
            },
        )
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
        let client = &self.client;
        self.following(
            Method::GET,
            uri,
            auth_header,
            custom_headers,
            |uri, auth_header, custom_headers| {
                client.get_stream_with_max_sse_event_size(
                    uri,
                    session_id.clone(),
                    last_event_id.clone(),
                    auth_header,
                    custom_headers,
                    max_sse_event_size,
                )
            },
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

    /// Found by an adversarial review: an answer naming request `" 2"` (a string with a
    /// space) was said to name "request  2", as if it were request 2. A string id is quoted;
    /// `"2"` for request 2 is its answer (rmcp routes it so).
    #[test]
    fn a_string_id_of_another_request_is_quoted() {
        let answer = |id: serde_json::Value| -> ServerJsonRpcMessage {
            serde_json::from_value(json!({"jsonrpc": "2.0", "id": id, "result": {}})).unwrap()
        };
        let sent = RequestId::Number(2);
        let text = not_its_answer(&sent, &answer(json!(" 2"))).unwrap();
        assert!(
            text.contains(r#"names request " 2", not request 2"#),
            "{text}"
        );
        assert_eq!(not_its_answer(&sent, &answer(json!("2"))), None);
        let text = not_its_answer(&sent, &answer(json!(9))).unwrap();
        assert!(text.contains("names request 9, not request 2"), "{text}");
    }

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

    /// rmcp's texts for a JSON body it could not read as a JSON-RPC message are said in
    /// words, each kind of failure by what it is, without the SDK's type names; a body that
    /// quotes a position of its own is not taken for serde's.
    #[test]
    fn unreadable_json_answers_are_told_in_words() {
        let said = |body: &[u8]| {
            let e = serde_json::from_slice::<ServerJsonRpcMessage>(body).unwrap_err();
            unexpected_answer(&format!(
                "{UNREADABLE_JSON}{e}: {}",
                String::from_utf8_lossy(body)
            ))
        };
        let prefix = "the server's answer was not an MCP answer: ";
        assert_eq!(
            unexpected_answer(&format!(
                "{UNREADABLE_JSON}EOF while parsing a value at line 1 column 0: <empty>"
            )),
            format!("{prefix}its body was empty")
        );
        assert_eq!(
            said(b"{\"a\": tru"),
            format!(
                "{prefix}it is not JSON (EOF while parsing a value at line 1 column 9): \
                 {{\"a\": tru"
            )
        );
        assert_eq!(
            said(b"[1, \"at line 9 column 9: x\""),
            format!(
                "{prefix}it is not JSON (EOF while parsing a list at line 1 column 27): [1, \
                 \"at line 9 column 9: x\""
            )
        );
        assert_eq!(
            said(b"{}"),
            format!("{prefix}it is JSON, but not a JSON-RPC message: {{}}")
        );
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let text = said(deep.as_bytes());
        assert!(
            text.starts_with(&format!("{prefix}it is nested too deeply")),
            "{text}"
        );
        for text in [text, said(b"{}"), said(b"nope")] {
            assert!(!text.contains("ServerJsonRpcMessage"), "{text}");
        }
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
