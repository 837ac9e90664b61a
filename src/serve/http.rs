//! MCP over Streamable HTTP: rmcp's Streamable HTTP service (sessions as rmcp does them),
//! hosted on hyper (HTTP/1.1), at one endpoint, [`MCP_PATH`].
//!
//! A client ending its session (`DELETE` with its `Mcp-Session-Id`) gets `200 OK`, as from the
//! TypeScript and Python SDKs' servers; a session the server does not know (never made, or
//! ended already) gets `404 Not Found`.
//!
//! A server that runs tools on this machine must not answer a web page: a page on any site
//! can make the browser send requests to `127.0.0.1` (and, with DNS rebinding, under its own
//! host name). So:
//! - [`HttpServer::bind`] refuses an address that is not loopback unless
//!   [`HttpOptions::allow_non_loopback`] says otherwise;
//! - every request's `Host` must name a loopback host (`localhost`, `127.0.0.1`, `[::1]`) or
//!   one of [`HttpOptions::allowed_hosts`], with the bound port, or without a port (as a
//!   proxy in front passes it) when the name was allowed without one;
//! - an `Origin`, when present, must be a loopback origin (`http(s)://localhost`,
//!   `127.0.0.1` or `[::1]`, any port).
//!
//! Both are read strictly, as a URL's host and port (`localhost:8421.evil.com` is no
//! loopback name with a port). Anything else gets `403 Forbidden` with a body saying which
//! header was refused and why; a request with two `Host` (or `Origin`) headers gets `400 Bad
//! Request`.
//!
//! Anyone who can reach the port can open connections. A connection that has not sent a
//! complete request head that passes the token check within
//! [`HttpOptions::authentication_timeout`] is closed, and of those not authenticated yet at
//! most [`HttpOptions::max_unauthenticated`] are kept (a new one closes the oldest); only
//! authenticated connections take the [`HttpOptions::max_connections`] slots of those
//! served. So connections without the token cannot keep a token holder waiting.
//!
//! Priming events (SEP-1699: empty data and a `retry:`) go only to clients on protocol
//! 2025-11-25 or later, which can handle empty data.
//!
//! Loopback is not private on a shared machine (another user, a container sharing the
//! network): with [`HttpOptions::token`] set, every request must also carry the secret, as
//! `Authorization: Bearer TOKEN` or `?token=TOKEN` on the URL (for clients that set no
//! headers; [`HttpServer::url`] includes it), or gets `401 Unauthorized`. `toolwright serve
//! --http` makes a random one per run unless told otherwise.
//!
//! A POST whose body is not a JSON-RPC message gets `400 Bad Request` with a JSON-RPC error
//! (`-32700` Parse error for a body that is not JSON, `-32600` Invalid Request for JSON that
//! is not a message; `id: null`), where rmcp answers `415` with a line of text. A body over
//! [`MAX_REQUEST_BODY_BYTES`] gets rmcp's `413 Payload Too Large`. A request whose id is
//! that of a request of its session still in progress (its response not done, or, with
//! [`HttpServer::with_request_activity`], its call still running after its client
//! disconnected), ids compared as rmcp reads them (`5.0` and `5e0` are `5`), gets `400 Bad
//! Request` with a `-32600` naming the id, and does not run (rmcp would run it and lose the
//! first one's answer).
//!
//! A call's event stream (the SSE body of its `POST`) is read to its end whatever its client
//! does, and its events are kept: a client that went away resumes it with `GET` and
//! `Last-Event-ID` (`N/S`), during the call or after it ended, until it has read the stream
//! to its end once or the session ends (rmcp dropped a stream's events when its answer was
//! sent, so a result that came while its client was away was lost). A `Last-Event-ID` that
//! cannot be resumed gets `400 Bad Request` with a JSON-RPC error saying why, where rmcp
//! answered an empty `200`. A stopping server lets the calls' streams carry their answers
//! (the host's shutdown answers its calls as interrupted) before it closes them.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use http_body_util::combinators::{BoxBody, UnsyncBoxBody};
use http_body_util::{BodyExt, BodyStream, Full, StreamBody};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tool_core::CancellationToken;

/// The path of the MCP endpoint.
pub const MCP_PATH: &str = "/mcp";

/// The largest request body read (4 MiB, rmcp's default): a larger one gets `413 Payload Too
/// Large`.
pub const MAX_REQUEST_BODY_BYTES: usize = 4 * 1024 * 1024;

/// How long a session may go without a request of its own open (a call running, an SSE
/// stream the client holds) and without a new one before it is closed, with its state
/// (background tasks, interpreters): a client that went away without `DELETE` leaves
/// nothing running for longer than this.
pub const SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Where and how to listen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpOptions {
    /// The address to listen on (port 0: any free port).
    pub addr: SocketAddr,
    /// Allow an address that is not loopback. Every request still has to name an allowed
    /// `Host`: the loopback names, or [`allowed_hosts`](Self::allowed_hosts).
    pub allow_non_loopback: bool,
    /// More `Host` values to accept, as `name` (with the bound port, or without a port, as a
    /// proxy in front passes it) or `name:port` (with that port only).
    pub allowed_hosts: Vec<String>,
    /// When an idle session is closed ([`SESSION_IDLE_TIMEOUT`] by default). A session
    /// with a request open (a call still running, however long) is not idle, nor, with
    /// [`HttpServer::with_session_activity`], one whose call still runs after its client
    /// disconnected.
    pub session_idle_timeout: Duration,
    /// The secret every request must carry (`Authorization: Bearer TOKEN`, or `?token=TOKEN`
    /// on the URL); `None`: any request that passes the Host and Origin checks is served.
    pub token: Option<String>,
    /// How long a connection may take to send a request's headers, and stay open idle
    /// between requests, before it is closed ([`HEADER_READ_TIMEOUT`] by default).
    pub header_read_timeout: Duration,
    /// How many connections are served at once once they have authenticated
    /// ([`MAX_CONNECTIONS`] by default); a request of another waits until one closes.
    pub max_connections: usize,
    /// How long a connection may take to send a complete request head that passes the token
    /// check (any complete request head, without a token) before it is closed
    /// ([`AUTHENTICATION_TIMEOUT`] by default).
    pub authentication_timeout: Duration,
    /// How many connections that have not authenticated yet may be open at once
    /// ([`MAX_UNAUTHENTICATED_CONNECTIONS`] by default); a new one beyond it closes the
    /// oldest of them.
    pub max_unauthenticated: usize,
}

/// How long a connection may take to send a request's headers, or sit idle between
/// requests, before it is closed: an idle socket does not hold a file descriptor for long.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// How many connections that have authenticated are served at once by default.
pub const MAX_CONNECTIONS: usize = 256;

/// How long a new connection may take to send a complete request head that passes the token
/// check before it is closed: anyone who can reach the port can open connections, and those
/// must not hold the server's resources (or its token holders' turn) for long.
pub const AUTHENTICATION_TIMEOUT: Duration = Duration::from_secs(5);

/// How many connections that have not authenticated yet may be open at once by default; a
/// new one beyond it closes the oldest of them (a client with the token sends its request
/// the moment it connects, so it is not the oldest for long).
pub const MAX_UNAUTHENTICATED_CONNECTIONS: usize = 256;

impl HttpOptions {
    /// Listen on `addr`, loopback only, loopback host names only.
    pub fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            allow_non_loopback: false,
            allowed_hosts: Vec::new(),
            session_idle_timeout: SESSION_IDLE_TIMEOUT,
            token: None,
            header_read_timeout: HEADER_READ_TIMEOUT,
            max_connections: MAX_CONNECTIONS,
            authentication_timeout: AUTHENTICATION_TIMEOUT,
            max_unauthenticated: MAX_UNAUTHENTICATED_CONNECTIONS,
        }
    }
}

/// What each session is doing, from its HTTP requests: rmcp's own idle timeout counts
/// messages only, so it closed a session whose one call ran longer than five minutes
/// without progress (and cancelled the call). Ours counts requests still open.
#[derive(Default)]
struct SessionActivity {
    sessions: Mutex<HashMap<String, Activity>>,
    /// The JSON-RPC requests whose response is still open, as (session id, request id as
    /// [`super::stdio::id_key`] makes it): one reusing the id of another of its session is
    /// refused (rmcp would run it, and the first one's answer would be lost).
    requests: Mutex<std::collections::HashSet<(String, String)>>,
}

struct Activity {
    /// Requests of the session whose response is still open.
    open: usize,
    /// When the last one opened or closed (or when the session was first seen).
    last: Instant,
}

impl SessionActivity {
    /// Notes a request of session `id` opening; the guard notes it closing when dropped.
    fn open(self: &Arc<Self>, id: &str) -> OpenRequest {
        let mut sessions = lock(&self.sessions);
        let entry = sessions.entry(id.to_owned()).or_insert(Activity {
            open: 0,
            last: Instant::now(),
        });
        entry.open += 1;
        entry.last = Instant::now();
        OpenRequest {
            activity: Arc::clone(self),
            id: id.to_owned(),
        }
    }

    /// The sessions among `live` (the session manager's) idle for longer than `idle`;
    /// forgets the ones no longer live. `active` says when a session's handler was last
    /// busy (a call running: now), which counts as activity as a request open does. It is
    /// asked only about the sessions idle by their requests, and without the lock every
    /// request takes.
    fn idle(&self, live: &[String], idle: Duration, active: Option<&SessionActive>) -> Vec<String> {
        let now = Instant::now();
        let is_idle =
            |entry: &Activity| entry.open == 0 && now.saturating_duration_since(entry.last) > idle;
        let candidates: Vec<&String> = {
            let mut sessions = lock(&self.sessions);
            let alive: std::collections::HashSet<&str> = live.iter().map(String::as_str).collect();
            sessions.retain(|id, _| alive.contains(id.as_str()));
            live.iter()
                .filter(|id| {
                    is_idle(
                        sessions
                            .entry((*id).clone())
                            .or_insert(Activity { open: 0, last: now }),
                    )
                })
                .collect()
        };
        let Some(active) = active else {
            return candidates.into_iter().cloned().collect();
        };
        let busy: Vec<(&String, Option<Instant>)> =
            candidates.into_iter().map(|id| (id, active(id))).collect();
        // A request may have opened meanwhile: each is looked at again.
        let mut sessions = lock(&self.sessions);
        busy.into_iter()
            .filter(|(id, at)| {
                sessions.get_mut(id.as_str()).is_some_and(|entry| {
                    if let Some(at) = at {
                        entry.last = entry.last.max(*at);
                    }
                    is_idle(entry)
                })
            })
            .map(|(id, _)| id.clone())
            .collect()
    }
}

