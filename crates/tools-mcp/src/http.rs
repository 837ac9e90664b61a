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
//! It also takes the request's URL out of reqwest's errors (see [`without_url`]).

use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ErrorData, JsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
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