impl SessionActivity {
    /// Notes JSON-RPC request `id` of session `session` as in progress until the guard is
    /// dropped (its response done, or the client gone); `None` when a request of the
    /// session with that id is in progress already: its response is still open, or
    /// `running` says that its call still runs (its client gone).
    fn start_request(
        self: &Arc<Self>,
        session: &str,
        id: &rmcp::model::RequestId,
        running: Option<&RequestActive>,
    ) -> Option<RequestInProgress> {
        if running.is_some_and(|running| running(session, id)) {
            return None;
        }
        let key = (session.to_owned(), super::stdio::id_key(id));
        lock(&self.requests)
            .insert(key.clone())
            .then(|| RequestInProgress {
                activity: Arc::clone(self),
                key,
            })
    }
}

/// A JSON-RPC request of a session in progress (see [`SessionActivity::start_request`]).
struct RequestInProgress {
    activity: Arc<SessionActivity>,
    key: (String, String),
}

impl Drop for RequestInProgress {
    fn drop(&mut self) {
        lock(&self.activity.requests).remove(&self.key);
    }
}

/// A request of a session whose response is still open.
struct OpenRequest {
    activity: Arc<SessionActivity>,
    id: String,
}

impl Drop for OpenRequest {
    fn drop(&mut self) {
        if let Some(entry) = lock(&self.activity.sessions).get_mut(&self.id) {
            entry.open = entry.open.saturating_sub(1);
            entry.last = Instant::now();
        }
    }
}

/// How many notifications (progress) of one call's stream are kept for a client that
/// resumes it; older ones are dropped first. Requests to the client (a permission
/// question) and the answer are always kept.
const MAX_KEPT_NOTIFICATIONS: usize = 64;

/// How many ended call streams a session keeps unfetched (their answers came while their
/// clients were away) before the oldest is dropped.
pub const MAX_UNFETCHED_RESULTS: usize = 32;

/// How many bytes the ended call streams a session keeps unfetched may hold before the
/// oldest is dropped (a result can be large: an image Read returns megabytes).
pub const MAX_UNFETCHED_BYTES: usize = 64 * 1024 * 1024;

/// How long a stopping server waits for the calls' streams still open to carry their
/// answers (a call cancelled by the host's shutdown is answered as interrupted) before it
/// closes every stream.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(3);

/// The event streams of the sessions' calls (the SSE body of each `POST` that carries a
/// request), read to their end whatever their clients do: each event with an id is kept
/// (within bounds) so that a client can resume the stream with `GET` and `Last-Event-ID`,
/// during the call or after it ended, while it was away. rmcp keeps a stream's events only
/// until its answer is sent, so a result that came while its client was away was lost.
/// A stream whose client received its end is forgotten; one that ended unfetched is kept
/// for its session (at most [`MAX_UNFETCHED_RESULTS`] and [`MAX_UNFETCHED_BYTES`]), until
/// it is fetched or the session ends.
#[derive(Default)]
struct CallStreams {
    sessions: Mutex<HashMap<String, SessionStreams>>,
    /// How many streams are still being read (their calls in progress): a stopping server
    /// lets them end first, so that their answers reach their clients.
    live: tokio::sync::watch::Sender<usize>,
}

/// One session's call streams, by the number rmcp gave each (`N/S`: stream `S`).
#[derive(Default)]
struct SessionStreams {
    streams: HashMap<u64, CallStream>,
    /// The streams that ended and were not fetched, oldest first.
    ended: std::collections::VecDeque<u64>,
    /// The bytes those hold.
    ended_bytes: usize,
    /// The streams dropped unfetched (beyond the bounds), the last [`MAX_DROPPED_NAMED`]:
    /// a client resuming one is told why it is gone.
    dropped: std::collections::VecDeque<u64>,
}

/// How many dropped streams a session remembers, to name them as dropped.
const MAX_DROPPED_NAMED: usize = 1024;

/// A call's event stream as read so far.
#[derive(Default)]
struct CallStream {
    /// Its events, in order: index (`N` of `N/S`), the event as sent, and whether it is a
    /// notification (which may be dropped when there are too many).
    events: std::collections::VecDeque<(usize, Bytes, bool)>,
    /// The bytes of `events`.
    bytes: usize,
    /// Its end was read (the call's answer, or the session's end).
    ended: bool,
    /// The client body the events go to now, if any.
    client: Option<tokio::sync::mpsc::Sender<Piece>>,
}

/// What goes to a client's body.
enum Piece {
    /// An event (or a keep-alive comment), as sent.
    Frame(Bytes),
    /// The stream ended: the client read it to its end (`S`, the stream's number, when it
    /// is one kept for resuming).
    End(Option<u64>),
}

/// How many pieces may wait for a client that does not read; past it, the client is
/// dropped from the stream (it may resume it).
const CLIENT_BACKLOG: usize = 256;

/// Why a `Last-Event-ID` cannot be resumed.
#[derive(Debug, PartialEq)]
enum NotResumable {
    /// Not `N/S`.
    NotAnEventId,
    /// No stream `S` is kept for the session (never given out, or fetched).
    NoStream,
    /// Stream `S` ended unfetched and was dropped: the session kept too many.
    Dropped,
    /// Stream `S` has not sent event `N` yet.
    NotSentYet,
}

impl NotResumable {
    fn message(&self, id: &str) -> String {
        let why = match self {
            Self::NotAnEventId => {
                "is not an event id this server gives out (`N/S`, as in the `id:` lines of a call's event stream; `N` for the session's GET stream)"
            }
            Self::NoStream => {
                "names no event stream of this session that can be resumed: it was never given out, or its end was already delivered (a call's result is kept until it is fetched once, while the session lasts)"
            }
            Self::Dropped => {
                return format!(
                    "Invalid Request: Last-Event-ID `{id}` names a call's event stream that ended while no client read it, and was dropped because too many results were kept unfetched: a session keeps at most {MAX_UNFETCHED_RESULTS} ({} MiB) that no client has fetched, the oldest dropped first",
                    MAX_UNFETCHED_BYTES / (1024 * 1024)
                );
            }
            Self::NotSentYet => "names an event its stream has not sent",
        };
        format!("Invalid Request: Last-Event-ID `{id}` {why}")
    }
}

/// The id (`N`, `S`) of an SSE event as rmcp writes it (`...id: N/S\n...`), if it has one.
fn event_id(event: &[u8]) -> Option<(usize, u64)> {
    let text = std::str::from_utf8(event).ok()?;
    let id = text.lines().find_map(|line| line.strip_prefix("id: "))?;
    parse_event_id(id)
}

/// `N/S` as numbers.
fn parse_event_id(id: &str) -> Option<(usize, u64)> {
    let (index, stream) = id.trim().split_once('/')?;
    Some((index.parse().ok()?, stream.parse().ok()?))
}

/// Whether an SSE event carries a notification (`"method": "notifications/..."`, no id).
/// A large event is taken for none unread (a notification is small; a result may be
/// megabytes).
fn is_notification(event: &[u8]) -> bool {
    const LARGEST_NOTIFICATION: usize = 64 * 1024;
    if event.len() > LARGEST_NOTIFICATION {
        return false;
    }
    let Ok(text) = std::str::from_utf8(event) else {
        return false;
    };
    text.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<serde_json::Value>(data).ok())
        .any(|message| {
            message.get("id").is_none()
                && message["method"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("notifications/"))
        })
}

impl CallStreams {
    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, SessionStreams>> {
        lock(&self.sessions)
    }

    /// Reads `body` (rmcp's event stream for a call) to its end in a task of its own,
    /// keeping its events for session `session` (none: a request without a session, whose
    /// stream cannot be resumed), and gives back the client's body, which carries `guards`
    /// until it ends or is dropped.
    fn pump<G: Send + Sync + 'static>(
        self: &Arc<Self>,
        session: Option<String>,
        mut body: Body,
        guards: G,
    ) -> Body {
        let (tx, rx) = tokio::sync::mpsc::channel(CLIENT_BACKLOG);
        self.live.send_modify(|n| *n += 1);
        let streams = Arc::clone(self);
        let client_session = session.clone();
        tokio::spawn(async move {
            let _live = Live(Arc::clone(&streams));
            // Until the stream's number is known (its first event's id), events go to the
            // first client only.
            let mut first = Some(tx);
            let mut number = None;
            while let Some(frame) = body.frame().await {
                let Ok(Ok(data)) = frame.map(hyper::body::Frame::into_data) else {
                    continue;
                };
                let id = event_id(&data);
                if number.is_none()
                    && let (Some(session), Some((_, stream))) = (&session, id)
                {
                    number = Some(stream);
                    streams.open(session, stream, first.take());
                }
                match (&session, number) {
                    (Some(session), Some(stream)) => {
                        streams.record(session, stream, id.map(|(index, _)| index), data);
                    }
                    _ => {
                        if let Some(client) = &first
                            && client.try_send(Piece::Frame(data)).is_err()
                        {
                            first = None;
                        }
                    }
                }
            }
            match (&session, number) {
                (Some(session), Some(stream)) => streams.end(session, stream),
                _ => {
                    if let Some(client) = first {
                        let _ = client.try_send(Piece::End(None));
                    }
                }
            }
        });
        ClientBody {
            prefix: std::collections::VecDeque::new(),
            pieces: rx,
            streams: Arc::clone(self),
            session: client_session,
            guards: Some(Box::new(guards)),
            done: false,
        }
        .boxed()
    }

    /// Stream `stream` of `session` begins, its events going to `client`.
    fn open(&self, session: &str, stream: u64, client: Option<tokio::sync::mpsc::Sender<Piece>>) {
        self.sessions()
            .entry(session.to_owned())
            .or_default()
            .streams
            .insert(
                stream,
                CallStream {
                    client,
                    ..CallStream::default()
                },
            );
    }

    /// An event (with its index) or a keep-alive comment (without) of a stream: kept, and
    /// sent to its client.
    fn record(&self, session: &str, stream: u64, index: Option<usize>, data: Bytes) {
        let notification = index.is_some() && is_notification(&data);
        let mut sessions = self.sessions();
        let Some(call) = sessions
            .get_mut(session)
            .and_then(|s| s.streams.get_mut(&stream))
        else {
            return;
        };
        if let Some(index) = index {
            if notification
                && call.events.iter().filter(|e| e.2).count() >= MAX_KEPT_NOTIFICATIONS
                && let Some(oldest) = call.events.iter().position(|e| e.2)
                && let Some((_, dropped, _)) = call.events.remove(oldest)
            {
                call.bytes -= dropped.len();
            }
            call.bytes += data.len();
            call.events.push_back((index, data.clone(), notification));
        }
        // A client that does not read, or is gone, is dropped from the stream (it may
        // resume it).
        if let Some(client) = &call.client
            && client.try_send(Piece::Frame(data)).is_err()
        {
            call.client = None;
        }
    }

    /// Stream `stream` of `session` ended: its client is told, and it is kept until it is
    /// fetched (within the session's bounds).
    fn end(&self, session: &str, stream: u64) {
        let mut sessions = self.sessions();
        let Some(streams) = sessions.get_mut(session) else {
            return;
        };
        let Some(call) = streams.streams.get_mut(&stream) else {
            return;
        };
        call.ended = true;
        if let Some(client) = call.client.take() {
            let _ = client.try_send(Piece::End(Some(stream)));
        }
        streams.ended_bytes += call.bytes;
        streams.ended.push_back(stream);
        while streams.ended.len() > MAX_UNFETCHED_RESULTS
            || (streams.ended_bytes > MAX_UNFETCHED_BYTES && streams.ended.len() > 1)
        {
            let Some(oldest) = streams.ended.pop_front() else {
                break;
            };
            if let Some(dropped) = streams.streams.remove(&oldest) {
                streams.ended_bytes -= dropped.bytes;
                if streams.dropped.len() == MAX_DROPPED_NAMED {
                    streams.dropped.pop_front();
                }
                streams.dropped.push_back(oldest);
                tracing::warn!(target: "toolwright::serve", session, stream = oldest, "dropped an unfetched call result: the session keeps at most {MAX_UNFETCHED_RESULTS} ({MAX_UNFETCHED_BYTES} bytes)");
            }
        }
    }

    /// A client read stream `stream` of `session` to its end: it is forgotten.
    fn fetched(&self, session: &str, stream: u64) {
        let mut sessions = self.sessions();
        let Some(streams) = sessions.get_mut(session) else {
            return;
        };
        if streams.streams.get(&stream).is_some_and(|call| call.ended)
            && let Some(call) = streams.streams.remove(&stream)
        {
            streams.ended.retain(|s| *s != stream);
            streams.ended_bytes -= call.bytes;
        }
    }

    /// A client resumes `session`'s stream after event `last` (`N/S`): the client's body,
    /// with the events after it and then those to come; `open` and any other guard held
    /// until it ends.
    fn resume<G: Send + Sync + 'static>(
        self: &Arc<Self>,
        session: &str,
        last: &str,
        guards: G,
    ) -> Result<Body, NotResumable> {
        let (index, stream) = parse_event_id(last).ok_or(NotResumable::NotAnEventId)?;
        let mut sessions = self.sessions();
        let kept = sessions.get_mut(session);
        if kept
            .as_ref()
            .is_some_and(|s| !s.streams.contains_key(&stream) && s.dropped.contains(&stream))
        {
            return Err(NotResumable::Dropped);
        }
        let call = kept
            .and_then(|s| s.streams.get_mut(&stream))
            .ok_or(NotResumable::NoStream)?;
        if call.events.back().is_none_or(|e| e.0 < index) {
            return Err(NotResumable::NotSentYet);
        }
        let prefix = call
            .events
            .iter()
            .filter(|e| e.0 > index)
            .map(|e| e.1.clone())
            .collect();
        let (tx, rx) = tokio::sync::mpsc::channel(CLIENT_BACKLOG);
        if call.ended {
            let _ = tx.try_send(Piece::End(Some(stream)));
        } else {
            // The client it replaces (a connection that went away) gets nothing more.
            call.client = Some(tx);
        }
        Ok(ClientBody {
            prefix,
            pieces: rx,
            streams: Arc::clone(self),
            session: Some(session.to_owned()),
            guards: Some(Box::new(guards)),
            done: false,
        }
        .boxed())
    }

    /// Forgets the streams of `session` (it ended).
    fn end_session(&self, session: &str) {
        self.sessions().remove(session);
    }

    /// The sessions some of whose streams are kept.
    fn session_ids(&self) -> Vec<String> {
        self.sessions().keys().cloned().collect()
    }

    /// Forgets the streams of the sessions among `known` (as [`Self::session_ids`] gave
    /// them, before `live` was read) that are not in `live` (rmcp's sessions): those ended.
    /// A session whose first stream began since is not among `known`.
    fn forget_ended(&self, known: Vec<String>, live: &[String]) {
        let mut sessions = self.sessions();
        for id in known.iter().filter(|id| !live.contains(id)) {
            sessions.remove(id);
        }
    }

    /// Waits until no stream is being read (every call's answer has gone to its client's
    /// body), at most `limit`.
    async fn drained(&self, limit: Duration) {
        let mut live = self.live.subscribe();
        let _ = tokio::time::timeout(limit, live.wait_for(|n| *n == 0)).await;
    }
}

/// Counts a stream as being read until dropped.
struct Live(Arc<CallStreams>);

impl Drop for Live {
    fn drop(&mut self) {
        self.0.live.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// A client's body of a call stream: the events it missed, then those the stream's reader
/// passes on. Read to its end, the stream is forgotten (fetched).
struct ClientBody {
    prefix: std::collections::VecDeque<Bytes>,
    pieces: tokio::sync::mpsc::Receiver<Piece>,
    streams: Arc<CallStreams>,
    session: Option<String>,
    /// Held until the body ends or is dropped (the request open, its id in use).
    guards: Option<Box<dyn Send + Sync>>,
    done: bool,
}

impl hyper::body::Body for ClientBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
        use std::task::Poll;
        if self.done {
            return Poll::Ready(None);
        }
        if let Some(event) = self.prefix.pop_front() {
            return Poll::Ready(Some(Ok(hyper::body::Frame::data(event))));
        }
        match self.pieces.poll_recv(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(Piece::Frame(data))) => {
                Poll::Ready(Some(Ok(hyper::body::Frame::data(data))))
            }
            Poll::Ready(end) => {
                if let (Some(Piece::End(Some(stream))), Some(session)) = (end, &self.session) {
                    self.streams.fetched(session, stream);
                }
                self.done = true;
                self.guards = None;
                Poll::Ready(None)
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done
    }
}

/// The `200` with an event stream that resumes a call's stream (headers as rmcp sends them).
fn event_stream_response(body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-cache"),
    );
    headers.insert("x-accel-buffering", http::HeaderValue::from_static("no"));
    response
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The connections that have not authenticated yet (no request of theirs has passed the
/// token check), oldest first, each with the token that closes it. Anyone who can reach the
/// port can open connections: these are bounded in number (a new one beyond the bound closes
/// the oldest) and in time ([`HttpOptions::authentication_timeout`]), and take none of the
/// slots of the connections served, so that they cannot keep a token holder waiting.
struct Unauthenticated {
    open: Mutex<std::collections::VecDeque<(u64, CancellationToken)>>,
    max: usize,
}

impl Unauthenticated {
    fn new(max: usize) -> Self {
        Self {
            open: Mutex::default(),
            max: max.max(1),
        }
    }

    /// Notes connection `id`, which cancelling `close` closes; beyond the bound, the oldest
    /// connection not authenticated yet is closed.
    fn admit(&self, id: u64, close: CancellationToken) {
        let mut open = lock(&self.open);
        while open.len() >= self.max {
            let Some((_, oldest)) = open.pop_front() else {
                break;
            };
            oldest.cancel();
        }
        open.push_back((id, close));
    }

    /// Takes connection `id` off the list: `true` when it was on it (it had not
    /// authenticated, and had not been closed).
    fn remove(&self, id: u64) -> bool {
        let mut open = lock(&self.open);
        match open.iter().position(|(i, _)| *i == id) {
            Some(at) => {
                open.remove(at);
                true
            }
            None => false,
        }
    }

    /// Closes connection `id` if it has not authenticated yet (its time is up): `true` if
    /// it was closed.
    fn expire(&self, id: u64) -> bool {
        let mut open = lock(&self.open);
        match open.iter().position(|(i, _)| *i == id) {
            Some(at) => {
                if let Some((_, close)) = open.remove(at) {
                    close.cancel();
                }
                true
            }
            None => false,
        }
    }
}

/// One connection's standing: not authenticated until a request of it passes the token
/// check; then it takes one of the slots of the connections served at once (a request
/// waits for one when all are taken), and keeps it until it closes.
struct Admission {
    id: u64,
    unauthenticated: Arc<Unauthenticated>,
    slots: Arc<tokio::sync::Semaphore>,
    slot: tokio::sync::Mutex<Option<tokio::sync::OwnedSemaphorePermit>>,
}

impl Admission {
    /// A request of the connection passed the token check: it is no longer closed for
    /// being slow or crowded out.
    fn authenticated(&self) {
        self.unauthenticated.remove(self.id);
    }

    /// Waits for a slot of the connections served, unless the connection holds one.
    async fn served(&self) {
        let mut slot = self.slot.lock().await;
        if slot.is_none() {
            *slot = Arc::clone(&self.slots).acquire_owned().await.ok();
        }
    }
}

/// Why the HTTP server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// A non-loopback address without [`HttpOptions::allow_non_loopback`].
    #[error(
        "refusing to listen on {0}: it is not a loopback address; anyone who can reach it and learns the token (anyone at all, with `--no-auth`) could run these tools (shell commands, file edits), and the token travels unencrypted; listen on 127.0.0.1 (the default), or allow it explicitly (`--allow-non-loopback`, with TLS in front)"
    )]
    NotLoopback(SocketAddr),
    /// An allowed host that is not a host name or `name:port`.
    #[error(
        "`{0}` is not a host name or host:port (a name of letters, digits, `-`, `.` and `_`, an IPv4 address or a bracketed IPv6 one, and a port from 1 to 65535)"
    )]
    BadAllowedHost(String),
    /// An allowed host with a wildcard (`*`), which would match only a literal `*`.
    #[error(
        "`{0}`: allowed hosts take no wildcard (a `*` would match only a Host that is literally `*`); name each host that requests may use (NAME, or NAME:PORT), one --allowed-host each"
    )]
    WildcardAllowedHost(String),
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// What the OS said.
        source: std::io::Error,
    },
}

/// Parses an address for `--http`: `PORT`, `HOST:PORT` (an IP address or `localhost`), or
/// `[IPV6]:PORT`.
pub fn parse_addr(text: &str) -> Result<SocketAddr, String> {
    let text = text.trim();
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    if let Some((host, port)) = text.rsplit_once(':')
        && host.eq_ignore_ascii_case("localhost")
        && let Ok(port) = port.parse::<u16>()
    {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    Err(format!(
        "`{text}` is not an address to listen on: expected PORT, IP:PORT, localhost:PORT or [IPV6]:PORT (e.g. 127.0.0.1:8421)"
    ))
}

/// What every request is checked against: the `Host` names with the bound port, and
/// loopback origins.
#[derive(Debug, Clone)]
struct RequestGuard {
    /// Lower-case host names (IPv6 without brackets), the port each must come with, and
    /// whether a Host without a port (the scheme's default, as a proxy in front passes it)
    /// also matches: for the loopback names and names allowed without a port.
    hosts: Vec<(String, u16, bool)>,
    /// The secret every request must carry, if any.
    token: Option<String>,
}

const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

fn normalize_host(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase()
}

fn is_loopback_name(host: &str) -> bool {
    LOOPBACK_NAMES.contains(&normalize_host(host).as_str())
}

/// `name` or `[v6]` in a URL or a Host header.
fn display_host(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_owned()
    }
}

impl RequestGuard {
    fn new(local: std::net::SocketAddr, extra: &[String]) -> Result<Self, HttpError> {
        let port = local.port();
        let mut hosts: Vec<(String, u16, bool)> = LOOPBACK_NAMES
            .iter()
            .map(|h| ((*h).to_owned(), port, true))
            .collect();
        // The address it is bound to (another loopback address, `127.1.2.3`): the URL it
        // prints names it.
        let bound = normalize_host(&local.ip().to_string());
        if !hosts.iter().any(|(h, _, _)| *h == bound) {
            hosts.push((bound, port, true));
        }
        for entry in extra {
            let (host, given) = parse_allowed_host(entry)?;
            hosts.push((host, given.unwrap_or(port), given.is_none()));
        }
        Ok(Self { hosts, token: None })
    }

    /// Whether `request` carries the token (when one is required): as a bearer token, or as
    /// the `token` query parameter, percent-decoded (`%66ixed-…` is `fixed-…`, as a URL
    /// may write any character). Compared in time independent of where it differs.
    fn authorized<B>(&self, request: &Request<B>) -> bool {
        let Some(token) = &self.token else {
            return true;
        };
        let same = |given: &[u8]| {
            given.len() == token.len()
                && given
                    .iter()
                    .zip(token.bytes())
                    .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                    == 0
        };
        let bearer = request
            .headers()
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            // The scheme's name is case-insensitive (RFC 9110 11.1): `bearer` too.
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("Bearer"))
            .is_some_and(|(_, v)| same(v.trim().as_bytes()));
        let query = request.uri().query().is_some_and(|q| {
            q.split('&')
                .filter_map(|pair| pair.strip_prefix("token="))
                .any(|value| same(&percent_decoded(value)))
        });
        bearer || query
    }

    /// The `Host` values accepted, for messages.
    fn host_values(&self) -> Vec<String> {
        self.hosts
            .iter()
            .flat_map(|(h, p, portless)| {
                let host = display_host(h);
                let bare = portless.then(|| host.clone());
                std::iter::once(format!("{host}:{p}")).chain(bare)
            })
            .collect()
    }

    /// The `Host` values for rmcp's own check, which runs after ours: a name a Host may give
    /// without a port is passed bare (rmcp matches a bare name with any port or none; ours
    /// has already held it to the bound port or none), the others as `name:port`.
    fn rmcp_host_values(&self) -> Vec<String> {
        self.hosts
            .iter()
            .map(|(h, p, portless)| match portless {
                true => display_host(h),
                false => format!("{}:{p}", display_host(h)),
            })
            .collect()
    }

    /// The origins accepted, in rmcp's syntax.
    fn origin_values() -> Vec<String> {
        ["http", "https"]
            .iter()
            .flat_map(|scheme| {
                LOOPBACK_NAMES
                    .iter()
                    .map(move |h| format!("{scheme}://{}:*", display_host(h)))
            })
            .collect()
    }

    /// `Err((status, body))` when a header is refused: `400 Bad Request` for a request
    /// with more than one `Host` or `Origin` (RFC 9112 wants exactly one Host), `403
    /// Forbidden` for one not allowed.
    fn check(&self, headers: &http::HeaderMap) -> Result<(), (StatusCode, String)> {
        let forbidden = |body: String| Err((StatusCode::FORBIDDEN, body));
        let accepted = self.host_values().join(", ");
        for name in [http::header::HOST, http::header::ORIGIN] {
            let count = headers.get_all(&name).iter().count();
            if count > 1 {
                let header = if name == http::header::HOST {
                    "Host"
                } else {
                    "Origin"
                };
                return Err((
                    StatusCode::BAD_REQUEST,
                    format!(
                        "Bad Request: the request has {count} {header} headers; a request carries at most one (RFC 9112 and RFC 6454), and this server does not pick one.\n"
                    ),
                ));
            }
        }
        let host = match headers.get(http::header::HOST).map(|h| h.to_str()) {
            None => {
                return forbidden(format!(
                    "Forbidden: the request has no Host header. This MCP server answers only requests addressed to {accepted} (DNS-rebinding protection).\n"
                ));
            }
            Some(Err(_)) => {
                return forbidden("Forbidden: the Host header is not readable text.\n".to_owned());
            }
            Some(Ok(host)) => host,
        };
        let allowed = parse_authority(host).is_some_and(|(name, port)| {
            self.hosts.iter().any(|(h, p, portless)| {
                *h == name
                    && match port {
                        Some(port) => port == *p,
                        None => *portless,
                    }
            })
        });
        if !allowed {
            return forbidden(format!(
                "Forbidden: Host header `{host}` is not allowed. This MCP server runs tools on this machine and answers only requests addressed to {accepted}, so that a web page cannot reach it through a rebound DNS name (DNS-rebinding protection). To accept another name, start it with --allowed-host NAME.\n"
            ));
        }
        if let Some(origin) = headers.get(http::header::ORIGIN) {
            let text = origin.to_str().unwrap_or("(not readable text)");
            if !is_loopback_origin(text) {
                return forbidden(format!(
                    "Forbidden: Origin `{text}` is not allowed. This MCP server runs tools on this machine and accepts browser requests only from pages served by this machine (http or https on localhost, 127.0.0.1 or [::1]); requests without an Origin header (non-browser clients) are accepted.\n"
                ));
            }
        }
        Ok(())
    }
}

/// `host[:port]` (a `Host` header, an origin's authority, an `--allowed-host`) read
/// strictly: a registered name (letters, digits, `-`, `.`, `_`), an IPv4 address or a
/// bracketed IPv6 address, then nothing or `:` and a port of digits from 1 to 65535. The
/// host in lower case (IPv6 without brackets, in its shortest form) and the port. `None`
/// for anything else: `localhost:8421.evil.com`, `[::1].evil.com`, user info
/// (`localhost@evil.com`), a path, `*`, an empty port.
fn parse_authority(text: &str) -> Option<(String, Option<u16>)> {
    let port = |text: &str| -> Option<u16> {
        if text.is_empty() || text.len() > 5 || !text.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        text.parse::<u16>().ok().filter(|p| *p != 0)
    };
    if let Some(rest) = text.strip_prefix('[') {
        let (inside, after) = rest.split_once(']')?;
        let ip: std::net::Ipv6Addr = inside.parse().ok()?;
        let given = match after {
            "" => None,
            after => Some(port(after.strip_prefix(':')?)?),
        };
        return Some((ip.to_string(), given));
    }
    let (host, given) = match text.split_once(':') {
        Some((host, after)) => (host, Some(port(after)?)),
        None => (text, None),
    };
    let name_byte = |b: u8| b.is_ascii_alphanumeric() || b"-._".contains(&b);
    if host.is_empty() || !host.bytes().all(name_byte) {
        return None;
    }
    Some((host.to_ascii_lowercase(), given))
}

/// Whether `origin` (an `Origin` header) is a page of this machine: `http` or `https`, a
/// loopback host (`localhost`, `127.0.0.1`, `[::1]`), any port, and nothing else (no path,
/// no user info), read as a URL's parts rather than as a prefix (`http://localhost:8421.evil.com`
/// is not one).
fn is_loopback_origin(origin: &str) -> bool {
    let Some((scheme, authority)) = origin.split_once("://") else {
        return false;
    };
    (scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https"))
        && parse_authority(authority).is_some_and(|(host, _)| is_loopback_name(&host))
}

/// An `--allowed-host` value (`NAME` or `NAME:PORT`) as the Host check takes it: the host
/// (lower case, IPv6 without brackets) and the port, if one was given. A wildcard is
/// refused as such (it would match only a literal `*`), as is anything that is not a host
/// and a port.
pub fn parse_allowed_host(entry: &str) -> Result<(String, Option<u16>), HttpError> {
    if entry.contains('*') {
        return Err(HttpError::WildcardAllowedHost(entry.to_owned()));
    }
    parse_authority(entry.trim()).ok_or_else(|| HttpError::BadAllowedHost(entry.to_owned()))
}

/// `text` with each `%XX` (two hex digits) replaced by the byte it names; a `%` not followed
/// by two hex digits stays as it is (it then matches no token).
fn percent_decoded(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let hex = |b: u8| char::from(b).to_digit(16);
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let (Some(high), Some(low)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            // Two hex digits: at most 0xff.
            decoded.push(u8::try_from(high * 16 + low).unwrap_or(u8::MAX));
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    decoded
}

type Body = BoxBody<Bytes, Infallible>;

fn text_response(status: StatusCode, text: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// The MCP endpoint behind the Host/Origin checks.
struct Guarded<S: ServerHandler + Send + 'static> {
    guard: Arc<RequestGuard>,
    inner: StreamableHttpService<S, LocalSessionManager>,
    activity: Arc<SessionActivity>,
    /// rmcp's sessions, to tell a `DELETE` of an unknown one.
    sessions: Arc<LocalSessionManager>,
    /// Told of each session a client ends with `DELETE` ([`HttpServer::on_session_end`]).
    session_end: Option<SessionEnd>,
    /// Whether a session's request still runs ([`HttpServer::with_request_activity`]).
    request_active: Option<RequestActive>,
    /// The calls' event streams, read to their end and kept for resuming.
    streams: Arc<CallStreams>,
    /// The standing of the connection this serves (none: not tied to one).
    admission: Option<Arc<Admission>>,
}

/// What is told, with the session's id, that an HTTP session ended (a client's `DELETE`,
/// the idle timeout): see [`HttpServer::on_session_end`].
pub type SessionEnd = Arc<dyn Fn(&str) + Send + Sync>;

/// When the HTTP session with this id was last busy beyond its requests (a call still
/// running: now; else when its last call ended), if ever: see
/// [`HttpServer::with_session_activity`].
pub type SessionActive = Arc<dyn Fn(&str) -> Option<Instant> + Send + Sync>;

/// Whether the HTTP session with this id still runs the call of the request with this id
/// (as rmcp reads it): see [`HttpServer::with_request_activity`].
pub type RequestActive = Arc<dyn Fn(&str, &rmcp::model::RequestId) -> bool + Send + Sync>;

impl<S: ServerHandler + Send + 'static> Clone for Guarded<S> {
    fn clone(&self) -> Self {
        Self {
            guard: self.guard.clone(),
            inner: self.inner.clone(),
            activity: self.activity.clone(),
            sessions: self.sessions.clone(),
            session_end: self.session_end.clone(),
            request_active: self.request_active.clone(),
            streams: self.streams.clone(),
            admission: self.admission.clone(),
        }
    }
}

impl<S: ServerHandler + Send + 'static> hyper::service::Service<Request<Incoming>> for Guarded<S> {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        if let Err((status, body)) = self.guard.check(request.headers()) {
            tracing::warn!(target: "toolwright::serve", "refused a request: {}", body.trim_end());
            return Box::pin(std::future::ready(Ok(text_response(status, body))));
        }
        if !self.guard.authorized(&request) {
            tracing::warn!(target: "toolwright::serve", "refused a request without the token");
            let mut response = text_response(
                StatusCode::UNAUTHORIZED,
                "Unauthorized: this MCP server runs tools on this machine and serves only clients that have its token: send `Authorization: Bearer TOKEN`, or use the URL it printed at start (which carries `?token=`).\n".to_owned(),
            );
            response.headers_mut().insert(
                http::header::WWW_AUTHENTICATE,
                http::HeaderValue::from_static("Bearer"),
            );
            return Box::pin(std::future::ready(Ok(response)));
        }
        // The token passed: the connection is no longer one anyone could have opened.
        let admission = self.admission.clone();
        if let Some(admission) = &admission {
            admission.authenticated();
        }
        if request.uri().path() != MCP_PATH {
            let body = format!(
                "Not found: {} is not served here; the MCP endpoint is {MCP_PATH}.\n",
                request.uri().path()
            );
            return Box::pin(std::future::ready(Ok(text_response(
                StatusCode::NOT_FOUND,
                body,
            ))));
        }
        let open = request
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(|id| self.activity.open(id));
        let mut inner = self.inner.clone();
        let sessions = Arc::clone(&self.sessions);
        let session_end = self.session_end.clone();
        let activity = Arc::clone(&self.activity);
        let request_active = self.request_active.clone();
        let streams = Arc::clone(&self.streams);
        Box::pin(async move {
            // At most so many connections with the token are served at once.
            if let Some(admission) = &admission {
                admission.served().await;
            }
            // rmcp accepts (`202`) the `DELETE` of any session id; MCP wants `404` for one
            // the server does not know, as rmcp answers other requests naming it.
            let unknown_session = match request.headers().get("mcp-session-id") {
                Some(id) if request.method() == http::Method::DELETE => {
                    use rmcp::transport::streamable_http_server::session::SessionManager as _;
                    let id: rmcp::transport::streamable_http_server::session::SessionId =
                        Arc::from(id.to_str().unwrap_or_default());
                    !sessions.has_session(&id).await.unwrap_or(true)
                }
                _ => false,
            };
            // A POST's body is read here (as rmcp would), so that a body rmcp cannot
            // deserialize gets a JSON-RPC error rather than rmcp's `415` and a line of text.
            let (parts, body) = request.into_parts();
            let (body, read) = if parts.method == http::Method::POST {
                match read_body(body, MAX_REQUEST_BODY_BYTES).await {
                    Ok(read) => (
                        Full::new(read.clone())
                            .map_err(|never| match never {})
                            .boxed_unsync(),
                        Some(read),
                    ),
                    // Too large (or unreadable): rmcp answers for it.
                    Err(rest) => (rest, None),
                }
            } else {
                (body.boxed_unsync(), None)
            };
            // A session the client ends stops its calls now: rmcp lets a closed session's
            // handlers run on for seconds, commands and their effects included.
            if parts.method == http::Method::DELETE
                && !unknown_session
                && let (Some(end), Some(id)) = (
                    &session_end,
                    parts
                        .headers
                        .get("mcp-session-id")
                        .and_then(|v| v.to_str().ok()),
                )
            {
                end(id);
            }
            if parts.method == http::Method::DELETE
                && !unknown_session
                && let Some(id) = parts
                    .headers
                    .get("mcp-session-id")
                    .and_then(|v| v.to_str().ok())
            {
                streams.end_session(id);
            }
            let message: Option<serde_json::Value> = read
                .as_deref()
                .filter(|_| parts.method == http::Method::POST)
                .and_then(|body| serde_json::from_slice(body).ok());
            // An `initialize` rmcp cannot read (no `clientInfo`) would be taken for a
            // request of no session (`400 Session ID is required`): it is told what it lacks.
            if let Some(answer) = message.as_ref().and_then(bad_initialize) {
                return Ok(json_response(StatusCode::BAD_REQUEST, answer));
            }
            // A request reusing the id of one of its session still in progress is refused
            // before it runs, ids compared as rmcp reads them. (From 2026-07-28 on there
            // are no sessions: rmcp serves each request on its own, whatever it names.)
            let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok());
            let sessionless = header("mcp-protocol-version").is_some_and(|v| v >= "2026-07-28");
            let session = header("mcp-session-id")
                .filter(|_| !sessionless)
                .map(str::to_owned);
            // A call's stream resumed (`N/S`) is served from what was kept of it, also
            // after the call ended; an id that is not one gets `400` saying why (rmcp
            // answered both with an empty `200`). The GET stream's own ids (`N`) are rmcp's.
            if parts.method == http::Method::GET
                && let Some(session) = &session
                && let Some(last) = header("last-event-id")
                && header("accept").is_some_and(|a| a.contains("text/event-stream"))
                && last.trim().parse::<usize>().is_err()
            {
                use rmcp::transport::streamable_http_server::session::SessionManager as _;
                let id: rmcp::transport::streamable_http_server::session::SessionId =
                    Arc::from(session.as_str());
                if sessions.has_session(&id).await.unwrap_or(false) {
                    return Ok(match streams.resume(session, last, open) {
                        Ok(body) => event_stream_response(body),
                        Err(why) => {
                            let why = why.message(last);
                            tracing::warn!(target: "toolwright::serve", "refused a resumption: {why}");
                            let answer = super::stdio::error_response(
                                &serde_json::Value::Null,
                                -32600,
                                &why,
                            );
                            json_response(StatusCode::BAD_REQUEST, answer)
                        }
                    });
                }
            }
            let mut in_progress = None;
            if let (Some(message), Some(session)) =
                (&message, header("mcp-session-id").filter(|_| !sessionless))
                && message.get("method").is_some()
                && let Some(id) = message
                    .get("id")
                    .filter(|id| id.is_string() || id.is_number())
                // An id rmcp cannot read: rmcp refuses the request.
                && let Some(read) = super::stdio::request_id(id)
            {
                match activity.start_request(session, &read, request_active.as_ref()) {
                    Some(started) => in_progress = Some(started),
                    None => {
                        let why = super::stdio::id_in_use(&read);
                        tracing::warn!(target: "toolwright::serve", "refused a request: {why}");
                        let answer = super::stdio::error_response(id, -32600, &why);
                        return Ok(json_response(StatusCode::BAD_REQUEST, answer));
                    }
                }
            }
            let is_post = parts.method == http::Method::POST;
            let is_delete = parts.method == http::Method::DELETE;
            let primed =
                client_protocol(&parts.headers, message.as_ref()).as_str() >= FIRST_PRIMED_VERSION;
            let request = Request::from_parts(parts, body);
            let response = tower_service::Service::call(&mut inner, request).await?;
            if unknown_session && response.status() == StatusCode::ACCEPTED {
                return Ok(text_response(
                    StatusCode::NOT_FOUND,
                    "Not Found: Session not found\n".to_owned(),
                ));
            }
            // A session ended is `200 OK`, as the TypeScript and Python SDKs' servers answer
            // (rmcp's `202 Accepted` makes the Python SDK's client warn "Session termination
            // failed: 202" at every close; it takes 200 and 204).
            let response = if is_delete && response.status() == StatusCode::ACCEPTED {
                let (mut head, body) = response.into_parts();
                head.status = StatusCode::OK;
                Response::from_parts(head, body)
            } else {
                response
            };
            let response = match read {
                Some(read) if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE => {
                    rejected_body(response, &read).await
                }
                _ => response,
            };
            // Priming events (empty `data:` with `retry:`) only for clients on 2025-11-25 or
            // later: older ones cannot handle an event with empty data.
            let response = if is_event_stream(&response) && !primed {
                response.map(without_priming)
            } else {
                response
            };
            // A request's event stream is read to its end whatever the client does, its
            // events kept for resuming; the request is open (and in progress) until the
            // client's body is done or dropped.
            let event_stream = is_event_stream(&response);
            if is_post && response.status() == StatusCode::OK && event_stream {
                let (head, body) = response.into_parts();
                let body = streams.pump(session, body, (open, in_progress));
                return Ok(Response::from_parts(head, body));
            }
            // Open (and the request in progress) until the response's body is done or
            // dropped.
            Ok(match (open, in_progress) {
                (None, None) => response,
                (open, in_progress) => response.map(|body| {
                    body.map_frame(move |frame| {
                        let _ = (&open, &in_progress);
                        frame
                    })
                    .boxed()
                }),
            })
        })
    }
}

/// A request body for rmcp.
type RequestBody = UnsyncBoxBody<Bytes, hyper::Error>;

/// The first protocol version whose clients are sent priming events (SEP-1699: an event
/// with empty data and a `retry:`, for a client to resume from); older clients cannot
/// handle empty data, and the TypeScript SDK sends them none either.
const FIRST_PRIMED_VERSION: &str = "2025-11-25";

/// The protocol version of a request's client: an `initialize`'s `protocolVersion` (`message`,
/// the POST's body), else the `MCP-Protocol-Version` header, else 2025-03-26 (MCP: what a
/// server assumes without the header).
fn client_protocol(headers: &http::HeaderMap, message: Option<&serde_json::Value>) -> String {
    if let Some(version) = message
        .filter(|m| m["method"] == "initialize")
        .and_then(|m| m["params"]["protocolVersion"].as_str())
    {
        return version.to_owned();
    }
    headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("2025-03-26")
        .trim()
        .to_owned()
}

/// Whether `response` carries an event stream.
fn is_event_stream<B>(response: &Response<B>) -> bool {
    response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .is_some_and(|t| t.as_bytes().starts_with(b"text/event-stream"))
}

/// Whether an SSE event (one frame, as rmcp writes them) is a priming event: a `retry:`
/// field, and data, if any, that is empty.
fn is_priming(event: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(event) else {
        return false;
    };
    let mut retry = false;
    for line in text.lines() {
        if let Some(data) = line.strip_prefix("data:") {
            if !data.trim().is_empty() {
                return false;
            }
        } else if line.starts_with("retry:") {
            retry = true;
        }
    }
    retry
}

/// An event stream without its priming events.
fn without_priming(body: Body) -> Body {
    use futures::StreamExt as _;
    let frames = BodyStream::new(body).filter(|frame| {
        let priming = frame
            .as_ref()
            .ok()
            .and_then(hyper::body::Frame::data_ref)
            .is_some_and(|data| is_priming(data));
        std::future::ready(!priming)
    });
    BodyExt::boxed(StreamBody::new(frames))
}

/// Reads a body of at most `max` bytes, whole. A larger one (or one that fails part-way) is
/// given back as a body that yields what was read and then the rest, for rmcp to answer.
async fn read_body(mut body: Incoming, max: usize) -> Result<Bytes, RequestBody> {
    let mut read = BytesMut::new();
    loop {
        let frame = match body.frame().await {
            None => return Ok(read.freeze()),
            Some(Ok(frame)) => frame,
            Some(Err(e)) => {
                let head = [Ok(hyper::body::Frame::data(read.freeze())), Err(e)];
                return Err(StreamBody::new(futures::stream::iter(head)).boxed_unsync());
            }
        };
        // Trailers are not part of the message (rmcp skips them too).
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if read.len() + data.len() > max {
            use futures::StreamExt as _;
            let head = [read.freeze(), data].map(|d| Ok(hyper::body::Frame::data(d)));
            let rest = futures::stream::iter(head).chain(BodyStream::new(body));
            return Err(StreamBody::new(rest).boxed_unsync());
        }
        read.extend_from_slice(&data);
    }
}

/// The JSON-RPC error answering `request` (a POST's body) when it is an `initialize`
/// request whose params do not parse (see [`super::stdio::initialize_problem`]).
fn bad_initialize(request: &serde_json::Value) -> Option<String> {
    let why = super::stdio::initialize_problem(request)?;
    let id = super::stdio::usable_id(request)?;
    tracing::warn!(target: "toolwright::serve", "refused an initialize request: {why}");
    Some(super::stdio::error_response(&id, -32602, &why))
}

/// A response with status `status` and the JSON text `answer` as its body.
fn json_response(status: StatusCode, answer: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(answer)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

/// rmcp's `415` answer, or, when it is rmcp saying that `body` did not deserialize (not a
/// wrong `Content-Type`), `400 Bad Request` with a JSON-RPC error saying why.
async fn rejected_body(response: Response<Body>, body: &[u8]) -> Response<Body> {
    let (parts, text) = response.into_parts();
    let text = match text.collect().await {
        Ok(text) => text.to_bytes(),
        Err(never) => match never {},
    };
    if !text.starts_with(b"fail to deserialize request body") {
        return Response::from_parts(parts, Full::new(text).boxed());
    }
    // A batch: what stdio says of one (MCP has batches only on 2025-03-26) misleads a
    // client on that very version; over HTTP there are none at all.
    let (code, message) = if serde_json::from_slice::<serde_json::Value>(body)
        .is_ok_and(|value| value.is_array())
    {
        (
            -32600,
            "Invalid Request: a batch (a JSON array): this server takes batches only over stdio (from clients on protocol 2025-03-26); over HTTP, send one message per request".to_owned(),
        )
    } else {
        super::stdio::rejection(body)
    };
    tracing::warn!(target: "toolwright::serve", "refused a request body: {message}");
    let answer = super::stdio::error_response(&serde_json::Value::Null, code, &message);
    json_response(StatusCode::BAD_REQUEST, answer)
}

/// Closes the sessions idle for longer than `idle` until `shutdown`, looking a few times
/// per `idle` (at least once a minute).
async fn reap_idle_sessions(
    sessions: Arc<LocalSessionManager>,
    activity: Arc<SessionActivity>,
    streams: Arc<CallStreams>,
    idle: Duration,
    shutdown: CancellationToken,
    session_end: Option<SessionEnd>,
    session_active: Option<SessionActive>,
) {
    use rmcp::transport::streamable_http_server::session::SessionManager as _;
    let every = (idle / 4).clamp(Duration::from_millis(10), Duration::from_secs(60));
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
        let kept = streams.session_ids();
        let live: Vec<String> = sessions
            .sessions
            .read()
            .await
            .keys()
            .map(ToString::to_string)
            .collect();
        streams.forget_ended(kept, &live);
        for id in activity.idle(&live, idle, session_active.as_ref()) {
            tracing::info!(target: "toolwright::serve", session = %id, "closing a session idle for longer than {idle:?}");
            if let Some(end) = &session_end {
                end(&id);
            }
            let _ = sessions.close_session(&Arc::from(id.as_str())).await;
            streams.end_session(&id);
        }
    }
}

/// A bound Streamable HTTP server, not yet serving.
pub struct HttpServer {
    listener: TcpListener,
    local: SocketAddr,
    guard: Arc<RequestGuard>,
    shutdown: CancellationToken,
    idle: Duration,
    header_read_timeout: Duration,
    max_connections: usize,
    authentication_timeout: Duration,
    max_unauthenticated: usize,
    session_end: Option<SessionEnd>,
    session_active: Option<SessionActive>,
    request_active: Option<RequestActive>,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("local", &self.local)
            .field("idle", &self.idle)
            .finish_non_exhaustive()
    }
}

impl HttpServer {
    /// Binds `options.addr` (checking it is loopback unless allowed otherwise).
    pub async fn bind(options: &HttpOptions) -> Result<Self, HttpError> {
        if !options.addr.ip().is_loopback() && !options.allow_non_loopback {
            return Err(HttpError::NotLoopback(options.addr));
        }
        let listener = TcpListener::bind(options.addr)
            .await
            .map_err(|source| HttpError::Bind {
                addr: options.addr,
                source,
            })?;
        let local = listener.local_addr().map_err(|source| HttpError::Bind {
            addr: options.addr,
            source,
        })?;
        let mut guard = RequestGuard::new(local, &options.allowed_hosts)?;
        guard.token = options.token.clone().filter(|t| !t.is_empty());
        let guard = Arc::new(guard);
        Ok(Self {
            listener,
            local,
            guard,
            shutdown: CancellationToken::new(),
            idle: options.session_idle_timeout,
            header_read_timeout: options.header_read_timeout,
            max_connections: options.max_connections.max(1),
            authentication_timeout: options.authentication_timeout,
            max_unauthenticated: options.max_unauthenticated.max(1),
            session_end: None,
            session_active: None,
            request_active: None,
        })
    }

    /// Tells `end`, with the session's id, of each session that ends: a client's `DELETE`
    /// (before rmcp closes it) or the idle timeout. `toolwright serve` cancels the
    /// session's calls there and kills its background tasks (rmcp alone lets a closed
    /// session's calls run on for seconds).
    pub fn on_session_end(mut self, end: SessionEnd) -> Self {
        self.session_end = Some(end);
        self
    }

    /// Asks `active`, with a session's id, when the session was last busy beyond its HTTP
    /// requests (`toolwright serve` gives [`super::ToolServer::session_last_active`]): a
    /// session whose call still runs is not idle, also when the client closed the
    /// connection that carried the call (the call goes on, and its result can be fetched
    /// with `GET` and `Last-Event-ID`), and its idle time counts from the call's end.
    /// Without it only requests open count.
    pub fn with_session_activity(mut self, active: SessionActive) -> Self {
        self.session_active = Some(active);
        self
    }

    /// Asks `running`, with a session's id and a request id (as rmcp reads it), whether
    /// the handler still runs that request's call (`toolwright serve` gives
    /// [`super::ToolServer::session_request_running`]): a request reusing its id is refused
    /// as long as the call runs, also after its client closed the connection that carried
    /// it (its result can still be fetched with `GET` and `Last-Event-ID`). Without it a
    /// request's id is in use as long as its response is open.
    pub fn with_request_activity(mut self, running: RequestActive) -> Self {
        self.request_active = Some(running);
        self
    }

    /// The address bound (with the real port when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The endpoint's URL for a client on this machine: `http://127.0.0.1:PORT/mcp`
    /// (`[::1]` for an IPv6 address; the loopback address of the family for an unspecified
    /// one), with `?token=TOKEN` when a token is required.
    pub fn url(&self) -> String {
        let host = match self.local.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => "127.0.0.1".to_owned(),
            IpAddr::V6(ip) if ip.is_unspecified() => "[::1]".to_owned(),
            IpAddr::V4(ip) => ip.to_string(),
            IpAddr::V6(ip) => format!("[{ip}]"),
        };
        let query = self
            .guard
            .token
            .as_ref()
            .map(|t| format!("?token={t}"))
            .unwrap_or_default();
        format!("http://{host}:{}{MCP_PATH}{query}", self.local.port())
    }

    /// Cancelling this token stops the server: no new connections; the calls' streams
    /// still open carry their answers first (at most 3 s: a host cancels its calls first,
    /// as `toolwright serve` does with [`super::ToolServer::shut_down`]), then every stream
    /// and session is closed, and [`serve`](Self::serve) returns.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Serves until the [shutdown token](Self::shutdown_token) is cancelled. `factory` makes
    /// the handler of each new MCP session.
    pub async fn serve<S, F>(self, factory: F)
    where
        S: ServerHandler + Send + 'static,
        F: Fn() -> S + Send + Sync + 'static,
    {
        // rmcp's streams and sessions end after the calls' answers have gone out (see below),
        // not the moment the shutdown begins.
        let close_streams = CancellationToken::new();
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(self.guard.rmcp_host_values())
            .with_allowed_origins(RequestGuard::origin_values())
            .with_max_request_body_bytes(MAX_REQUEST_BODY_BYTES)
            .with_cancellation_token(close_streams.clone());
        // rmcp's idle timeout is replaced by ours (see `SessionActivity`).
        let mut sessions = LocalSessionManager::default();
        sessions.session_config.keep_alive = None;
        let sessions = Arc::new(sessions);
        let activity = Arc::new(SessionActivity::default());
        let streams = Arc::new(CallStreams::default());
        tokio::spawn(reap_idle_sessions(
            Arc::clone(&sessions),
            Arc::clone(&activity),
            Arc::clone(&streams),
            self.idle,
            self.shutdown.clone(),
            self.session_end.clone(),
            self.session_active.clone(),
        ));
        let inner =
            StreamableHttpService::new(move || Ok(factory()), Arc::clone(&sessions), config);
        let service = Guarded {
            guard: self.guard.clone(),
            inner,
            activity,
            sessions: Arc::clone(&sessions),
            session_end: self.session_end.clone(),
            request_active: self.request_active.clone(),
            streams: Arc::clone(&streams),
            admission: None,
        };
        // Connections are taken in at once: one that has not authenticated within
        // `authentication_timeout` is closed, and beyond `max_unauthenticated` of them the
        // oldest is. Authenticated ones take a slot each (a request waits for one when all
        // are taken), so that connections anyone can open never keep a token holder waiting.
        let slots = Arc::new(tokio::sync::Semaphore::new(self.max_connections));
        let unauthenticated = Arc::new(Unauthenticated::new(self.max_unauthenticated));
        let mut next_id: u64 = 0;
        loop {
            let stream = tokio::select! {
                () = self.shutdown.cancelled() => break,
                accepted = accept(&self.listener) => match accepted {
                    Ok(stream) => stream,
                    Err(e) => {
                        // Out of file descriptors and the like: wait a little and go on.
                        tracing::warn!(target: "toolwright::serve", "accept failed: {e}");
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        continue;
                    }
                },
            };
            next_id = next_id.wrapping_add(1);
            let id = next_id;
            let close = CancellationToken::new();
            unauthenticated.admit(id, close.clone());
            let admission = Arc::new(Admission {
                id,
                unauthenticated: Arc::clone(&unauthenticated),
                slots: Arc::clone(&slots),
                slot: tokio::sync::Mutex::new(None),
            });
            let service = Guarded {
                admission: Some(admission),
                ..service.clone()
            };
            let shutdown = self.shutdown.clone();
            let header_read_timeout = self.header_read_timeout;
            let authentication_timeout = self.authentication_timeout;
            let unauthenticated = Arc::clone(&unauthenticated);
            tokio::spawn(async move {
                // A connection that sends no request (at first, or between requests) for
                // `header_read_timeout` is closed.
                let connection = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(header_read_timeout)
                    .serve_connection(TokioIo::new(stream), service);
                tokio::pin!(connection);
                let deadline = tokio::time::sleep(authentication_timeout);
                tokio::pin!(deadline);
                let mut timed = false;
                loop {
                    tokio::select! {
                        result = connection.as_mut() => {
                            if let Err(e) = result {
                                tracing::debug!(target: "toolwright::serve", "connection ended: {e}");
                            }
                            break;
                        }
                        // Closed unauthenticated (too slow, or crowded out by newer ones):
                        // dropped at once.
                        () = close.cancelled() => break,
                        () = &mut deadline, if !timed => {
                            timed = true;
                            if unauthenticated.expire(id) {
                                tracing::debug!(target: "toolwright::serve", "closed a connection that sent no request with the token within {authentication_timeout:?}");
                                break;
                            }
                        }
                        () = shutdown.cancelled() => {
                            // The response in progress (a call's answer) is finished first.
                            connection.as_mut().graceful_shutdown();
                            let _ = connection.as_mut().await;
                            break;
                        }
                    }
                }
                unauthenticated.remove(id);
            });
        }
        // Stopping: the calls still running were cancelled by the host (their answers say
        // they were interrupted); those answers go out on their streams before rmcp's
        // streams and sessions are closed, and the connections get to send them.
        streams.drained(DRAIN_TIMEOUT).await;
        close_streams.cancel();
        let connections = u32::try_from(self.max_connections).unwrap_or(u32::MAX);
        let _ = tokio::time::timeout(Duration::from_secs(1), slots.acquire_many(connections)).await;
    }
}

/// Accepts the next connection on `listener`, with `TCP_NODELAY` set: hyper writes a
/// response in pieces (its head, a body's chunks, the last chunk), and with Nagle's algorithm
/// a piece after the first waits for the client's delayed ACK, about 40 ms on every response
/// after the first of a kept-alive connection. A connection whose option cannot be set is
/// served all the same.
async fn accept(listener: &TcpListener) -> std::io::Result<tokio::net::TcpStream> {
    let (stream, _) = listener.accept().await?;
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!(target: "toolwright::serve", "could not set TCP_NODELAY: {e}");
    }
    Ok(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The idle check asks whether a session's calls are busy without holding the lock
    /// every request of every session takes (a slow answer would hold them all up), and
    /// still counts the answer: a session whose call ran just now is not idle.
    #[test]
    fn idle_sessions_are_asked_about_without_the_request_lock() {
        let activity = Arc::new(SessionActivity::default());
        drop(activity.open("quiet"));
        drop(activity.open("busy"));
        std::thread::sleep(Duration::from_millis(20));
        let probe = Arc::clone(&activity);
        let locked_while_asked = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&locked_while_asked);
        let active: SessionActive = Arc::new(move |id: &str| {
            if probe.sessions.try_lock().is_err() {
                lock(&seen).push(id.to_owned());
            }
            (id == "busy").then(Instant::now)
        });
        let live = vec!["quiet".to_owned(), "busy".to_owned()];
        let idle = activity.idle(&live, Duration::from_millis(5), Some(&active));
        assert_eq!(idle, ["quiet"]);
        assert!(
            lock(&locked_while_asked).is_empty(),
            "asked about {:?} while holding the sessions' lock",
            lock(&locked_while_asked)
        );
    }

    /// An SSE event as rmcp writes it: `message` (JSON text) with id `N/S`.
    fn event(index: usize, stream: u64, message: &str) -> Bytes {
        Bytes::from(format!("data: {message}\nid: {index}/{stream}\n\n"))
    }

    /// What a session keeps of its calls' streams is bounded: ended streams nobody fetched
    /// beyond [`MAX_UNFETCHED_RESULTS`] are dropped oldest first, a stream keeps its last
    /// [`MAX_KEPT_NOTIFICATIONS`] notifications but every request and its answer, and a
    /// stream read to its end once is forgotten; what is dropped cannot be resumed, and says
    /// so.
    #[test]
    fn kept_call_streams_are_bounded_and_forgotten_once_fetched() {
        let streams = Arc::new(CallStreams::default());
        let answer = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        for stream in 0..40u64 {
            streams.open("s", stream, None);
            streams.record("s", stream, Some(0), event(0, stream, ""));
            streams.record("s", stream, Some(1), event(1, stream, answer));
            streams.end("s", stream);
        }
        let kept: Vec<u64> = {
            let sessions = streams.sessions();
            let mut kept: Vec<u64> = sessions["s"].streams.keys().copied().collect();
            kept.sort_unstable();
            kept
        };
        assert_eq!(kept, (8..40).collect::<Vec<u64>>());
        assert_eq!(
            streams.resume("s", "0/3", ()).err(),
            Some(NotResumable::Dropped)
        );
        assert!(streams.resume("s", "0/39", ()).is_ok());
        assert_eq!(
            streams.resume("s", "2/39", ()).err(),
            Some(NotResumable::NotSentYet)
        );
        assert_eq!(
            streams.resume("s", "oops", ()).err(),
            Some(NotResumable::NotAnEventId)
        );
        streams.fetched("s", 39);
        assert_eq!(
            streams.resume("s", "0/39", ()).err(),
            Some(NotResumable::NoStream)
        );

        // A long call's progress: the last notifications are kept, and its question.
        streams.open("s", 100, None);
        let progress = |n: usize| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":1,"progress":{n}}}}}"#
            )
        };
        let question = r#"{"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{}}"#;
        streams.record("s", 100, Some(0), event(0, 100, question));
        for n in 1..=100 {
            streams.record("s", 100, Some(n), event(n, 100, &progress(n)));
        }
        let sessions = streams.sessions();
        let events = &sessions["s"].streams[&100].events;
        assert_eq!(events.len(), 1 + MAX_KEPT_NOTIFICATIONS);
        assert_eq!(events[0].0, 0, "the question was dropped");
        assert_eq!(events[1].0, 100 - MAX_KEPT_NOTIFICATIONS + 1);
    }

    /// A `Last-Event-ID` of a result dropped because too many were kept unfetched is told
    /// so (it was told the stream was never given out or already delivered); one never
    /// given out or already fetched is not.
    #[test]
    fn a_dropped_result_is_named_as_dropped() {
        let streams = Arc::new(CallStreams::default());
        let answer = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        for stream in 0..(MAX_UNFETCHED_RESULTS as u64 + 1) {
            streams.open("s", stream, None);
            streams.record("s", stream, Some(0), event(0, stream, answer));
            streams.end("s", stream);
        }
        let why = |id: &str| match streams.resume("s", id, ()) {
            Ok(_) => panic!("{id} was resumed"),
            Err(e) => e.message(id),
        };
        let dropped = why("0/0");
        assert!(
            dropped.contains("dropped") && dropped.contains("too many"),
            "{dropped}"
        );
        streams.fetched("s", 1);
        for id in ["0/1", "0/500"] {
            let other = why(id);
            assert!(!other.contains("dropped"), "{id}: {other}");
        }
    }

    fn headers(pairs: &[(&'static str, &str)]) -> http::HeaderMap {
        let mut map = http::HeaderMap::new();
        for (name, value) in pairs {
            map.insert(
                *name,
                http::HeaderValue::from_str(value)
                    .unwrap_or_else(|_| http::HeaderValue::from_static("bad")),
            );
        }
        map
    }

    #[test]
    fn loopback_hosts_with_the_bound_port_pass_and_others_are_refused() {
        let guard = RequestGuard::new(std::net::SocketAddr::from(([127, 0, 0, 1], 8421)), &[])
            .map_err(|e| e.to_string());
        let Ok(guard) = guard else {
            panic!("{guard:?}")
        };
        for host in [
            "127.0.0.1:8421",
            "localhost:8421",
            "[::1]:8421",
            "LOCALHOST:8421",
        ] {
            assert_eq!(guard.check(&headers(&[("host", host)])), Ok(()), "{host}");
        }
        for host in ["evil.example:8421", "127.0.0.1:9999", "127.0.0.2:8421"] {
            let refused = guard.check(&headers(&[("host", host)]));
            assert!(
                refused
                    .as_ref()
                    .is_err_and(|(_, body)| body.contains("DNS-rebinding")),
                "{host}: {refused:?}"
            );
        }
        assert!(guard.check(&headers(&[])).is_err());
        // Bound to another loopback address: the URL it prints names that address.
        let Ok(other) = RequestGuard::new(std::net::SocketAddr::from(([127, 1, 2, 3], 8421)), &[])
        else {
            panic!("guard")
        };
        assert_eq!(other.check(&headers(&[("host", "127.1.2.3:8421")])), Ok(()));
        assert!(
            other
                .check(&headers(&[("host", "127.1.2.4:8421")]))
                .is_err()
        );
    }

    #[test]
    fn origins_must_be_loopback_when_present() {
        let Ok(guard) = RequestGuard::new(
            std::net::SocketAddr::from(([127, 0, 0, 1], 8421)),
            &["box.lan".to_owned()],
        ) else {
            panic!("guard")
        };
        let ok =
            |origin: &str| guard.check(&headers(&[("host", "127.0.0.1:8421"), ("origin", origin)]));
        assert_eq!(ok("http://localhost:6274"), Ok(()));
        assert_eq!(ok("https://127.0.0.1"), Ok(()));
        assert_eq!(ok("http://[::1]:3000"), Ok(()));
        for bad in [
            "http://evil.example",
            "null",
            "http://localhost.evil.example:8421",
            "file://",
            "http://localhost:8421.evil.com",
            "http://[::1].evil.com",
            "http://localhost@evil.com",
            "http://localhost/",
        ] {
            assert!(ok(bad).is_err(), "{bad}");
        }
        assert_eq!(guard.check(&headers(&[("host", "box.lan:8421")])), Ok(()));
        assert!(guard.check(&headers(&[("host", "box.lan:1")])).is_err());
    }

    /// Behind a proxy the Host may carry no port (`box.lan`, the scheme's default): it
    /// matches a name allowed without a port, and the loopback names; a name allowed with a
    /// port wants that port.
    #[test]
    fn a_host_without_a_port_matches_names_allowed_without_one() {
        let Ok(guard) = RequestGuard::new(
            std::net::SocketAddr::from(([127, 0, 0, 1], 8421)),
            &["box.lan".to_owned(), "other.lan:8443".to_owned()],
        ) else {
            panic!("guard")
        };
        for host in [
            "box.lan",
            "BOX.LAN",
            "box.lan:8421",
            "localhost",
            "127.0.0.1",
            "[::1]",
            "other.lan:8443",
        ] {
            assert_eq!(guard.check(&headers(&[("host", host)])), Ok(()), "{host}");
        }
        for host in [
            "other.lan",
            "box.lan:80",
            "evil.example",
            "box.lan.evil.example",
        ] {
            assert!(guard.check(&headers(&[("host", host)])).is_err(), "{host}");
        }
        // rmcp checks the Host again: it must accept what ours does.
        let rmcp = guard.rmcp_host_values();
        assert!(rmcp.contains(&"box.lan".to_owned()), "{rmcp:?}");
        assert!(rmcp.contains(&"other.lan:8443".to_owned()), "{rmcp:?}");
        // A port that is not a number, or user info, is a bad entry, not a port-less one.
        for bad in [
            "evil.com:abc",
            "evil.com:",
            "evil.com:99999",
            "user@box.lan",
            "*",
            "*.lan:8421",
        ] {
            assert!(
                RequestGuard::new(
                    std::net::SocketAddr::from(([127, 0, 0, 1], 8421)),
                    &[bad.to_owned()]
                )
                .is_err(),
                "{bad}"
            );
        }
        assert!(
            RequestGuard::new(
                std::net::SocketAddr::from(([127, 0, 0, 1], 8421)),
                &["[::2]:80".to_owned()]
            )
            .is_ok()
        );
    }

    /// A connection that sends nothing is closed after the header read timeout (it would
    /// otherwise hold a file descriptor for ever).
    #[tokio::test]
    async fn an_idle_connection_is_closed() {
        use tokio::io::AsyncReadExt as _;
        let options = HttpOptions {
            header_read_timeout: Duration::from_millis(200),
            ..HttpOptions::new(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
        };
        let Ok(server) = HttpServer::bind(&options).await else {
            panic!("bind")
        };
        let addr = server.local_addr();
        let shutdown = server.shutdown_token();
        let handler = crate::serve::ToolServer::new(
            tool_core::ToolUseContext::new(std::env::temp_dir()),
            Arc::new(tool_exec::AllowAll),
            Arc::new(tool_exec::NoHooks),
        );
        let serving = tokio::spawn(server.serve(move || handler.for_session()));
        let Ok(mut idle) = tokio::net::TcpStream::connect(addr).await else {
            panic!("connect")
        };
        let mut buf = [0u8; 64];
        let read = tokio::time::timeout(Duration::from_secs(20), idle.read(&mut buf)).await;
        shutdown.cancel();
        let _ = serving.await;
        // Closed: end of stream (or a reset), not a timeout of ours.
        assert!(
            matches!(read, Ok(Ok(0) | Err(_))),
            "the idle connection is still open: {read:?}"
        );
    }

    /// An accepted connection has `TCP_NODELAY` set: a response written in pieces (head,
    /// body, end of chunks) goes out at once, not after the client's delayed ACK (~40 ms on
    /// every response after the first of a kept-alive connection).
    #[tokio::test]
    async fn accepted_connections_do_not_wait_for_acks() {
        let Ok(listener) = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await else {
            panic!("bind")
        };
        let Ok(addr) = listener.local_addr() else {
            panic!("local address")
        };
        let (client, accepted) =
            tokio::join!(tokio::net::TcpStream::connect(addr), accept(&listener));
        let (Ok(_client), Ok(accepted)) = (client, accepted) else {
            panic!("connect or accept")
        };
        assert!(
            matches!(accepted.nodelay(), Ok(true)),
            "{:?}",
            accepted.nodelay()
        );
    }

    #[test]
    fn addresses_parse_as_the_help_says() {
        assert_eq!(parse_addr("8421").ok(), "127.0.0.1:8421".parse().ok());
        assert_eq!(parse_addr("localhost:0").ok(), "127.0.0.1:0".parse().ok());
        assert_eq!(parse_addr("[::1]:80").ok(), "[::1]:80".parse().ok());
        assert_eq!(parse_addr("0.0.0.0:1").ok(), "0.0.0.0:1".parse().ok());
        assert!(parse_addr("example.com:80").is_err());
    }
}
