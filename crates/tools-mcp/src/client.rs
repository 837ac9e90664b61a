//! One server's connection: connect (stdio child process or Streamable HTTP) on rmcp, detect
//! a dead connection, reconnect on next use with backoff, route progress, capture stderr.

use std::collections::{HashMap, VecDeque};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, Weak};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientCapabilities,
    ClientConfig, ClientRequest, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ErrorCode, Implementation, ListRootsResult,
    LoggingMessageNotificationParam, NumberOrString, ProgressNotificationParam, ProgressToken,
    ProtocolVersion, ReadResourceRequestParams, RequestId,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::common::client_side_sse::SseRetryPolicy;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ErrorData, Peer, RoleClient, ServiceError, ServiceExt};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tool_core::{ProgressSender, Tool, ToolError};

use crate::config::{ServerConfig, TransportConfig};
use crate::options::McpOptions;

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The newest bytes a stdio server wrote to stderr, bounded; read back with the values of
/// the server's configured `env` and `headers` redacted ([`configured_secrets`]).
#[derive(Debug)]
pub(crate) struct StderrLog {
    buf: Mutex<VecDeque<u8>>,
    capacity: usize,
    /// Whether bytes were dropped from the front (the first ones kept may be the end of a
    /// secret).
    cut: AtomicBool,
    /// What the text read back never shows ([`configured_secrets`]).
    secrets: Vec<String>,
    /// How many stderr pipes are still being read into the log (one per started process
    /// whose stderr has not reached its end).
    open_pipes: std::sync::atomic::AtomicUsize,
    /// Told when a pipe reaches its end.
    pipe_closed: tokio::sync::Notify,
}

impl StderrLog {
    fn new(capacity: usize, secrets: Vec<String>) -> Self {
        Self {
            buf: Mutex::new(VecDeque::new()),
            capacity: capacity.max(1),
            cut: AtomicBool::new(false),
            secrets,
            open_pipes: std::sync::atomic::AtomicUsize::new(0),
            pipe_closed: tokio::sync::Notify::new(),
        }
    }

    /// Reads `pipe` into the log until it ends, on a task of its own.
    fn read_from(self: &Arc<Self>, mut pipe: tokio::process::ChildStderr) {
        self.open_pipes.fetch_add(1, Ordering::SeqCst);
        let log = self.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                log.push(&buf[..n]);
            }
            log.open_pipes.fetch_sub(1, Ordering::SeqCst);
            log.pipe_closed.notify_waiters();
        });
    }

    /// Waits, at most `limit`, until every stderr pipe has been read to its end.
    async fn settled(&self, limit: Duration) {
        let all_read = async {
            loop {
                let closed = self.pipe_closed.notified();
                tokio::pin!(closed);
                // Registered before the check: a pipe that ends in between still wakes it.
                closed.as_mut().enable();
                if self.open_pipes.load(Ordering::SeqCst) == 0 {
                    return;
                }
                closed.await;
            }
        };
        let _ = tokio::time::timeout(limit, all_read).await;
    }

    fn push(&self, bytes: &[u8]) {
        let mut buf = lock(&self.buf);
        buf.extend(bytes);
        let excess = buf.len().saturating_sub(self.capacity);
        if excess > 0 {
            self.cut.store(true, Ordering::SeqCst);
        }
        buf.drain(..excess);
    }

    /// The log, each configured secret in it (and the end of one cut at the front, the start
    /// of one still being written at the end) replaced by [`REDACTED`].
    pub(crate) fn text(&self) -> String {
        let text = {
            let buf = lock(&self.buf);
            let (a, b) = buf.as_slices();
            let mut v = Vec::with_capacity(a.len() + b.len());
            v.extend_from_slice(a);
            v.extend_from_slice(b);
            String::from_utf8_lossy(&v).into_owned()
        };
        redact_log(&text, &self.secrets, self.cut.load(Ordering::SeqCst))
    }

    /// The last few lines, for error messages.
    pub(crate) fn tail(&self, max_chars: usize) -> String {
        let text = self.text();
        let text = text.trim_end();
        let count = text.chars().count();
        if count <= max_chars {
            text.to_owned()
        } else {
            text.chars().skip(count - max_chars).collect()
        }
    }
}

/// What stands for a configured value in a server's log and error texts.
pub(crate) const REDACTED: &str = "[redacted]";

/// A value under a plain name that reads as a setting (lower-case letters, digits, `-`, `.`,
/// `_`: `production`, `us-east-1`) is never shown only from this many characters: long
/// enough that a region or a mode is no secret.
const SETTING_MIN_CHARS: usize = 16;

/// Any other value under a plain name (but [`NOT_SECRET_NAMES`] and paths) of at least this
/// many characters is never shown (a password under a plain name, `DB=Sup3rS3cret!`, or a
/// connection URL with one in it); and a word of a value at least this long is one too (the
/// token of `Bearer <token>`).
const SECRET_WORD_MIN_CHARS: usize = 8;

/// Names whose values are settings, not secrets, whatever their length (compared ignoring
/// case): exact names, and suffixes after `_`.
const NOT_SECRET_NAMES: &[&str] = &[
    "PATH",
    "HOME",
    "PWD",
    "OLDPWD",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LC_ALL",
    "TZ",
    "TMPDIR",
    "TERM",
    "PYTHONPATH",
    "NODE_PATH",
    "RUST_LOG",
];
const NOT_SECRET_SUFFIXES: &[&str] = &[
    "_ENV", "_LEVEL", "_REGION", "_DIR", "_PATH", "_HOME", "_MODE", "_PORT",
];

/// A value of at least this many characters is never shown when its name says it is a
/// credential ([`CREDENTIAL_NAME_WORDS`]); nor is a piece of a secret this long at either
/// end of a log (cut at the front, still being written at the end).
const SHORT_SECRET_MIN_CHARS: usize = 4;

/// Words that mark an `env` variable or header as a credential (compared ignoring case):
/// `API_KEY`, `X-Api-Key`, `GITHUB_TOKEN`, `DB_PASSWORD`, `PGPASS`, `Authorization`, …
const CREDENTIAL_NAME_WORDS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASS",
    "PWD",
    "AUTH",
    "CRED",
    "COOKIE",
    "SESSION",
    "SIGNATURE",
    "PRIVATE",
];

/// Values no secret is (compared ignoring case), whatever the name.
const NO_SECRETS: &[&str] = &[
    "true", "false", "yes", "no", "on", "off", "null", "none", "enabled", "disabled",
];

/// The values of a server's configured `env` (stdio) or `headers` (HTTP) that its log and
/// error texts never show, longest first: a value of at least [`SECRET_WORD_MIN_CHARS`]
/// characters that is no path ([`SETTING_MIN_CHARS`] for one that reads as a setting), and one of at least [`SHORT_SECRET_MIN_CHARS`] whose name
/// holds one of [`CREDENTIAL_NAME_WORDS`]; never one of [`NOT_SECRET_NAMES`] (`HOME`,
/// `NODE_ENV`, `AWS_REGION`), a boolean-like word ([`NO_SECRETS`]) or a `${VAR}` left
/// unexpanded. Each whitespace-separated word of a value that is itself at least
/// [`SECRET_WORD_MIN_CHARS`] long (the token of `Bearer <token>`) is one too, and so is each as
/// JSON writes it inside a string (a log notification's data is quoted as JSON).
fn configured_secrets(transport: &TransportConfig) -> Vec<String> {
    let pairs = match transport {
        TransportConfig::Stdio { env, .. } => env,
        TransportConfig::Http { headers, .. }
        | TransportConfig::Sse { headers, .. }
        | TransportConfig::Ws { headers, .. } => headers,
    };
    let mut secrets: Vec<String> = Vec::new();
    for (name, value) in pairs {
        let name = name.to_ascii_uppercase();
        let credential = CREDENTIAL_NAME_WORDS.iter().any(|w| name.contains(w));
        // An exact name first (`PWD` is the working directory, not a password), then a
        // setting's suffix unless the name says credential (`GITHUB_TOKEN_ENV`).
        if NOT_SECRET_NAMES.contains(&name.as_str())
            || (!credential && NOT_SECRET_SUFFIXES.iter().any(|s| name.ends_with(s)))
        {
            continue;
        }
        // A path under a plain name (`CONFIG=/etc/srv/conf.yml`) is where a file is.
        let path = |v: &str| {
            let v = v.trim();
            v.starts_with('/') || v.starts_with("~/") || v.starts_with("./") || v.starts_with("../")
        };
        if !credential && path(value) {
            continue;
        }
        // A plain word of lower-case letters, digits, `-`, `.` and `_` (`production`,
        // `us-east-1`) reads as a setting under a plain name; anything else (`Sup3rS3cret!`)
        // as a possible password.
        let setting_like = |v: &str| {
            v.chars().all(|c| {
                c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '.' | '_')
            })
        };
        let min = if credential {
            SHORT_SECRET_MIN_CHARS
        } else if setting_like(value.trim()) {
            SETTING_MIN_CHARS
        } else {
            SECRET_WORD_MIN_CHARS
        };
        let words = value.split_whitespace().filter(|w| {
            *w != value && w.chars().count() >= SECRET_WORD_MIN_CHARS && (credential || !path(w))
        });
        let candidates = std::iter::once(value.as_str())
            .filter(|v| v.trim().chars().count() >= min)
            .chain(words);
        for candidate in candidates {
            let candidate = candidate.trim();
            if NO_SECRETS.iter().any(|n| n.eq_ignore_ascii_case(candidate))
                || only_variable_references(candidate)
                // Masking it would mask the mask (and scrubbing would not settle).
                || REDACTED.contains(candidate)
            {
                continue;
            }
            let quoted = serde_json::Value::from(candidate).to_string();
            let in_json = &quoted[1..quoted.len() - 1];
            for form in [candidate, in_json] {
                if !secrets.iter().any(|s| s == form) {
                    secrets.push(form.to_owned());
                }
            }
        }
    }
    // Longest first: a value that holds another is hidden whole.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    secrets
}

/// `text` with each of `secrets` (longest first) replaced by [`REDACTED`].
fn replace_secrets(text: &str, secrets: &[String]) -> String {
    let mut text = text.to_owned();
    for secret in secrets {
        if text.contains(secret.as_str()) {
            text = text.replace(secret.as_str(), REDACTED);
        }
    }
    text
}

/// A log's `text` with each of `secrets` replaced by [`REDACTED`] ([`replace_secrets`]);
/// also a piece of at least [`SHORT_SECRET_MIN_CHARS`] characters of one that ends the text
/// (a secret still being written), and, when `cut_front` (the log's oldest bytes were
/// dropped), one that starts it (the end of a secret whose start was dropped).
fn redact_log(text: &str, secrets: &[String], cut_front: bool) -> String {
    if secrets.is_empty() {
        return text.to_owned();
    }
    let mut text = replace_secrets(text, secrets);
    if cut_front {
        // A cut inside a character reads as U+FFFD.
        let start = text.len() - text.trim_start_matches('\u{FFFD}').len();
        let found = secrets.iter().find_map(|secret| {
            secret
                .char_indices()
                .skip(1)
                .map(|(at, _)| &secret[at..])
                .take_while(|end| end.chars().count() >= SHORT_SECRET_MIN_CHARS)
                .find(|end| text[start..].starts_with(end))
                .map(str::len)
        });
        if let Some(len) = found {
            text.replace_range(..start + len, REDACTED);
        }
    }
    let found = secrets.iter().find_map(|secret| {
        let mut ends: Vec<usize> = secret.char_indices().map(|(at, _)| at).skip(1).collect();
        ends.reverse();
        ends.into_iter()
            .map(|at| &secret[..at])
            .take_while(|start| start.chars().count() >= SHORT_SECRET_MIN_CHARS)
            .find(|start| text.ends_with(start))
            .map(str::len)
    });
    if let Some(len) = found {
        let at = text.len() - len;
        text.replace_range(at.., REDACTED);
    }
    text
}

type ProgressRoutes = Arc<Mutex<HashMap<String, ProgressRoute>>>;

#[derive(Clone)]
struct ProgressRoute {
    sender: ProgressSender,
    tool: String,
    /// Told of every notification of the call: it is not idle.
    activity: Arc<tokio::sync::Notify>,
}

/// The rmcp client handler of one connection. Progress notifications never reach it: the
/// connection's transport ([`ProgressFirst`]) routes them as they are read.
#[derive(Clone)]
pub(crate) struct Handler {
    server: String,
    info: ClientConfig,
    roots: Value,
    conn: Weak<ServerConn>,
    opts: Arc<McpOptions>,
    stderr: Arc<StderrLog>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        serde_json::from_value(self.roots.clone())
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let decline = || ElicitResult::new(rmcp::model::ElicitationAction::Decline);
        let Some(handler) = &self.opts.elicitation else {
            return Ok(decline());
        };
        let request = serde_json::to_value(&request).unwrap_or(Value::Null);
        // The user may take their time: the server's calls wait for them, not idle.
        let _asking = AskingHost::new(&self.conn);
        let answer = handler.elicit(&self.server, request).await;
        Ok(serde_json::from_value(answer).unwrap_or_else(|_| decline()))
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let Some(handler) = &self.opts.sampling else {
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                "sampling is not supported by this client",
                None,
            ));
        };
        let request = serde_json::to_value(&params).unwrap_or(Value::Null);
        let _asking = AskingHost::new(&self.conn);
        let answer = handler
            .create_message(&self.server, request)
            .await
            .map_err(|e| ErrorData::new(ErrorCode::INVALID_REQUEST, e, None))?;
        serde_json::from_value(answer).map_err(|e| {
            ErrorData::internal_error(format!("invalid sampling result from host: {e}"), None)
        })
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let line = format!(
            "[notifications/message {:?}] {}\n",
            params.level,
            serde_json::to_string(&params.data).unwrap_or_default()
        );
        self.stderr.push(line.as_bytes());
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(conn) = self.conn.upgrade() {
            conn.relist();
        }
    }
}

fn token_key(token: &ProgressToken) -> String {
    match &token.0 {
        NumberOrString::Number(n) => n.to_string(),
        NumberOrString::String(s) => s.to_string(),
    }
}

/// The `_meta` key that names a request's progress route ([`ServerConn::open_route`]) on
/// its way to the transport: [`ProgressFirst`] takes it out and sends the route's key as the
/// request's `progressToken` (in place of rmcp's own), so the route exists before the server
/// can report progress.
const ROUTE_META_KEY: &str = "toolwright/progressRoute";

/// Where progress route keys come from (unique in the process: `tw-1`, `tw-2`, …; rmcp's
/// own tokens, on the requests without a route, are numbers and never meet them).
static ROUTE_SEQ: AtomicU64 = AtomicU64::new(0);

/// A connection's transport, with its progress notifications taken off as they are read.
///
/// rmcp hands each notification to the handler in a task of its own while it hands a
/// response to its caller at once, so a progress report the server sent just before its
/// result could be routed after the call had ended and its route was gone (the last report
/// of a tool, `4/4` before the result, was lost), and reports sent together could be routed
/// out of order. Here each is routed (to the call's [`ProgressSender`], which must not
/// block) as it is read, in the order the server sent it, before anything read after it
/// reaches rmcp: every report a server sent before its result is out before the result.
/// Outgoing requests with a route ([`ROUTE_META_KEY`]) carry its key as their token.
struct ProgressFirst<T> {
    inner: T,
    server: String,
    routes: ProgressRoutes,
}

impl<T> ProgressFirst<T> {
    fn new(inner: T, server: &str, routes: &ProgressRoutes) -> Self {
        Self {
            inner,
            server: server.to_owned(),
            routes: routes.clone(),
        }
    }

    /// Hands `params` to the route of its token, if any (a report for no call in progress
    /// is dropped, as it always was).
    fn route(&self, params: &ProgressNotificationParam) {
        let key = token_key(&params.progress_token);
        let route = lock(&self.routes).get(&key).cloned();
        if let Some(route) = route {
            route.activity.notify_one();
            route.sender.send(json!({
                "type": "mcp_progress",
                "server": self.server,
                "tool": route.tool,
                "progress": params.progress,
                "total": params.total,
                "message": params.message,
            }));
        }
    }
}

impl<T> rmcp::transport::Transport<RoleClient> for ProgressFirst<T>
where
    T: rmcp::transport::Transport<RoleClient>,
{
    type Error = T::Error;

    fn name() -> std::borrow::Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        mut item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        use rmcp::model::GetMeta as _;
        if let rmcp::model::JsonRpcMessage::Request(request) = &mut item {
            let meta = request.request.get_meta_mut();
            if let Some(Value::String(key)) = meta.remove(ROUTE_META_KEY) {
                meta.set_progress_token(ProgressToken(NumberOrString::String(key.into())));
            }
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<rmcp::service::RxJsonRpcMessage<RoleClient>> {
        loop {
            let message = self.inner.receive().await?;
            if let rmcp::model::JsonRpcMessage::Notification(notification) = &message
                && let rmcp::model::ServerNotification::ProgressNotification(progress) =
                    &notification.notification
            {
                self.route(&progress.params);
                continue;
            }
            return Some(message);
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// A live connection.
pub(crate) struct Live {
    peer: Peer<RoleClient>,
    dead: AtomicBool,
    /// Set once its tools are listed. Until then the connection is in the slot (for a
    /// `tools/list_changed` to find) but not handed to calls: the connecting future may still
    /// be dropped and take it down.
    listed: AtomicBool,
    service: Mutex<Option<RunningService<RoleClient, Handler>>>,
    pid: Option<u32>,
    /// The stdio server's process (killed when the connection dies or closes).
    child: SharedChild,
}

impl Live {
    fn mark_dead(&self) {
        self.dead.store(true, Ordering::SeqCst);
        // A connection we no longer trust has no use for its process.
        kill_child(&self.child);
    }

    /// Whether the server declared the `resources` capability when this connection began.
    fn declares_resources(&self) -> bool {
        self.peer
            .peer_info()
            .is_some_and(|info| info.capabilities.resources.is_some())
    }

    fn is_dead(&self) -> bool {
        self.dead.load(Ordering::SeqCst)
            || self.peer.is_transport_closed()
            || lock(&self.service).as_ref().is_none_or(|s| s.is_closed())
    }

    async fn close(&self) {
        let service = lock(&self.service).take();
        if let Some(mut service) = service {
            let _ = service.close_with_timeout(Duration::from_secs(5)).await;
        }
        // Its stdin is closed now: a server gets a moment to exit on its own, then SIGTERM
        // and another moment (MCP's stdio shutdown: one that cleans up on SIGTERM gets
        // to), then it is killed.
        let child = lock(&self.child.process).take();
        if let Some(mut child) = child {
            let pid = child.id();
            // What it started and left behind goes too, when this ends or is dropped
            // half-way (declared after `child`, so it runs before the handle is dropped:
            // the id is the group's name until the server is reaped, and reaped a moment
            // ago it cannot have been reused yet).
            let _group = GroupKiller(pid);
            if tokio::time::timeout(Duration::from_secs(3), child.wait())
                .await
                .is_err()
            {
                if let Some(pid) = pid {
                    tool_core::process::terminate_process_group(pid);
                }
                if tokio::time::timeout(Duration::from_secs(2), child.wait())
                    .await
                    .is_err()
                {
                    let _ = child.kill().await;
                }
            }
        }
    }

    /// Ends the connection within `grace`, for a host that is being stopped (a signal):
    /// a stdio server is sent SIGTERM to its process group and its stdin closed at once
    /// (MCP's stdio shutdown, shortened: one that cleans up on SIGTERM, such as a server
    /// stopping the commands it started in process groups of their own, gets to), then
    /// killed with what is left of its group once `grace` is over; every process of the
    /// group gets the grace, not only the one started (a launcher may exit at once while
    /// its server cleans up). An HTTP connection gets the same `grace` to close.
    async fn terminate(&self, grace: Duration) {
        let deadline = tokio::time::Instant::now() + grace;
        let child = lock(&self.child.process).take();
        let service = lock(&self.service).take();
        let Some(mut child) = child else {
            if let Some(mut service) = service {
                let _ = service.close_with_timeout(grace).await;
            }
            return;
        };
        let pid = child.id();
        // As in `close`: declared after `child`, so that the group is killed before the
        // handle goes (a server not yet reaped still names its group).
        let _group = GroupKiller(pid);
        if let Some(pid) = pid {
            tool_core::process::terminate_process_group(pid);
        }
        // Dropped, the service's task ends and its stdin closes.
        drop(service);
        // Until the whole group has ended: a launcher (`npx`, a shell script) may exit at
        // once while the server it started still cleans up.
        let ended = async {
            let _ = child.wait().await;
            if let Some(pid) = pid {
                while tokio::task::spawn_blocking(move || tool_core::process::group_running(pid))
                    .await
                    .unwrap_or(false)
                {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        };
        if tokio::time::timeout_at(deadline, ended).await.is_err() {
            let _ = child.kill().await;
        }
    }
}

/// The largest message (one line of JSON-RPC) a stdio server may send: 64 MiB, as sent and
/// as handed on, mended ([`LineMender`]). A larger one closes the connection with a clear
/// error instead of being dropped silently (which left the call waiting for its timeout).
pub(crate) const MAX_STDIO_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// A stdio server's process, shared by the parts of its connection.
#[derive(Default)]
struct ChildSlot {
    process: Mutex<Option<tokio::process::Child>>,
    /// Set when we killed the process while it was still running (it closed its stdout but
    /// went on, it broke the protocol, the connection was given up): a signal in its exit
    /// status is then ours, no news about the server.
    killed_running: AtomicBool,
    /// Fired when the server exited with a failure: its stdout then ends even while a
    /// helper it started in a session of its own (out of its group's reach) still holds it.
    failed: tokio_util::sync::CancellationToken,
    /// Why we closed the connection ourselves (the server broke the protocol), for the
    /// error of a request that was waiting on it.
    closed_because: Mutex<Option<String>>,
    /// The server's stdout ended (or its process failed): it went away on its own.
    output_ended: AtomicBool,
    /// We closed the server's stdin while its stdout was still open: an exit that follows
    /// (a server ends at the end of its input) is ours, no news about the server.
    input_closed_first: AtomicBool,
    /// A write to the server's stdin failed (`EPIPE`: it closed its input, or ended): the
    /// input was not closed by us, and an exit that follows is the server's own.
    input_broken: AtomicBool,
}

type SharedChild = Arc<ChildSlot>;

/// Kills the server and everything it started: it leads its own process group, and a
/// launcher's child (`npx` starting `node`, `uvx` starting Python) that ignores the closed
/// stdin would outlive it otherwise.
fn kill_child(child: &SharedChild) {
    if let Some(process) = lock(&child.process).as_mut() {
        // Already exited (reaped): its id is gone and with it the group's name. The process
        // is reaped when the connection closes (or by tokio when the handle is dropped).
        if let Some(pid) = process.id() {
            if !ending_by_itself(pid) {
                child.killed_running.store(true, Ordering::SeqCst);
            }
            tool_core::process::kill_process_group(pid);
        }
        let _ = process.start_kill();
    }
}

/// Watches a stdio server's process for an exit that is a failure (a non-zero status, a
/// signal): its process group is then killed, so that a helper it started that still holds
/// its stdout (`sleep 300 &` in a wrapper script) cannot keep the connection open: the
/// stream ends, and a call in flight fails at once, with how the server ended, instead of
/// waiting for its timeout. An exit with status 0 leaves the connection to its pipes: a
/// launcher may have handed them to the real server. The process is never reaped here (its
/// status is read from `/proc` while it is a zombie): reaped, its id would be gone, and with
/// it the name of the group [`kill_child`] and the close must still kill. Without `/proc`,
/// nothing is watched. Ends with the connection.
fn watch_for_a_failed_exit(child: &SharedChild) {
    /// How often the process is looked at: what a failed call may wait beyond its end.
    const EVERY: Duration = Duration::from_millis(100);
    /// `exit_code`, the 52nd field of `/proc/PID/stat` (since Linux 3.5), in
    /// [`tool_core::process::proc_stat`]'s fields (which start at the 3rd).
    const EXIT_CODE: usize = 52 - 3;
    let child = Arc::downgrade(child);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(EVERY).await;
            let Some(child) = child.upgrade() else {
                return;
            };
            let slot = lock(&child.process);
            // Gone, or reaped by someone else: nothing left to watch.
            let Some(pid) = slot.as_ref().and_then(tokio::process::Child::id) else {
                return;
            };
            let Some(fields) = tool_core::process::proc_stat(pid) else {
                return;
            };
            if fields.first().map(String::as_str) != Some("Z") {
                continue;
            }
            // A wait status: 0 is an exit with status 0, anything else a failure.
            let status = fields.get(EXIT_CODE).and_then(|f| f.parse::<i64>().ok());
            if status.is_some_and(|s| s != 0) {
                tool_core::process::kill_process_group(pid);
                child.failed.cancel();
            }
            return;
        }
    });
}

/// Whether process `pid` has already exited or is exiting (a zombie, or `PF_EXITING` in its
/// flags), so that a signal sent now does not change how it ended. `false` when that cannot
/// be read (no `/proc`): the signal then counts as ours.
fn ending_by_itself(pid: u32) -> bool {
    const PF_EXITING: u64 = 0x4;
    let Some(fields) = tool_core::process::proc_stat(pid) else {
        return false;
    };
    matches!(fields.first().map(String::as_str), Some("Z" | "X" | "x"))
        || fields
            .get(6)
            .and_then(|f| f.parse::<u64>().ok())
            .is_some_and(|flags| flags & PF_EXITING != 0)
}

/// How a stdio server's process ended, once it has (waiting up to `wait` for it):
/// `the server exited with status 3`, `the server was killed by signal 9 (SIGKILL)`. `None`
/// while it runs, for an HTTP server, when the signal was ours, or when it ended after we
/// closed its input (its stdout still open: it did not go away on its own).
async fn exit_note(child: &SharedChild, wait: Duration) -> Option<String> {
    let deadline = tokio::time::Instant::now() + wait;
    let status = loop {
        {
            let mut slot = lock(&child.process);
            let process = slot.as_mut()?;
            let pid = process.id();
            match process.try_wait() {
                Ok(Some(status)) => {
                    // Reaped just now: what it started goes too, while its id is still the
                    // group's name (it cannot have been reused yet).
                    if let Some(pid) = pid {
                        tool_core::process::kill_process_group(pid);
                    }
                    break status;
                }
                Ok(None) => {}
                Err(_) => return None,
            }
        }
        if tokio::time::Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    // It ended because we closed its input (a failed handshake drops the connection): the
    // end is ours, whatever its status.
    if child.input_closed_first.load(Ordering::SeqCst) {
        return None;
    }
    if let Some(code) = status.code() {
        return Some(format!("the server exited with status {code}"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal()
            && !child.killed_running.load(Ordering::SeqCst)
        {
            let name = tool_core::process::signal_name(signal)
                .map_or_else(String::new, |name| format!(" ({name})"));
            return Some(format!("the server was killed by signal {signal}{name}"));
        }
    }
    None
}

/// Kills process group `.0` when dropped.
struct GroupKiller(Option<u32>);

impl Drop for GroupKiller {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            tool_core::process::kill_process_group(pid);
        }
    }
}

/// Kills a stdio server being started, with its whole process group, unless disarmed: a
/// start that fails, or whose future is dropped (a cancelled call that was reconnecting),
/// leaves nothing running. (`kill_on_drop` alone would reach the server's own process only,
/// and a launcher's child, `npx`'s `node`, would live on.)
struct StartGuard {
    child: SharedChild,
    armed: bool,
}

impl Drop for StartGuard {
    fn drop(&mut self) {
        if self.armed {
            kill_child(&self.child);
        }
    }
}

/// Undoes a connection stored before its tools are listed when the listing does not
/// complete because its future was dropped (a cancelled call that was reconnecting): the
/// connection is taken out and killed, and the next use starts afresh, instead of finding it
/// connected with its tools never listed.
struct ListingGuard<'a> {
    conn: &'a ServerConn,
    live: Arc<Live>,
    armed: bool,
}

impl Drop for ListingGuard<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        {
            let mut slot = lock(&self.conn.live);
            if slot.as_ref().is_some_and(|l| Arc::ptr_eq(l, &self.live)) {
                *slot = None;
            }
        }
        self.live.mark_dead();
        *lock(&self.conn.state) = ServerState::Failed(
            "the connection was abandoned before its tools were listed (what was connecting \
             it stopped waiting, as a cancelled call does); it is reconnected on the next use"
                .into(),
        );
    }
}

/// The `${...}` references in `text`, in order, each once (`${VAR}`, `${VAR%suffix}`).
fn variable_references(text: &str) -> Vec<&str> {
    let mut found: Vec<&str> = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        let reference = &rest[start..=start + len];
        if !found.contains(&reference) {
            found.push(reference);
        }
        rest = &rest[start + len + 1..];
    }
    found
}

/// Whether `text` is nothing but `${...}` references: the configuration's own words, with
/// no credential in them to hide.
fn only_variable_references(text: &str) -> bool {
    let mut rest = text.to_owned();
    for reference in variable_references(text) {
        rest = rest.replace(reference, "");
    }
    !text.is_empty() && rest.is_empty()
}

/// Why a server URL still holding `${` (a variable that was not set, which loads with a
/// warning as in Claude Code) is not connected to, naming the variables: `its url uses
/// ${U}, which is not set; it is not a URL to connect to`.
fn unexpanded_url(url: &str) -> String {
    let references = variable_references(url);
    let (unset, others): (Vec<&str>, Vec<&str>) = references.into_iter().partition(|r| {
        let name = &r[2..r.len() - 1];
        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    let listed = |items: &[&str]| match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    };
    let mut why = Vec::new();
    match unset.len() {
        0 => {}
        1 => why.push(format!("uses {}, which is not set", listed(&unset))),
        _ => why.push(format!("uses {}, which are not set", listed(&unset))),
    }
    if !others.is_empty() {
        why.push(format!(
            "holds {}, which is not expanded (only ${{VAR}} and ${{VAR:-default}} are)",
            listed(&others)
        ));
    }
    if why.is_empty() {
        why.push("holds `${` without a closing `}`".to_owned());
    }
    format!(
        "its url {}; it is not a URL to connect to",
        why.join(", and ")
    )
}

/// The user info and the query of a server URL as its configured text has them (a parsed URL
/// writes them percent-encoded, which may differ), if it has them.
fn raw_credentials(url: &str) -> (Option<&str>, Option<&str>) {
    let Some((_, rest)) = url.split_once("://") else {
        return (None, None);
    };
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let info = authority.rsplit_once('@').map(|(info, _)| info);
    let query = rest
        .split_once('?')
        .map(|(_, query)| query.split_once('#').map_or(query, |(query, _)| query));
    (info, query)
}

/// Whether `c` can be part of a word or a query value, so that a needle next to it is not
/// a whole occurrence.
fn continues_word(c: char) -> bool {
    // Not `&`: it ends a query's value (`?k=abc&x=1` holds the query `k=abc` whole).
    c.is_alphanumeric() || "-._~%+=".contains(c)
}

/// `text` with each whole occurrence of `needle` replaced by `with`: one that neither starts
/// nor ends inside a longer word (`?e` is not in `?redacted`, nor `o@` in `who@`).
fn replace_whole(text: &str, needle: &str, with: &str) -> String {
    if needle.is_empty() {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut from = 0;
    while let Some(found) = text[from..].find(needle) {
        let at = from + found;
        let end = at + needle.len();
        let starts_whole =
            !needle.starts_with(continues_word) || !text[..at].ends_with(continues_word);
        let ends_whole =
            !needle.ends_with(continues_word) || !text[end..].starts_with(continues_word);
        if starts_whole && ends_whole {
            out.push_str(&text[copied..at]);
            out.push_str(with);
            copied = end;
            from = end;
        } else {
            from = at + needle.chars().next().map_or(1, char::len_utf8);
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// Lines up to this size are checked for protocol violations (larger ones are only bounded).
const CHECKED_LINE_BYTES: usize = 1024 * 1024;

/// The requests sent to one stdio server and not answered yet, to tell a response to one of
/// them from a response to nothing.
#[derive(Debug, Default)]
struct Outstanding {
    /// Their ids, as JSON text.
    ids: std::collections::HashSet<String>,
    /// Requests too large to read their id from (over [`CHECKED_LINE_BYTES`]): as many
    /// responses with an unknown id are accepted.
    unread: usize,
    /// The ids answered lately (at most [`ANSWERED_KEPT`]), to tell a response sent twice
    /// (skipped) from one to an id never sent (a broken server: the connection fails).
    answered: std::collections::VecDeque<String>,
    /// The ids of requests the client cancelled (`notifications/cancelled`) lately (at most
    /// [`ANSWERED_KEPT`]): no longer waiting (the server need not answer them), and an answer
    /// that comes all the same is left out, not taken for one to a request never sent.
    cancelled: std::collections::VecDeque<String>,
}

impl Outstanding {
    /// Records that request `key` was answered.
    fn record_answer(&mut self, key: String) {
        if self.answered.len() == ANSWERED_KEPT {
            self.answered.pop_front();
        }
        self.answered.push_back(key);
    }

    /// Records that the client cancelled request `key`: it is waiting no more.
    fn record_cancel(&mut self, key: String) {
        if self.ids.remove(&key) {
            if self.cancelled.len() == ANSWERED_KEPT {
                self.cancelled.pop_front();
            }
            self.cancelled.push_back(key);
        }
    }
}

/// How many answered ids [`Outstanding::answered`] keeps.
const ANSWERED_KEPT: usize = 1024;

type SentIds = Arc<Mutex<Outstanding>>;

/// Complete lines out of a byte stream, keeping only lines up to [`CHECKED_LINE_BYTES`].
#[derive(Default, Clone)]
struct LineSplitter {
    buf: Vec<u8>,
    too_long: bool,
}

impl LineSplitter {
    /// Feeds bytes; calls `each` with every complete line short enough to check, and with
    /// `None` for a complete line that was too long.
    fn feed(
        &mut self,
        mut bytes: &[u8],
        mut each: impl FnMut(Option<&[u8]>) -> Result<(), String>,
    ) -> Result<(), String> {
        while !bytes.is_empty() {
            let (segment, newline) = match bytes.iter().position(|&b| b == b'\n') {
                Some(pos) => (&bytes[..pos], true),
                None => (bytes, false),
            };
            if !self.too_long {
                if self.buf.len() + segment.len() > CHECKED_LINE_BYTES {
                    self.too_long = true;
                    self.buf = Vec::new();
                } else {
                    self.buf.extend_from_slice(segment);
                }
            }
            if newline {
                let result = if self.too_long {
                    each(None)
                } else {
                    each(Some(&self.buf))
                };
                self.buf.clear();
                self.too_long = false;
                result?;
                bytes = &bytes[segment.len() + 1..];
            } else {
                bytes = &[];
            }
        }
        Ok(())
    }
}

/// rmcp serves an expired cached answer (a server's `ttlMs`) when the request that would
/// renew it fails, the server's own "not found" included: a resource read would return old
/// content as current. Off: a failure is reported.
async fn no_stale_answers(peer: &rmcp::Peer<RoleClient>) {
    peer.set_response_cache_config(
        rmcp::ClientCacheConfig::default().with_serve_stale_on_error(false),
    )
    .await;
}

/// The `roots/list` answer: the project directory, then the session's additional working
/// directories (each once), named by their last component.
fn roots(opts: &McpOptions) -> Value {
    let mut seen = std::collections::HashSet::new();
    let roots: Vec<Value> = std::iter::once(&opts.project_dir)
        .chain(&opts.additional_directories)
        .filter(|dir| seen.insert(dir.as_path()))
        .map(|dir| {
            let name = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| dir.display().to_string());
            json!({"uri": file_uri(dir), "name": name})
        })
        .collect();
    json!({ "roots": roots })
}

/// `path` as a file URL, as Node's `pathToFileURL` makes it: `#`, `?`, `%` and spaces
/// percent-encoded (`file:///home/u/app#2` names `/home/u/app` to a server).
fn file_uri(path: &std::path::Path) -> String {
    reqwest::Url::from_file_path(path)
        .map_or_else(|()| format!("file://{}", path.display()), String::from)
}

/// The id of a JSON-RPC message as JSON text, if it has a non-null one.
fn id_key(message: &Value) -> Option<String> {
    message
        .get("id")
        .filter(|id| !id.is_null())
        .map(ToString::to_string)
}

/// A JSON-RPC response (the `"jsonrpc"` member is required, as the TypeScript SDK's schema
/// requires it: a log line with an `id` and an `error` is no response; one with another
/// version is a malformed response).
fn is_response(message: &Value) -> bool {
    message.get("jsonrpc").is_some()
        && message.get("method").is_none()
        && id_key(message).is_some()
        && (message.get("result").is_some() || message.get("error").is_some())
}

/// What becomes of one line from a stdio server before rmcp reads it.
#[derive(Debug, PartialEq)]
enum LineVerdict {
    /// Handed on as it is.
    Pass,
    /// Handed on with its id as the request's own (a server that answers request 2 with
    /// `"id": "2"`, which the TypeScript SDK matches as `Number(id)`).
    Rewrite(Vec<u8>),
    /// Left out, with what the server log says about it (`None`: nothing).
    Skip(Option<String>),
    /// A response rmcp would drop or fail on: the connection fails at once, with why.
    Fail(String),
}

/// What to do with a line from the server. Lines that are not JSON (log output on stdout) are
/// handed on, as every MCP SDK tolerates them; JSON that is no JSON-RPC message (a structured
/// log line, `{"level": "error", "id": …, "error": …}`) is left out, as the TypeScript SDK
/// skips what fails its schema, and so is a second response to a request already answered,
/// as that SDK reports and ignores it. A message with a lone surrogate escape (`"\ud83d"`,
/// a string a Node server cut mid-emoji) is read as `JSON.parse` reads it and handed on
/// mended. Other broken JSON that holds a `"jsonrpc"` member is left out, said in the
/// server log, when it is a notification ([`is_broken_notification`]), which nothing waits
/// for; otherwise it may be the answer a call waits for, or a request the server waits on
/// while the call waits for it, and, like a malformed response, one to an id never sent or
/// a batch, it fails the connection instead of leaving the call to wait for its timeout.
fn examine_line(line: &[u8], sent: &SentIds) -> LineVerdict {
    let line = line.trim_ascii();
    let line = line
        .strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(line)
        .trim_ascii_start();
    if !line.starts_with(b"{") && !line.starts_with(b"[") {
        return LineVerdict::Pass;
    }
    let (value, mended) = match serde_json::from_slice(line) {
        Ok(value) => (value, None),
        // Broken JSON that opens as an object and holds a `"jsonrpc"` member at its top
        // level was meant as a JSON-RPC message, wherever the member is among the others
        // (the TypeScript SDK writes it after `result`); one deeper in is a log line's
        // (`{"level": "debug", "sent": {"jsonrpc": ...`). A line that opens with `[` and
        // is not JSON is log output (`[DEBUG] recv {"jsonrpc": ...}`), skipped like any
        // other.
        Err(e)
            if line.starts_with(b"{")
                && top_level_member_names(line).contains(&&b"jsonrpc"[..]) =>
        {
            let mended = std::str::from_utf8(line)
                .ok()
                .and_then(tool_core::input::lone_surrogates_replaced);
            match mended.as_deref().map(serde_json::from_str::<Value>) {
                Some(Ok(value)) => (value, mended.map(String::into_bytes)),
                _ if is_broken_notification(line) => {
                    return LineVerdict::Skip(Some(format!(
                        "it sent a notification that is not valid JSON ({e}); it was left out"
                    )));
                }
                _ => {
                    return LineVerdict::Fail(format!(
                        "it sent a JSON-RPC message that is not valid JSON ({e})"
                    ));
                }
            }
        }
        Err(_) => return LineVerdict::Pass,
    };
    match examine_message(value, sent) {
        // rmcp reads the mended line, not the one serde_json refuses.
        LineVerdict::Pass => mended.map_or(LineVerdict::Pass, LineVerdict::Rewrite),
        verdict => verdict,
    }
}

/// [`examine_line`] for a line read as the JSON `value`.
fn examine_message(mut value: Value, sent: &SentIds) -> LineVerdict {
    match &value {
        Value::Array(items) if items.iter().any(is_response) => LineVerdict::Fail(
            "it answered with a batch (a JSON array), which MCP does not allow".to_owned(),
        ),
        Value::Array(_) => LineVerdict::Skip(None),
        Value::Object(fields) if !fields.contains_key("jsonrpc") => LineVerdict::Skip(None),
        Value::Object(fields)
            if fields.contains_key("error")
                && !fields.contains_key("method")
                && id_key(&value).is_none() =>
        {
            idless_error(value, sent)
        }
        Value::Object(_) if is_response(&value) => {
            let id = id_key(&value).unwrap_or_default();
            let mut outstanding = lock(sent);
            // `"2"` or `2.0` for request 2: matched as the TypeScript SDK matches it
            // (`Number(id)`), and handed on with the request's own id.
            let integral = (!outstanding.ids.contains(&id))
                .then(|| integral_id(&value["id"]))
                .flatten()
                .filter(|n| n.to_string() != id);
            // The id as the request had it.
            let key = integral.map_or_else(|| id.clone(), |n| n.to_string());
            let mut verdict = LineVerdict::Pass;
            if outstanding.ids.remove(&key) {
                outstanding.record_answer(key);
                if let Some(n) = integral {
                    value["id"] = Value::from(n);
                    verdict = LineVerdict::Rewrite(serde_json::to_vec(&value).unwrap_or_default());
                }
            } else if outstanding.cancelled.contains(&key) {
                return LineVerdict::Skip(Some(format!(
                    "it answered request {key} after it was cancelled; the answer was ignored"
                )));
            } else if outstanding.unread > 0 {
                outstanding.unread -= 1;
            } else if outstanding.answered.contains(&key) {
                return LineVerdict::Skip(Some(format!(
                    "it sent a second response to request {key}; it was ignored"
                )));
            } else {
                // A request waiting for its answer would wait for its timeout.
                return LineVerdict::Fail(format!(
                    "it sent a response to request {id}, which was never sent"
                ));
            }
            drop(outstanding);
            match serde_json::from_value::<rmcp::model::ServerJsonRpcMessage>(value) {
                Ok(_) => verdict,
                Err(e) => {
                    LineVerdict::Fail(format!("it sent a malformed response to request {id}: {e}"))
                }
            }
        }
        _ => LineVerdict::Pass,
    }
}

/// An error response without an id (`"id": null`, which JSON-RPC 2.0 prescribes when the
/// server could not tell which request it answers), which rmcp would drop, leaving the call
/// to wait for its timeout and then say the server "sent nothing". With one request waiting
/// it is that request's error (given its id, as the HTTP client gives it: [`crate::http`]);
/// with several, which one it answers cannot be told, and the connection fails at once with
/// the server's words; with none (an error about a notification) it is left out, said in the
/// server log.
fn idless_error(mut value: Value, sent: &SentIds) -> LineVerdict {
    let said = || {
        let error = &value["error"];
        let message = error["message"].as_str().unwrap_or("no message");
        let message: String = message.chars().take(300).collect();
        match error["code"].as_i64() {
            Some(code) => format!("{} (code {code})", tool_core::escape_hidden(&message)),
            None => tool_core::escape_hidden(&message),
        }
    };
    let mut outstanding = lock(sent);
    let (known, unread) = (outstanding.ids.len(), outstanding.unread);
    if known + unread == 0 {
        return LineVerdict::Skip(Some(format!(
            "it sent an error without an id while no request was waiting: {}",
            said()
        )));
    }
    let only = (known == 1 && unread == 0)
        .then(|| outstanding.ids.iter().next().cloned())
        .flatten();
    let Some(key) = only else {
        let waiting = if known == 0 {
            "a request too large to read its id from was waiting, so it cannot be given the error"
                .to_owned()
        } else {
            format!(
                "{} requests were waiting, so which one failed cannot be told",
                known + unread
            )
        };
        return LineVerdict::Fail(format!(
            "it sent an error without an id while {waiting}: {}",
            said()
        ));
    };
    let Ok(id) = serde_json::from_str::<Value>(&key) else {
        return LineVerdict::Fail(format!("it sent an error without an id: {}", said()));
    };
    outstanding.ids.remove(&key);
    outstanding.record_answer(key);
    drop(outstanding);
    value["id"] = id;
    match serde_json::from_value::<rmcp::model::ServerJsonRpcMessage>(value.clone()) {
        Ok(_) => LineVerdict::Rewrite(serde_json::to_vec(&value).unwrap_or_default()),
        Err(e) => LineVerdict::Fail(format!("it sent a malformed error without an id: {e}")),
    }
}

/// The integer a response's id names when it is not one as JSON: a string (`"2"`) or a
/// float (`2.0`) that is an integer, as JavaScript's `Number(id)` reads it.
fn integral_id(id: &Value) -> Option<i64> {
    let n = match id {
        Value::String(s) if s.trim().parse::<i64>().is_ok() => return s.trim().parse().ok(),
        Value::String(s) => s.trim().parse::<f64>().ok()?,
        Value::Number(n) if n.is_i64() => return n.as_i64(),
        Value::Number(n) => n.as_f64()?,
        _ => return None,
    };
    // Within the range where every integer is exact, as request ids are.
    (n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0).then_some(n as i64)
}

/// Whether the broken JSON object `line` reads as a notification: among its members at the
/// top level (as far as it goes) a `"method"`, and no `"id"`, `"result"` or `"error"` (a
/// member of that name deeper in, `params.data.error` of a log message, does not count).
fn is_broken_notification(line: &[u8]) -> bool {
    let names = top_level_member_names(line);
    names.contains(&&b"method"[..])
        && !names
            .iter()
            .any(|n| matches!(*n, b"id" | b"result" | b"error"))
}

/// The names of the members of the JSON object `line` at its top level, as far as it goes,
/// whether or not it is valid JSON: each string at depth 1 followed by `:`. A name's escapes
/// are left as they are.
fn top_level_member_names(line: &[u8]) -> Vec<&[u8]> {
    let mut names: Vec<&[u8]> = Vec::new();
    let mut json = JsonStructure::default();
    let mut start = 0;
    for (at, &b) in line.iter().enumerate() {
        match json.step(b) {
            JsonByte::StringStart => start = at + 1,
            JsonByte::StringEnd
                if json.depth == 1 && line[at + 1..].trim_ascii_start().starts_with(b":") =>
            {
                names.push(&line[start..at]);
            }
            JsonByte::StringEnd
            | JsonByte::InString
            | JsonByte::Open
            | JsonByte::Close
            | JsonByte::Other => {}
        }
    }
    names
}

/// Where JSON text stands after each byte, as far as its structure goes (inside a string or
/// not, how deep), without parsing it: what [`LineMender`] and [`is_broken_notification`]
/// read a line by, whether or not it is valid JSON.
#[derive(Debug, Default, Clone, Copy)]
struct JsonStructure {
    in_string: bool,
    escaped: bool,
    /// How many arrays and objects are open.
    depth: usize,
}

/// What a byte is to [`JsonStructure`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JsonByte {
    /// The `"` that opens a string.
    StringStart,
    /// The `"` that closes a string.
    StringEnd,
    /// A string's content (an escape included).
    InString,
    /// `{` or `[`: [`JsonStructure::depth`] is one more.
    Open,
    /// `}` or `]`: [`JsonStructure::depth`] is one less (never below 0).
    Close,
    /// Anything else outside strings.
    Other,
}

impl JsonStructure {
    /// Takes the next byte in.
    fn step(&mut self, b: u8) -> JsonByte {
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                return JsonByte::StringEnd;
            }
            return JsonByte::InString;
        }
        match b {
            b'"' => {
                self.in_string = true;
                JsonByte::StringStart
            }
            b'{' | b'[' => {
                self.depth += 1;
                JsonByte::Open
            }
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                JsonByte::Close
            }
            _ => JsonByte::Other,
        }
    }
}

/// How deep a message from a server may nest (JSON arrays and objects, the message itself
/// the first level) before what is below is not read. serde_json refuses 128 levels (so does
/// rmcp); 100 leaves room for what wraps a result later (a transcript line).
pub(crate) const MAX_MESSAGE_DEPTH: usize = 100;

/// What stands in for a value nested deeper than [`MAX_MESSAGE_DEPTH`] levels.
pub(crate) const TOO_DEEP: &str = "[toolwright: nested deeper than 100 levels, not read]";

/// What a result that held a value nested too deep is reported as, after "the result of …".
pub(crate) fn too_deep_text() -> String {
    format!(
        "is nested deeper than {MAX_MESSAGE_DEPTH} levels (JSON arrays and objects), which \
         this client does not read"
    )
}

/// Whether `value` holds [`TOO_DEEP`] in place of a value nested too deep.
pub(crate) fn holds_too_deep(value: &Value) -> bool {
    match value {
        Value::String(s) => s == TOO_DEEP,
        Value::Array(items) => items.iter().any(holds_too_deep),
        Value::Object(fields) => fields.values().any(holds_too_deep),
        _ => false,
    }
}

/// U+FFFD, the replacement character, in UTF-8.
const REPLACEMENT: &[u8] = "\u{FFFD}".as_bytes();

/// Mends each line of a server's stdout, as it comes, into one rmcp can read as the
/// TypeScript SDK (Claude Code's client) reads it: bytes that are not UTF-8 become U+FFFD,
/// as Node's `Buffer.toString('utf8')` decodes each line (a Latin-1 `é` in a tool's text);
/// and a value nested deeper than [`MAX_MESSAGE_DEPTH`] levels, which serde_json refuses
/// (failing the whole message), becomes the string [`TOO_DEEP`] (the first such value of a
/// container; what follows it in that container is left out), so that the rest of the
/// message is read and what holds it (a call's result, one tool of a listing) can be refused
/// on its own. Only the bytes of the line are looked at; a line that is no JSON goes through
/// the same way, and rmcp skips it as before.
#[derive(Debug, Default)]
struct LineMender {
    /// The start of a UTF-8 sequence that the bytes so far cut off.
    partial: Vec<u8>,
    json: JsonStructure,
    /// Inside a value nested too deep: left out until the depth is back at this.
    skipping: Option<usize>,
    /// A value of this line was left out.
    cut: bool,
}

impl LineMender {
    /// Mends `bytes`, the next part of a line, into `out`; `end`: the line ends with them.
    /// Returns, at the end of a line, whether a value of it was nested too deep.
    fn mend(&mut self, bytes: &[u8], end: bool, out: &mut Vec<u8>) -> bool {
        let joined;
        let mut rest = if self.partial.is_empty() {
            bytes
        } else {
            let mut start = std::mem::take(&mut self.partial);
            start.extend_from_slice(bytes);
            joined = start;
            &joined[..]
        };
        loop {
            match std::str::from_utf8(rest) {
                Ok(_) => {
                    self.scan(rest, out);
                    break;
                }
                Err(e) => {
                    let (good, bad) = rest.split_at(e.valid_up_to());
                    self.scan(good, out);
                    match e.error_len() {
                        // Invalid: its longest valid start is one U+FFFD (as Node decodes).
                        Some(len) => {
                            self.scan(REPLACEMENT, out);
                            rest = &bad[len..];
                        }
                        // Cut off: the next bytes may complete it.
                        None => {
                            self.partial = bad.to_vec();
                            break;
                        }
                    }
                }
            }
        }
        if !end {
            return false;
        }
        if !self.partial.is_empty() {
            self.partial.clear();
            self.scan(REPLACEMENT, out);
        }
        let cut = self.cut;
        *self = Self::default();
        cut
    }

    /// Copies `bytes` (valid UTF-8) to `out`, the first value that starts deeper than
    /// [`MAX_MESSAGE_DEPTH`] in a container replaced by [`TOO_DEEP`], and what follows it
    /// in that container left out: one stand-in for a container however many values too
    /// deep it holds, so that a mended line is never much longer than the line (one of
    /// `[],[],…` at the limit, each a stand-in, was 19 times longer).
    fn scan(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        // Where the bytes still to copy start (none while skipping).
        let mut from = self.skipping.is_none().then_some(0);
        for (at, &b) in bytes.iter().enumerate() {
            match self.json.step(b) {
                JsonByte::Open
                    if self.skipping.is_none() && self.json.depth > MAX_MESSAGE_DEPTH =>
                {
                    if let Some(start) = from.take() {
                        out.extend_from_slice(&bytes[start..at]);
                    }
                    out.push(b'"');
                    out.extend_from_slice(TOO_DEEP.as_bytes());
                    out.push(b'"');
                    // Left out up to the end of the container at the limit, which is kept:
                    // a value in it (the stand-in) is what its text ends with.
                    self.skipping = Some(self.json.depth - 2);
                    self.cut = true;
                }
                JsonByte::Close if self.skipping == Some(self.json.depth) => {
                    self.skipping = None;
                    from = Some(at);
                }
                JsonByte::Open
                | JsonByte::Close
                | JsonByte::StringStart
                | JsonByte::StringEnd
                | JsonByte::InString
                | JsonByte::Other => {}
            }
        }
        if let Some(start) = from {
            out.extend_from_slice(&bytes[start..]);
        }
    }
}

/// A stdio server's stdout, as rmcp reads it: lines are bounded by
/// [`MAX_STDIO_MESSAGE_BYTES`] and mended as they come ([`LineMender`]: bytes that are not
/// UTF-8, values nested too deep), and each line up to [`CHECKED_LINE_BYTES`] is held until
/// it is complete and then handed on, mended or left out as [`examine_line`] says (a longer
/// one is handed on as it comes). A response rmcp would drop or fail on fails the connection at
/// once, with the reason in the server log. When the stream ends (the server closed its
/// stdout or exited) or breaks these rules, the process is killed: a server that can no
/// longer answer must not keep running.
struct GuardedStdout {
    inner: tokio::process::ChildStdout,
    limit: usize,
    child: SharedChild,
    log: Arc<StderrLog>,
    sent: SentIds,
    /// The line being read, held until it is complete (or too long to check).
    held: Vec<u8>,
    /// The length of the line being read, held or not.
    line: usize,
    /// The length of the line being read once mended (what is handed on), held or not.
    mended_line: usize,
    /// The line being read is too long to check: handed on as it comes.
    passing: bool,
    /// Bytes ready for rmcp, from `ready_at` on.
    ready: Vec<u8>,
    ready_at: usize,
    ended: bool,
    /// Resolves when the server exited with a failure ([`ChildSlot::failed`]).
    failed: std::pin::Pin<Box<tokio_util::sync::WaitForCancellationFutureOwned>>,
    /// Mends the line being read as it comes.
    mender: LineMender,
    /// The mended bytes of the part of a line being taken in (kept for its capacity).
    mended: Vec<u8>,
}

impl GuardedStdout {
    fn new(
        inner: tokio::process::ChildStdout,
        child: SharedChild,
        log: Arc<StderrLog>,
        sent: SentIds,
    ) -> Self {
        let failed = Box::pin(child.failed.clone().cancelled_owned());
        Self {
            inner,
            limit: MAX_STDIO_MESSAGE_BYTES,
            failed,
            child,
            log,
            sent,
            held: Vec::new(),
            line: 0,
            mended_line: 0,
            passing: false,
            ready: Vec::new(),
            ready_at: 0,
            ended: false,
            mender: LineMender::default(),
            mended: Vec::new(),
        }
    }

    fn fail(&mut self, message: String) -> std::io::Error {
        self.ended = true;
        *lock(&self.child.closed_because) = Some(message.clone());
        kill_child(&self.child);
        self.log
            .push(format!("[toolwright] {message}; the connection was closed\n").as_bytes());
        std::io::Error::other(message)
    }

    /// Takes in bytes read from the server: complete lines go to `ready` as
    /// [`examine_line`] says.
    fn take_in(&mut self, mut bytes: &[u8]) -> Result<(), String> {
        while !bytes.is_empty() {
            let (segment, newline) = match bytes.iter().position(|&b| b == b'\n') {
                Some(pos) => (&bytes[..pos], true),
                None => (bytes, false),
            };
            bytes = &bytes[segment.len() + usize::from(newline)..];
            self.line += segment.len();
            if self.line > self.limit {
                return Err(format!(
                    "the server sent a message larger than {} MiB",
                    self.limit / (1024 * 1024)
                ));
            }
            let mut mended = std::mem::take(&mut self.mended);
            mended.clear();
            let cut = self.mender.mend(segment, newline, &mut mended);
            // What is handed on is bounded too: a byte that is not UTF-8 becomes three, and
            // a container too deep (`[[]]`) a longer stand-in.
            self.mended_line += mended.len();
            if self.mended_line > self.limit {
                self.mended = mended;
                return Err(format!(
                    "the server sent a message larger than {} MiB as read (each byte that is \
                     not UTF-8 read as U+FFFD, three bytes, and each value nested too deep as \
                     a stand-in text)",
                    self.limit / (1024 * 1024)
                ));
            }
            if cut {
                self.log.push(
                    format!(
                        "[toolwright] it sent a message nested deeper than {MAX_MESSAGE_DEPTH} \
                         levels; what is below was not read\n"
                    )
                    .as_bytes(),
                );
            }
            let taken = self.take_part(&mended, newline);
            self.mended = mended;
            taken?;
        }
        Ok(())
    }

    /// Takes in `segment`, the next mended part of a line (`newline`: the line ends with
    /// it): held, or handed on as it comes when the line is too long to check; a complete
    /// held line goes to `ready` as [`examine_line`] says.
    fn take_part(&mut self, segment: &[u8], newline: bool) -> Result<(), String> {
        if !self.passing && self.held.len() + segment.len() > CHECKED_LINE_BYTES {
            // Too long to check (a large result): handed on as it comes.
            self.passing = true;
            self.ready.append(&mut self.held);
        }
        if self.passing {
            self.ready.extend_from_slice(segment);
            if newline {
                self.ready.push(b'\n');
                self.passing = false;
                self.line = 0;
                self.mended_line = 0;
            }
            return Ok(());
        }
        self.held.extend_from_slice(segment);
        if !newline {
            return Ok(());
        }
        self.line = 0;
        self.mended_line = 0;
        let line = std::mem::take(&mut self.held);
        match examine_line(&line, &self.sent) {
            LineVerdict::Pass => {
                self.ready.extend_from_slice(&line);
                self.ready.push(b'\n');
            }
            LineVerdict::Rewrite(mended) => {
                self.ready.extend_from_slice(&mended);
                self.ready.push(b'\n');
            }
            LineVerdict::Skip(note) => {
                if let Some(note) = note {
                    self.log.push(format!("[toolwright] {note}\n").as_bytes());
                }
            }
            LineVerdict::Fail(problem) => return Err(format!("protocol error: {problem}")),
        }
        Ok(())
    }
}

impl tokio::io::AsyncRead for GuardedStdout {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        use std::task::Poll;
        let this = &mut *self;
        loop {
            if this.ready_at < this.ready.len() {
                let n = buf.remaining().min(this.ready.len() - this.ready_at);
                buf.put_slice(&this.ready[this.ready_at..this.ready_at + n]);
                this.ready_at += n;
                if this.ready_at == this.ready.len() {
                    this.ready.clear();
                    this.ready_at = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.ended {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; 16 * 1024];
            let mut read = tokio::io::ReadBuf::new(&mut chunk);
            match std::pin::Pin::new(&mut this.inner).poll_read(cx, &mut read) {
                Poll::Ready(Ok(())) => {
                    let new = read.filled();
                    if new.is_empty() {
                        // The end: a last line without a newline goes as it is.
                        this.ended = true;
                        this.child.output_ended.store(true, Ordering::SeqCst);
                        kill_child(&this.child);
                        this.ready.append(&mut this.held);
                        continue;
                    }
                    if let Err(problem) = this.take_in(new) {
                        return Poll::Ready(Err(this.fail(problem)));
                    }
                }
                Poll::Ready(Err(e)) => {
                    this.ended = true;
                    this.child.output_ended.store(true, Ordering::SeqCst);
                    kill_child(&this.child);
                    return Poll::Ready(Err(e));
                }
                // Nothing more to read now: if the server failed, what is in the pipe was
                // read, and nothing the server sends can come (a helper it started may still
                // hold the pipe open): the end.
                Poll::Pending => {
                    if this.failed.as_mut().poll(cx).is_ready() {
                        this.ended = true;
                        this.child.output_ended.store(true, Ordering::SeqCst);
                        this.ready.append(&mut this.held);
                        continue;
                    }
                    return Poll::Pending;
                }
            }
        }
    }
}

/// A stdio server's stdin: records the id of every request written to it, and whether it
/// was closed before the server's stdout ended ([`ChildSlot::input_closed_first`]).
struct RecordingStdin {
    inner: tokio::process::ChildStdin,
    sent: SentIds,
    lines: LineSplitter,
    child: SharedChild,
}

impl RecordingStdin {
    /// Notes that we close the server's input: if it is still running with its stdout open,
    /// the end that follows is ours. (One that already ended went away on its own, and so
    /// did one a write to failed: it had closed its input, or ended, before we did. That is
    /// what tells, where whether it runs cannot be read: without `/proc`, as on macOS, a
    /// server that exited counts as running.)
    fn closing(&self) {
        if self.child.output_ended.load(Ordering::SeqCst)
            || self.child.input_broken.load(Ordering::SeqCst)
        {
            return;
        }
        let running = lock(&self.child.process)
            .as_ref()
            .and_then(tokio::process::Child::id)
            .is_some_and(|pid| !ending_by_itself(pid));
        if running {
            self.child.input_closed_first.store(true, Ordering::SeqCst);
        }
    }
}

impl RecordingStdin {
    /// `polled`, having noted a failure in it ([`ChildSlot::input_broken`]).
    fn noting_failure<T>(
        &self,
        polled: std::task::Poll<std::io::Result<T>>,
    ) -> std::task::Poll<std::io::Result<T>> {
        if let std::task::Poll::Ready(Err(_)) = &polled {
            self.child.input_broken.store(true, Ordering::SeqCst);
        }
        polled
    }
}

impl Drop for RecordingStdin {
    fn drop(&mut self) {
        self.closing();
    }
}

impl tokio::io::AsyncWrite for RecordingStdin {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        data: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        use std::task::Poll;
        let this = &mut *self;
        // Ids are recorded before the bytes reach the server: its answer may be read (on
        // another task) before this write returns.
        let sent = this.sent.clone();
        let mut probe = this.lines.clone();
        let _ = probe.feed(data, |line| {
            match line {
                Some(line) => {
                    if let Ok(message) = serde_json::from_slice::<Value>(line)
                        && message.get("method").is_some()
                    {
                        if let Some(id) = id_key(&message) {
                            lock(&sent).ids.insert(id);
                        } else if message["method"] == "notifications/cancelled"
                            && let Some(id) = message["params"]
                                .get("requestId")
                                .filter(|id| !id.is_null())
                        {
                            lock(&sent).record_cancel(id.to_string());
                        }
                    }
                }
                // A request too large to read (a big file to write): its answer will come
                // with an id we could not record.
                None => lock(&sent).unread += 1,
            }
            Ok(())
        });
        match std::pin::Pin::new(&mut this.inner).poll_write(cx, data) {
            Poll::Ready(Ok(n)) => {
                let _ = this.lines.feed(&data[..n], |_| Ok(()));
                Poll::Ready(Ok(n))
            }
            other => this.noting_failure(other),
        }
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let flushed = std::pin::Pin::new(&mut self.inner).poll_flush(cx);
        self.noting_failure(flushed)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.closing();
        std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Connection status of a server, for hosts and `/mcp`-style displays.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerState {
    /// Its first connection is still being made
    /// ([`McpManager::connect_in_background`](crate::McpManager::connect_in_background)).
    Connecting,
    /// Connected and answering.
    Connected,
    /// Not connected: its first connection failed or was abandoned, or the connection was
    /// lost; the message says why.
    Failed(String),
    /// The manager was shut down.
    ShutDown,
}

#[derive(Debug, Default)]
struct Backoff {
    failures: u32,
    retry_at: Option<Instant>,
    last_error: Option<ConnectFailure>,
}

/// Why a connection attempt failed: what happened, and apart from it the tail of the
/// server's log (empty, or lines that start with a line break: [`ServerConn::stderr_note`]),
/// so that a message can say more after what happened and still end with the log. Shown
/// whole, the log follows what happened.
#[derive(Debug, Clone, Default)]
pub(crate) struct ConnectFailure {
    what: String,
    log: String,
}

impl std::fmt::Display for ConnectFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.what, self.log)
    }
}

const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// How long to wait before the next connection attempt after `failures` failed ones in a
/// row: 1 s, doubling, at most [`MAX_BACKOFF`].
fn backoff_delay(failures: u32) -> Duration {
    Duration::from_millis(500)
        .saturating_mul(1u32 << failures.clamp(1, 6))
        .min(MAX_BACKOFF)
}
/// How often an HTTP server is pinged while a call is in flight.
const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(2);
/// How long one heartbeat ping may take.
const HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(10);

/// One configured server and its (re)connections.
pub(crate) struct ServerConn {
    pub(crate) config: ServerConfig,
    opts: Arc<McpOptions>,
    live: Mutex<Option<Arc<Live>>>,
    connect_lock: tokio::sync::Mutex<()>,
    backoff: Mutex<Backoff>,
    pub(crate) stderr: Arc<StderrLog>,
    /// Where an HTTP server's last answer came from, when a redirect led elsewhere.
    answered: Arc<crate::http::AnswerLog>,
    routes: ProgressRoutes,
    tools: RwLock<Vec<Arc<dyn Tool>>>,
    supports_resources: AtomicBool,
    shut_down: AtomicBool,
    list_seq: AtomicU64,
    stored_seq: AtomicU64,
    state: Mutex<ServerState>,
    /// The server's elicitation and sampling requests being answered by the host (the user,
    /// or a model): while there is one, the server's calls are not idle.
    asking_host: AtomicUsize,
    /// `tools/list_changed` handling: whether a re-listing runs, and whether another
    /// notification came while it ran ([`relist`](Self::relist)).
    relisting: Mutex<Relisting>,
    /// What the listing kept last left out or found missing, one line each (a tool left
    /// out and why, a server that declares no tools), for the warnings of `connect`.
    listing_notes: Mutex<Vec<String>>,
}

/// The state of [`ServerConn::relist`].
#[derive(Debug, Default)]
struct Relisting {
    running: bool,
    again: bool,
}

impl std::fmt::Debug for ServerConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConn")
            .field("name", &self.config.name)
            .field("state", &*lock(&self.state))
            .finish_non_exhaustive()
    }
}

impl ServerConn {
    pub(crate) fn new(config: ServerConfig, opts: Arc<McpOptions>) -> Arc<Self> {
        Arc::new(Self {
            stderr: Arc::new(StderrLog::new(
                opts.stderr_capacity,
                // The server's own name is no secret: error texts name it.
                configured_secrets(&config.transport)
                    .into_iter()
                    .filter(|secret| *secret != config.name)
                    .collect(),
            )),
            answered: Arc::default(),
            config,
            opts,
            live: Mutex::new(None),
            connect_lock: tokio::sync::Mutex::new(()),
            backoff: Mutex::new(Backoff::default()),
            routes: Arc::default(),
            tools: RwLock::new(Vec::new()),
            supports_resources: AtomicBool::new(false),
            shut_down: AtomicBool::new(false),
            list_seq: AtomicU64::new(0),
            stored_seq: AtomicU64::new(0),
            state: Mutex::new(ServerState::Connecting),
            asking_host: AtomicUsize::new(0),
            relisting: Mutex::default(),
            listing_notes: Mutex::default(),
        })
    }

    pub(crate) fn name(&self) -> &str {
        &self.config.name
    }

    pub(crate) fn state(&self) -> ServerState {
        if self.shut_down.load(Ordering::SeqCst) {
            return ServerState::ShutDown;
        }
        if let Some(live) = lock(&self.live).as_ref()
            && live.is_dead()
        {
            return ServerState::Failed("the connection was lost".into());
        }
        lock(&self.state).clone()
    }

    pub(crate) fn pid(&self) -> Option<u32> {
        lock(&self.live).as_ref().and_then(|l| l.pid)
    }

    pub(crate) fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn supports_resources(&self) -> bool {
        self.supports_resources.load(Ordering::SeqCst)
    }

    fn startup_timeout(&self) -> Duration {
        self.config.timeout.unwrap_or(self.opts.startup_timeout)
    }

    pub(crate) fn max_output_tokens(&self) -> usize {
        self.opts.max_output_tokens
    }

    pub(crate) fn call_timeout(&self) -> Duration {
        self.config.timeout.unwrap_or(self.opts.tool_timeout)
    }

    /// Lists the tools again after a `tools/list_changed`. Notifications are coalesced: one
    /// listing runs at a time, and the notifications that come while it runs make one more
    /// listing after it, however many they are, not one each.
    fn relist(self: &Arc<Self>) {
        {
            let mut state = lock(&self.relisting);
            if state.running {
                state.again = true;
                return;
            }
            state.running = true;
        }
        let conn = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                if conn.refresh_tools().await.is_ok() {
                    conn.notify_tools_changed();
                }
                let mut state = lock(&conn.relisting);
                if !std::mem::take(&mut state.again) {
                    state.running = false;
                    break;
                }
            }
        });
    }

    /// How long a call may go without a word from the server: the option, else Claude
    /// Code's defaults (30 minutes for a stdio server, 5 for a network one).
    fn idle_timeout(&self) -> Duration {
        self.opts
            .tool_idle_timeout
            .unwrap_or(match self.config.transport {
                TransportConfig::Stdio { .. } => crate::options::DEFAULT_STDIO_IDLE_TIMEOUT,
                _ => crate::options::DEFAULT_NETWORK_IDLE_TIMEOUT,
            })
    }

    /// `MCP server "name"`, the subject of every error message.
    pub(crate) fn label(&self) -> String {
        format!(
            "MCP server \"{}\"",
            tool_core::escape_hidden(&self.config.name)
        )
    }

    /// `text` with this server's URL shown without its user info and query, where a token
    /// often sits (`?key=${API_KEY}`): error texts reach the model and the transcript.
    ///
    /// The user info and the query are hidden wherever they stand in a URL (`//…@`,
    /// `?…`, each as the configured URL and as the parsed one write them), whatever
    /// their length; elsewhere only a part long enough to be a secret rather than a word
    /// (8 characters) is, so that a one-letter password does not take every such letter
    /// out of the message. Scrubbing twice changes nothing more (a text is scrubbed again
    /// on its way through the layers).
    ///
    /// The values of the server's configured `env` and `headers` that could be secrets
    /// ([`configured_secrets`]) are replaced by [`REDACTED`] too, for every transport: a
    /// server's own error text, or its log, may quote them.
    fn scrub(&self, text: String) -> String {
        // The values of the server's `env` and `headers` first (a server may quote them).
        let text = replace_secrets(&text, &self.stderr.secrets);
        let url = match &self.config.transport {
            TransportConfig::Http { url, .. }
            | TransportConfig::Sse { url, .. }
            | TransportConfig::Ws { url, .. } => url,
            TransportConfig::Stdio { .. } => return text,
        };
        // A URL that is nothing but a variable (`${U}`, not set) hides nothing: the texts
        // that name the variable stay readable.
        if only_variable_references(url) {
            return text;
        }
        let Ok(parsed) = reqwest::Url::parse(url) else {
            // A URL that does not parse was never connected to: only our own texts quote
            // it, and whole.
            return text.replace(url.as_str(), &tool_core::redact_url(url));
        };
        let (raw_info, raw_query) = raw_credentials(url);
        let user = parsed.username();
        let password = parsed.password();
        let mut infos: Vec<String> = raw_info.iter().map(|&info| info.to_owned()).collect();
        if let Some(password) = password {
            infos.push(format!("{user}:{password}"));
        }
        if !user.is_empty() {
            infos.push(user.to_owned());
        }
        let mut text = text;
        for info in infos.iter().filter(|info| !info.is_empty()) {
            text = replace_whole(&text, &format!("{info}@"), "redacted@");
        }
        let queries = [raw_query, parsed.query()];
        for query in queries.iter().flatten().filter(|q| !q.is_empty()) {
            text = replace_whole(&text, &format!("?{query}"), "?redacted");
        }
        let raw_user = raw_info.map(|info| info.split_once(':').map_or(info, |(user, _)| user));
        let raw_password = raw_info.and_then(|info| info.split_once(':').map(|(_, pw)| pw));
        // The Basic credentials the URL's user info is sent as (a server may echo its
        // `Authorization` header), as the client encodes them and as written.
        let decode = |text: &str| {
            percent_encoding::percent_decode_str(text)
                .decode_utf8_lossy()
                .into_owned()
        };
        let decoded_password = password.map(decode);
        let basic: Vec<String> = [
            Some(format!("{user}:{}", password.unwrap_or_default())),
            // As reqwest sends it: decoded (`p%40ss` is `p@ss`).
            Some(format!(
                "{}:{}",
                decode(user),
                decoded_password.as_deref().unwrap_or_default()
            )),
            raw_info.map(str::to_owned),
        ]
        .into_iter()
        .flatten()
        .filter(|info| info.len() > 1)
        .map(|info| {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD.encode(info)
        })
        .collect();
        // Each value of the query too (`key=SECRETKEY1234`), as written and as decoded.
        let values: Vec<String> = queries
            .iter()
            .flatten()
            .flat_map(|q| q.split('&'))
            .filter_map(|pair| pair.split_once('=').map(|(_, v)| v.to_owned()))
            .chain(parsed.query_pairs().map(|(_, v)| v.into_owned()))
            .collect();
        let parts = [
            Some(user),
            password,
            raw_user,
            raw_password,
            decoded_password.as_deref(),
        ]
        .into_iter()
        .chain(queries)
        .flatten()
        .chain(values.iter().map(String::as_str))
        .chain(basic.iter().map(String::as_str));
        // A part that is only a variable left unset (`?key=${API_KEY}`) is the
        // configuration's text, no secret: the message naming the variable keeps it.
        for part in
            parts.filter(|part| part.chars().count() >= 8 && !only_variable_references(part))
        {
            text = text.replace(part, "…");
        }
        text
    }

    /// A transport error in words: for an HTTP server, what happened at the HTTP level when
    /// that can be told (a refused connection, a 401); never the Rust type names of rmcp's
    /// texts.
    fn plain_error(&self, error: &ServiceError) -> String {
        match &self.config.transport {
            TransportConfig::Http { url, .. } => {
                crate::http::plain_error(error, &self.answered_at(url))
                    .text()
                    .to_owned()
            }
            _ => crate::http::without_type_names(error),
        }
    }

    /// The URL an HTTP server's last answer came from, as error texts show it: the
    /// configured `url`, or where a redirect led from it (`http://host/elsewhere (redirected
    /// there from http://host/mcp?redacted)`), saying when that was another origin, which
    /// was not sent the configured headers.
    fn answered_at(&self, url: &str) -> String {
        let configured = tool_core::redact_url(url);
        match self.answered.get() {
            Some(answered) => {
                let other = if answered.other_origin {
                    "; another origin, so the server's configured headers were not sent there"
                } else {
                    ""
                };
                format!(
                    "{} (redirected there from {configured}{other})",
                    tool_core::redact_url(answered.url.as_str())
                )
            }
            None => configured,
        }
    }

    /// The tail of the server's log for an error message, once what a dying server wrote
    /// to stderr has been read (within [`McpOptions::last_words_wait`]).
    async fn stderr_note(&self) -> String {
        self.stderr.settled(self.opts.last_words_wait).await;
        let tail = self.stderr.tail(2_000);
        if tail.is_empty() {
            String::new()
        } else {
            format!("\nServer log (stderr and notifications/message, last lines):\n{tail}")
        }
    }

    pub(crate) fn notify_tools_changed(&self) {
        if let Some(hook) = &self.opts.on_tools_changed {
            hook(&self.config.name);
        }
    }

    fn client_info(&self) -> ClientConfig {
        let mut caps = json!({"roots": {"listChanged": false}});
        if self.opts.elicitation.is_some() {
            caps["elicitation"] = json!({});
        }
        if self.opts.sampling.is_some() {
            caps["sampling"] = json!({});
        }
        let caps: ClientCapabilities = serde_json::from_value(caps).unwrap_or_default();
        // The `initialize` handshake offers the latest stable version (what Claude Code and
        // the conformance suite expect); 2026-07-28 is the stateless `server/discover` era.
        ClientConfig::new(
            caps,
            Implementation::new("toolwright", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    fn handler(self: &Arc<Self>) -> Handler {
        Handler {
            server: self.config.name.clone(),
            info: self.client_info(),
            roots: roots(&self.opts),
            conn: Arc::downgrade(self),
            opts: self.opts.clone(),
            stderr: self.stderr.clone(),
        }
    }

    /// Connects once (no backoff), within the startup timeout.
    async fn connect_once(self: &Arc<Self>) -> Result<Arc<Live>, String> {
        let timeout = self.startup_timeout();
        let handler = self.handler();
        match &self.config.transport {
            TransportConfig::Stdio { command, args, env } => {
                let mut cmd = tokio::process::Command::new(command);
                // Claude Code's `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB`: this process's credentials
                // stay out of the server's environment. Before the entry's own `env`, so that
                // a key the configuration gives the server explicitly still reaches it.
                tool_core::process::scrub_credentials(cmd.as_std_mut());
                // Its depth in a chain of MCP servers after the entry's own `env`, which cannot
                // reset it: a server that is itself a client (`toolwright serve`) then loads
                // no configured servers that would start it again.
                cmd.args(args)
                    .envs(env)
                    .env("CLAUDE_PROJECT_DIR", &self.opts.project_dir)
                    .env(
                        crate::config::MCP_DEPTH_VAR,
                        self.opts.mcp_depth.saturating_add(1).to_string(),
                    )
                    .kill_on_drop(true);
                if self.opts.project_dir.is_dir() {
                    cmd.current_dir(&self.opts.project_dir);
                }
                cmd.stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                // Out of the terminal's reach: its Ctrl-C (an interrupt of the turn) does not
                // reach the server, and it cannot stop on reading the terminal.
                tool_core::process::detach_from_terminal(cmd.as_std_mut());
                let mut child = cmd
                    .spawn()
                    .map_err(|e| format!("cannot start `{command}`: {e}"))?;
                let pid = child.id();
                let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                    return Err(format!(
                        "cannot talk to `{command}`: its stdio was not piped"
                    ));
                };
                if let Some(stderr) = child.stderr.take() {
                    self.stderr.read_from(stderr);
                }
                let child: SharedChild = Arc::new(ChildSlot {
                    process: Mutex::new(Some(child)),
                    killed_running: AtomicBool::new(false),
                    failed: tokio_util::sync::CancellationToken::new(),
                    closed_because: Mutex::new(None),
                    output_ended: AtomicBool::new(false),
                    input_closed_first: AtomicBool::new(false),
                    input_broken: AtomicBool::new(false),
                });
                watch_for_a_failed_exit(&child);
                let mut start = StartGuard {
                    child: child.clone(),
                    armed: true,
                };
                let sent = SentIds::default();
                let stdout =
                    GuardedStdout::new(stdout, child.clone(), self.stderr.clone(), sent.clone());
                let stdin = RecordingStdin {
                    inner: stdin,
                    sent,
                    lines: LineSplitter::default(),
                    child: child.clone(),
                };
                // The bound is enforced by `GuardedStdout` (which fails the connection
                // instead of skipping the message).
                let transport = AsyncRwTransport::<RoleClient, _, _>::new(stdout, stdin)
                    .with_max_line_length(usize::MAX);
                let transport = ProgressFirst::new(transport, &self.config.name, &self.routes);
                let served = tokio::time::timeout(timeout, handler.serve(transport)).await;
                // On failure, `start` kills the server.
                let service = match served {
                    Ok(Ok(service)) => service,
                    Ok(Err(e)) => {
                        let mut message = format!(
                            "initialization failed: {}",
                            crate::http::without_type_names(&e)
                        );
                        if let Some(end) = exit_note(&child, self.opts.last_words_wait).await {
                            message = format!("{message}; {end}");
                        }
                        return Err(message);
                    }
                    Err(_) => return Err(timeout_message(timeout)),
                };
                no_stale_answers(service.peer()).await;
                start.armed = false;
                Ok(Arc::new(Live {
                    peer: service.peer().clone(),
                    dead: AtomicBool::new(false),
                    listed: AtomicBool::new(false),
                    service: Mutex::new(Some(service)),
                    pid,
                    child,
                }))
            }
            TransportConfig::Http { url, headers } => {
                // Loaded with a variable left unset (as Claude Code loads it, with a
                // warning): said as such, not as the HTTP client's "builder error".
                if url.contains("${") {
                    return Err(unexpanded_url(url));
                }
                let _ = rustls::crypto::ring::default_provider().install_default();
                // No `Referer`; redirects to another origin without the configured headers
                // (see `http.rs`).
                self.answered.set(None);
                let client = crate::http::SessionAwareClient::new(self.answered.clone())?;
                let mut custom = HashMap::new();
                for (k, v) in headers {
                    if let Some(refused) = crate::http::reserved_header(k) {
                        return Err(refused);
                    }
                    let name = http::HeaderName::from_bytes(k.as_bytes())
                        .map_err(|e| format!("invalid header name \"{k}\": {e}"))?;
                    let value = http::HeaderValue::from_str(v)
                        .map_err(|e| format!("invalid value for header \"{k}\": {e}"))?;
                    custom.insert(name, value);
                }
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(custom)
                    .reinit_on_expired_session(true);
                // rmcp's default retries a broken SSE stream forever, so a call in flight
                // on a dead server would hang; give up after a few attempts instead.
                config.retry_config = Arc::new(BoundedSseRetry);
                let transport = StreamableHttpClientTransport::with_client(client, config);
                let transport = ProgressFirst::new(transport, &self.config.name, &self.routes);
                let service = tokio::time::timeout(timeout, handler.serve(transport))
                    .await
                    .map_err(|_| timeout_message(timeout))?
                    .map_err(|e| {
                        // Where the answer came from, when a redirect led elsewhere.
                        let shown = self.answered_at(url);
                        self.scrub(match crate::http::plain_error(&e, &shown) {
                            crate::http::Failure::Connect(text) => text,
                            crate::http::Failure::Exchange(text) => {
                                format!("initialization failed at {shown}: {text}")
                            }
                        })
                    })?;
                no_stale_answers(service.peer()).await;
                Ok(Arc::new(Live {
                    peer: service.peer().clone(),
                    dead: AtomicBool::new(false),
                    listed: AtomicBool::new(false),
                    service: Mutex::new(Some(service)),
                    pid: None,
                    child: Arc::default(),
                }))
            }
            TransportConfig::Sse { .. } => Err(
                "the legacy SSE transport (\"type\": \"sse\") is not supported by this client; \
                 most servers also serve Streamable HTTP: use \"type\": \"http\" with its URL"
                    .into(),
            ),
            TransportConfig::Ws { .. } => {
                Err("the WebSocket transport (\"type\": \"ws\") is not supported".into())
            }
        }
    }

    /// Connects (first time or after a loss) and lists the tools. Errors name the server.
    pub(crate) async fn connect_and_list(self: &Arc<Self>) -> Result<Arc<Live>, ConnectFailure> {
        let connected = match self.connect_once().await {
            Ok(live) => match unsupported_version(&live) {
                // The lifecycle's rule (and the TypeScript SDK's): a client that does not
                // support the version the server answered with disconnects.
                Some(version) => {
                    live.close().await;
                    Err(format!(
                        "the server answered `initialize` with protocol version \"{version}\", \
                         which this client does not support ({})",
                        rmcp::model::ProtocolVersion::KNOWN_VERSIONS
                            .iter()
                            .map(rmcp::model::ProtocolVersion::as_str)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                }
                None => Ok(live),
            },
            Err(e) => Err(e),
        };
        let live = match connected {
            Ok(live) => live,
            Err(e) => {
                let failure = ConnectFailure {
                    what: self.scrub(e),
                    log: self.scrub(self.stderr_note().await),
                };
                *lock(&self.state) = ServerState::Failed(failure.to_string());
                return Err(failure);
            }
        };
        // Stored before the listing, so that a `tools/list_changed` sent meanwhile re-lists
        // on it; `listing` takes it out again if this future is dropped before the end.
        *lock(&self.live) = Some(live.clone());
        let mut listing = ListingGuard {
            conn: self,
            live: live.clone(),
            armed: true,
        };
        // A shutdown that came while this connected took nothing, or took this one: either
        // way it must not be left running. (`shutdown` sets the flag before it takes.)
        if self.shut_down.load(Ordering::SeqCst) {
            let ours = {
                let mut slot = lock(&self.live);
                if slot.as_ref().is_some_and(|l| Arc::ptr_eq(l, &live)) {
                    slot.take()
                } else {
                    None
                }
            };
            if ours.is_some() {
                live.close().await;
            }
            listing.armed = false;
            return Err(ConnectFailure {
                what: format!("{}: the MCP manager was shut down", self.label()),
                log: String::new(),
            });
        }
        *lock(&self.state) = ServerState::Connected;
        let has_resources = live.declares_resources();
        self.supports_resources
            .store(has_resources, Ordering::SeqCst);
        // A server that declares no tools (resources or prompts only) is not asked for them:
        // many answer `tools/list` with "Method not found".
        let has_tools = live
            .peer
            .peer_info()
            .is_none_or(|info| info.capabilities.tools.is_some());
        if !has_tools {
            let seq = self.list_seq.fetch_add(1, Ordering::SeqCst) + 1;
            // Resources are served without tools; a server with neither offers nothing
            // (`"tools": null` reads as no tools capability, as in the TypeScript SDK).
            let notes = if has_resources {
                Vec::new()
            } else {
                vec![
                    "it offers no tools: its `initialize` answer declares no `tools` capability \
                     (absent or null), so they were not listed"
                        .to_owned(),
                ]
            };
            self.store_tools(seq, Vec::new(), notes);
            listing.armed = false;
            live.listed.store(true, Ordering::SeqCst);
            return Ok(live);
        }
        let listed = self.refresh_tools_with(&live).await;
        listing.armed = false;
        if let Err(mut e) = listed {
            // How it ended, when it did (a server that exits on its first request).
            if live.peer.is_transport_closed()
                && let Some(end) = exit_note(&live.child, self.opts.last_words_wait).await
            {
                e = format!("{e}; {end}");
            }
            // A connection without its tools is no connection: it must not be reused (the
            // next use would skip the backoff) nor keep its process.
            live.mark_dead();
            *lock(&self.live) = None;
            live.close().await;
            // What it wrote as it died (a server that starts, then exits on its first
            // request: "fatal: GITHUB_TOKEN not set") says why, as for a failed start.
            let failure = ConnectFailure {
                what: e,
                log: self.scrub(self.stderr_note().await),
            };
            *lock(&self.state) = ServerState::Failed(failure.to_string());
            return Err(failure);
        }
        live.listed.store(true, Ordering::SeqCst);
        Ok(live)
    }

    /// Re-lists the tools of the current connection.
    pub(crate) async fn refresh_tools(self: &Arc<Self>) -> Result<(), String> {
        let live = lock(&self.live).clone();
        match live {
            Some(live) if !live.is_dead() => {
                self.refresh_tools_with(&live).await?;
                *lock(&self.state) = ServerState::Connected;
                Ok(())
            }
            _ => Err(format!("{} is not connected", self.label())),
        }
    }

    async fn refresh_tools_with(self: &Arc<Self>, live: &Live) -> Result<(), String> {
        // Refreshes can overlap (list_changed during the first listing): a list fetched
        // earlier never replaces one fetched later.
        let seq = self.list_seq.fetch_add(1, Ordering::SeqCst) + 1;
        let pages = list_all("tools", |cursor| async {
            let request = rmcp::model::ListToolsRequest {
                method: Default::default(),
                params: Some(page_params(cursor)),
                extensions: Default::default(),
            };
            let page =
                request_cancelled_if_dropped(&live.peer, ClientRequest::ListToolsRequest(request))
                    .await?;
            tools_of_page(page)
        });
        let listed = tokio::time::timeout(self.startup_timeout(), pages)
            .await
            .map_err(|_| format!("tools/list timed out after {:?}", self.startup_timeout()))?
            .map_err(|e| {
                let why = match &e {
                    ListError::Service(e) => self.plain_error(e),
                    ListError::Invalid(why) => why.clone(),
                };
                self.scrub(format!("tools/list failed: {why}"))
            })?;
        let mut tools: Vec<Arc<dyn Tool>> = Vec::with_capacity(listed.len());
        let mut notes = Vec::new();
        for (at, raw) in listed.iter().enumerate() {
            let problem = match tool_problem(raw) {
                Some(problem) => Some(problem),
                None => match crate::tool::McpTool::new(self.clone(), raw) {
                    Ok(tool) => {
                        tools.push(Arc::new(tool));
                        None
                    }
                    // Sent on, it would fail every request to the model API.
                    Err(why) => Some(format!(
                        "its input schema cannot be made valid for the model API ({why})"
                    )),
                },
            };
            if let Some(why) = problem {
                notes.push(self.leave_tool_out(&tool_label(raw, at), &why));
            }
        }
        self.store_tools(seq, tools, notes);
        Ok(())
    }

    /// Leaves a tool of a listing out, with a line naming it (`label`: [`tool_label`]) and
    /// why in the server's log (and a warning in the trace): the server's other tools are
    /// offered. Returns the line, for the warnings of `connect`.
    fn leave_tool_out(&self, label: &str, why: &str) -> String {
        let note = format!("tools/list: the tool {label} is left out: {why}");
        tracing::warn!(server = %self.label(), "{note}");
        self.stderr
            .push(format!("[toolwright] {note}\n").as_bytes());
        note
    }

    /// What the listing kept last left out or found missing, one line each: a tool left
    /// out and why, a server that declares no tools.
    pub(crate) fn listing_notes(&self) -> Vec<String> {
        lock(&self.listing_notes).clone()
    }

    /// Keeps `tools`, the listing numbered `seq`, and `notes`, what it left out, unless a
    /// later listing was kept already.
    fn store_tools(&self, seq: u64, tools: Vec<Arc<dyn Tool>>, notes: Vec<String>) {
        let mut stored = self.tools.write().unwrap_or_else(PoisonError::into_inner);
        if seq > self.stored_seq.load(Ordering::SeqCst) && !self.shut_down.load(Ordering::SeqCst) {
            self.stored_seq.store(seq, Ordering::SeqCst);
            *stored = tools;
            *lock(&self.listing_notes) = notes;
        }
    }

    /// The live connection, reconnecting a dead one (with backoff after failures).
    pub(crate) async fn live(self: &Arc<Self>) -> Result<Arc<Live>, ToolError> {
        if self.shut_down.load(Ordering::SeqCst) {
            return Err(ToolError::msg(format!(
                "{}: the MCP manager was shut down",
                self.label()
            )));
        }
        // A connection still listing its tools is not taken without the lock: its connecting
        // future holds the lock and may yet be dropped, killing it under this call.
        if let Some(live) = lock(&self.live).clone()
            && live.listed.load(Ordering::SeqCst)
            && !live.is_dead()
        {
            return Ok(live);
        }
        let _guard = self.connect_lock.lock().await;
        let current = lock(&self.live).clone();
        if let Some(live) = current {
            if !live.is_dead() {
                return Ok(live);
            }
            // Dead: make sure the old child is gone before starting a new one.
            live.close().await;
            *lock(&self.live) = None;
        }
        {
            let backoff = lock(&self.backoff);
            if let (Some(at), Some(err)) = (backoff.retry_at, &backoff.last_error) {
                let now = Instant::now();
                // The server's log after the notice, as the failure itself said it: inside
                // the parenthesis its lines would end with the notice.
                if at > now {
                    return Err(ToolError::msg(self.scrub(format!(
                        "{} is not connected (last error: {}); next reconnection attempt in \
                         {:.1}s{}",
                        self.label(),
                        err.what,
                        (at - now).as_secs_f64(),
                        err.log
                    ))));
                }
            }
        }
        match self.connect_and_list().await {
            Ok(live) => {
                *lock(&self.backoff) = Backoff::default();
                self.notify_tools_changed();
                Ok(live)
            }
            Err(e) => {
                let mut backoff = lock(&self.backoff);
                backoff.failures += 1;
                backoff.retry_at = Some(Instant::now() + backoff_delay(backoff.failures));
                backoff.last_error = Some(e.clone());
                Err(ToolError::msg(self.scrub(format!(
                    "{} could not be reconnected: {e}",
                    self.label()
                ))))
            }
        }
    }

    /// The first connection, and its tools listed: under the connection lock, so that a
    /// call that needs the server meanwhile ([`Self::live`]) waits for it rather than
    /// starting a second one. A failure is recorded as the first of the backoff.
    pub(crate) async fn connect_first(self: &Arc<Self>) -> Result<(), String> {
        /// Marks the server failed if its first connection is dropped before it ends (the
        /// future of [`McpManager::connect_in_background`](crate::McpManager) abandoned):
        /// it is no longer connecting.
        struct Abandoned<'a>(&'a ServerConn, bool);
        impl Drop for Abandoned<'_> {
            fn drop(&mut self) {
                let mut state = lock(&self.0.state);
                if !self.1 && *state == ServerState::Connecting {
                    *state = ServerState::Failed("its first connection was abandoned".into());
                }
            }
        }
        let mut abandoned = Abandoned(self, false);
        let _guard = self.connect_lock.lock().await;
        let result = if self.shut_down.load(Ordering::SeqCst) {
            Err("the MCP manager was shut down".into())
        } else if lock(&self.live)
            .as_ref()
            .is_some_and(|live| !live.is_dead())
        {
            Ok(())
        } else {
            self.connect_and_list().await.map(|_| ()).map_err(|e| {
                self.record_initial_failure(&e);
                e.to_string()
            })
        };
        abandoned.1 = true;
        result
    }

    /// Records the failure of the first connection so that the next use waits for the
    /// backoff instead of retrying at once.
    fn record_initial_failure(&self, error: &ConnectFailure) {
        let mut backoff = lock(&self.backoff);
        backoff.failures = 1;
        backoff.retry_at = Some(Instant::now() + backoff_delay(1));
        backoff.last_error = Some(ConnectFailure {
            what: self.scrub(error.what.clone()),
            log: self.scrub(error.log.clone()),
        });
    }

    /// One `tools/call`, never retried. `cancel` aborts it (sending
    /// `notifications/cancelled`).
    pub(crate) async fn call_tool(
        self: &Arc<Self>,
        tool: &str,
        arguments: serde_json::Map<String, Value>,
        cancel: &tokio_util::sync::CancellationToken,
        progress: ProgressSender,
    ) -> Result<Value, ToolError> {
        // A reconnection can take as long as the startup timeout: a cancellation meanwhile
        // ends the call at once (the half-started server is killed).
        let live = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ToolError::Cancelled(None)),
            live = self.live() => live?,
        };
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        // The call's progress is routed by a token of ours, its route open before it is sent.
        let (route, options) = self.open_route(progress, tool);
        let handle = match live.peer.send_request_with_option(request, options).await {
            Ok(handle) => handle,
            Err(e) => return Err(self.call_error(Some(tool), "tools/call", e, &live).await),
        };
        let result = self
            .await_answer(&live, handle, "tools/call", tool, &route, cancel)
            .await?;
        // The tool's name as messages quote it from here on (it was sent as it is).
        let tool = tool_core::escape_hidden(tool);
        let value = serde_json::to_value(&result).map_err(|e| {
            ToolError::msg(format!(
                "{}: cannot read the result of tool \"{tool}\": {e}",
                self.label()
            ))
        })?;
        // The connection stays: only this result is not read.
        if holds_too_deep(&value) {
            return Err(ToolError::msg(format!(
                "{}: the result of tool \"{tool}\" {}. The call may or may not have taken \
                 effect.",
                self.label(),
                too_deep_text()
            )));
        }
        if !value.is_object() || value.get("content").is_some_and(|c| !c.is_array()) {
            let mut shown = value.to_string();
            if shown.len() > 200 {
                shown = format!("{}…", shown.chars().take(200).collect::<String>());
            }
            return Err(ToolError::msg(format!(
                "{}: tool \"{tool}\" returned a malformed result (expected an object with a \
                 `content` list): {shown}. The call may or may not have taken effect.",
                self.label()
            )));
        }
        match value.get("resultType").and_then(Value::as_str) {
            // A contentless result (`{}`) parses as another variant: it is still a result.
            None | Some("complete") => Ok(value),
            Some(kind) => Err(ToolError::msg(format!(
                "{}: tool \"{tool}\" returned an unsupported result (resultType \"{kind}\"); \
                 tasks and input-required rounds are not supported",
                self.label()
            ))),
        }
    }

    /// Opens the progress route of a request for `target` (a tool's name or a resource's
    /// URI) about to be sent with the options returned: its progress notifications go to
    /// `progress` and count as a word from the server, from the moment it is sent (the route
    /// is open before), until the guard returned is dropped.
    fn open_route(
        &self,
        progress: ProgressSender,
        target: &str,
    ) -> (RouteGuard, PeerRequestOptions) {
        let key = format!("tw-{}", ROUTE_SEQ.fetch_add(1, Ordering::Relaxed) + 1);
        let activity = Arc::new(tokio::sync::Notify::new());
        lock(&self.routes).insert(
            key.clone(),
            ProgressRoute {
                sender: progress,
                tool: target.to_owned(),
                activity: Arc::clone(&activity),
            },
        );
        let mut meta = rmcp::model::RequestMetaObject::new();
        meta.insert(ROUTE_META_KEY.to_owned(), Value::String(key.clone()));
        let mut options = PeerRequestOptions::no_options();
        options.meta = Some(meta);
        let guard = RouteGuard {
            routes: self.routes.clone(),
            token: key,
            activity,
        };
        (guard, options)
    }

    /// Waits for the answer to `handle`, a `tools/call` or `resources/read` request for
    /// `target` (a tool's name or a resource's URI), sent with `route` open
    /// ([`open_route`](Self::open_route)), as long as the server is heard from: its progress
    /// notifications go to the route and count as a word. The request is
    /// given up, and the server sent `notifications/cancelled` with the reason, after
    /// [`idle_timeout`](Self::idle_timeout) without a word, when an HTTP server stops
    /// answering pings ([`heartbeat`](Self::heartbeat): the connection then counts as dead),
    /// when `cancel` fires, or at [`call_timeout`](Self::call_timeout). Errors name the
    /// server, the method and the target.
    async fn await_answer(
        &self,
        live: &Live,
        handle: rmcp::service::RequestHandle<RoleClient>,
        method: &str,
        target: &str,
        route: &RouteGuard,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<rmcp::model::ServerResult, ToolError> {
        let subject = if method == "tools/call" {
            format!("tool \"{}\"", tool_core::escape_hidden(target))
        } else {
            format!("{method} \"{}\"", tool_core::escape_hidden(target))
        };
        let request_id = handle.id.clone();
        let activity = &route.activity;
        let timeout = self.call_timeout();
        let idle = self.idle_timeout();
        // Ends when the server has sent nothing for the request (no progress) for `idle`,
        // and is not waiting for the host to answer a request of its own (an elicitation
        // the user is filling in).
        let silent = async {
            loop {
                let heard = tokio::time::timeout(idle, activity.notified())
                    .await
                    .is_ok();
                if !heard && self.asking_host.load(Ordering::SeqCst) == 0 {
                    break;
                }
            }
        };
        let outcome = tokio::select! {
            r = handle.await_response() => r,
            () = silent => {
                self.send_cancelled(live, request_id, "idle").await;
                return Err(ToolError::msg(format!(
                    "{}: {subject} sent nothing for {} (CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT: no progress and no answer); \
                     the request was cancelled",
                    self.label(),
                    human_duration(idle)
                )));
            }
            reason = self.heartbeat(live) => {
                // Best effort, like the others: the server may be gone, or only its pings
                // held up (a proxy), and then it learns the request was given up.
                self.send_cancelled(live, request_id, "the server stopped answering pings").await;
                live.mark_dead();
                return Err(ToolError::msg(self.scrub(format!(
                    "{} stopped answering during {method} \"{}\" ({reason}). The request was \
                     not retried (it may or may not have taken effect); the server is reconnected \
                     on the next use.",
                    self.label(),
                    tool_core::escape_hidden(target)
                ))));
            }
            () = cancel.cancelled() => {
                self.send_cancelled(live, request_id, "cancelled by the user").await;
                return Err(ToolError::Cancelled(None));
            }
            () = tokio::time::sleep(timeout) => {
                self.send_cancelled(live, request_id, "timed out").await;
                return Err(ToolError::msg(format!(
                    "{}: {subject} timed out after {} (MCP_TOOL_TIMEOUT or the server's \"timeout\"); \
                     the request was cancelled",
                    self.label(),
                    human_duration(timeout)
                )));
            }
        };
        match outcome {
            Ok(result) => Ok(result),
            Err(e) => Err(self.call_error(Some(target), method, e, live).await),
        }
    }

    /// Resolves only when an HTTP server stops answering pings during a call (a dead server
    /// otherwise leaves the request pending: the transport cannot tell). Stdio servers are
    /// watched through their pipes instead, so this never resolves for them.
    ///
    /// The silence is counted from the sending of the first ping left without an answer,
    /// and the call is given up once it has lasted [`heartbeat_give_up`](Self::heartbeat_give_up):
    /// no ping is waited for, and no pause between pings lasts, past that moment, so the
    /// limit is kept to the second and the reason says how long it was.
    async fn heartbeat(&self, live: &Live) -> String {
        if !matches!(self.config.transport, TransportConfig::Http { .. }) {
            return std::future::pending().await;
        }
        let give_up = self.heartbeat_give_up();
        // Since when pings have gone unanswered (the first such ping's sending), and the
        // last failure to send one, when the latest ping failed rather than went unanswered.
        let mut silent_since: Option<tokio::time::Instant> = None;
        let mut last_failure: Option<String> = None;
        // What is left of the silence allowed (all of it while the server answers).
        let left = |since: Option<tokio::time::Instant>| {
            since.map_or(give_up, |since| give_up.saturating_sub(since.elapsed()))
        };
        let reason = |since: tokio::time::Instant, failure: &Option<String>| {
            let secs = since.elapsed().as_secs();
            match failure {
                Some(e) => format!("pings failed for {secs} s, the last with: {e}"),
                None => format!("no answer to any ping for {secs} s"),
            }
        };
        loop {
            tokio::time::sleep(HEARTBEAT_INTERVAL.min(left(silent_since))).await;
            if let Some(since) = silent_since
                && left(silent_since).is_zero()
            {
                return reason(since, &last_failure);
            }
            let sent_at = tokio::time::Instant::now();
            let ping = live
                .peer
                .send_request(ClientRequest::PingRequest(Default::default()));
            // A ping is never waited for past the end of the silence allowed.
            match tokio::time::timeout(HEARTBEAT_TIMEOUT.min(left(silent_since)), ping).await {
                // Any answer, an error included (a server without `ping`), means it is there.
                Ok(
                    Ok(_)
                    | Err(rmcp::ServiceError::McpError(_) | rmcp::ServiceError::UnexpectedResponse),
                ) => {
                    silent_since = None;
                    last_failure = None;
                }
                // Gone for certain: the connection ended.
                Ok(Err(e @ rmcp::ServiceError::TransportClosed)) => {
                    return format!("ping failed: {}", self.plain_error(&e));
                }
                // Anything else (a proxy's 502 or 429, a 405 from an endpoint that takes
                // no pings) says nothing of the call's own stream, which breaks by itself
                // when the server dies: counted as silence.
                Ok(Err(e)) => {
                    tracing::debug!(server = %self.label(), error = %e, "a heartbeat ping failed");
                    silent_since.get_or_insert(sent_at);
                    last_failure = Some(self.plain_error(&e));
                }
                Err(_) => {
                    silent_since.get_or_insert(sent_at);
                    last_failure = None;
                }
            }
            if let Some(since) = silent_since
                && left(silent_since).is_zero()
            {
                return reason(since, &last_failure);
            }
        }
    }

    /// How long pings may go unanswered during a call before the server counts as gone:
    /// [`McpOptions::http_silence_limit`] (60 s), or the server's `timeout` or an explicit
    /// `MCP_TOOL_TIMEOUT` when longer (either lifts Claude Code's 60 s limit on HTTP
    /// requests).
    fn heartbeat_give_up(&self) -> Duration {
        let mut limit = self.opts.http_silence_limit;
        if let Some(timeout) = self.config.timeout {
            limit = limit.max(timeout);
        }
        // The default (about 28 hours) is no one's choice: it leaves the limit alone.
        if self.opts.tool_timeout != crate::options::DEFAULT_TOOL_TIMEOUT {
            limit = limit.max(self.opts.tool_timeout);
        }
        limit
    }

    /// `notifications/cancelled` for an abandoned request (best effort: the connection may
    /// be gone).
    async fn send_cancelled(&self, live: &Live, request_id: RequestId, reason: &str) {
        let params = CancelledNotificationParam::new(Some(request_id), Some(reason.to_owned()));
        let _ =
            tokio::time::timeout(Duration::from_secs(2), live.peer.notify_cancelled(params)).await;
    }

    /// The error for a request `method` that failed with `e`, naming what it was about
    /// (`target`: the tool called, the resource read; `None` for a listing, which is about
    /// nothing that could be quoted).
    pub(crate) async fn call_error(
        &self,
        target: Option<&str>,
        method: &str,
        e: ServiceError,
        live: &Live,
    ) -> ToolError {
        let request = match target {
            Some(target) => format!("{method} \"{}\"", tool_core::escape_hidden(target)),
            None => method.to_owned(),
        };
        if let ServiceError::McpError(data) = &e {
            // The server's own text may quote the URL it was reached at, credentials and all.
            return ToolError::msg(format!(
                "{} returned an error for {request}: {} (code {})",
                self.label(),
                self.scrub(data.message.to_string()),
                data.code.0
            ));
        }
        // Anything else is a transport or protocol failure: this connection is not trusted
        // any more, and the next use starts a fresh one. How a stdio server's process ended
        // is read first (the connection's end kills it).
        let (note, end) = tokio::join!(
            self.stderr_note(),
            exit_note(&live.child, self.opts.last_words_wait)
        );
        live.mark_dead();
        let closed_because = lock(&live.child.closed_because).clone();
        let why = match (&e, end, closed_because) {
            // We closed it: why says more than "the connection was closed" alone.
            (ServiceError::TransportClosed, end, Some(reason)) => {
                let end = end.map_or_else(String::new, |end| format!("; {end}"));
                format!("the connection was closed: {reason}{end}")
            }
            // "Transport closed" says less than how the process ended.
            (ServiceError::TransportClosed, Some(end), None) => end,
            (_, Some(end), _) => format!("{}; {end}", self.plain_error(&e)),
            (_, None, _) => self.plain_error(&e),
        };
        // A session the server refused (rmcp may have sent the request again in a new one,
        // or found no new one to send it in): refused before it ran, each time.
        let sent = if crate::http::is_session_refusal(&e) {
            "The server refused the request before it ran"
        } else {
            "The request was not retried (it may or may not have taken effect)"
        };
        // No connection could be made (refused, a DNS or TLS failure): the request never
        // left, so it cannot have run.
        if matches!(self.config.transport, TransportConfig::Http { .. })
            && crate::http::never_sent(&e)
        {
            return ToolError::msg(self.scrub(format!(
                "{} could not be reached for {request} ({why}). The request was not \
                 sent; the server is reconnected on the next use.{note}",
                self.label()
            )));
        }
        // An HTTP server that answered with an error status did not go away: say what it
        // answered (the request may have run before the status was sent).
        if crate::http::answered_with_status(&e) {
            return ToolError::msg(self.scrub(format!(
                "{} answered {request} with an error ({why}). The request was not \
                 retried (it may or may not have taken effect); the server is reconnected on \
                 the next use.{note}",
                self.label()
            )));
        }
        ToolError::msg(self.scrub(format!(
            "{} disconnected during {request} ({why}). {sent}; the server is \
             reconnected on the next use.{note}",
            self.label(),
        )))
    }

    /// Lists the server's resources, within its startup timeout (`MCP_TIMEOUT` or its
    /// `timeout`): a server that never answers must not hang the tool.
    ///
    /// A server that declared no `resources` capability has none, and is not asked (as in
    /// Claude Code: many answer "Method not found", which would tell the model of a failure
    /// where there are only no resources).
    pub(crate) async fn list_resources(self: &Arc<Self>) -> Result<Vec<Value>, ToolError> {
        let live = self.live().await?;
        if !live.declares_resources() {
            return Ok(Vec::new());
        }
        let limit = self.startup_timeout();
        let pages = list_all("resources", |cursor| async {
            let request = rmcp::model::ListResourcesRequest {
                method: Default::default(),
                params: Some(page_params(cursor)),
                extensions: Default::default(),
            };
            match request_cancelled_if_dropped(
                &live.peer,
                ClientRequest::ListResourcesRequest(request),
            )
            .await?
            {
                rmcp::model::ServerResult::ListResourcesResult(page) => {
                    Ok((page.resources, page.next_cursor))
                }
                _ => Err(ListError::Invalid(
                    "its answer is not a resources/list result (an object with a `resources` \
                     list)"
                        .to_owned(),
                )),
            }
        });
        let listed = match tokio::time::timeout(limit, pages).await {
            Err(_) => {
                return Err(ToolError::msg(format!(
                    "{}: resources/list got no answer within {} ms",
                    self.label(),
                    limit.as_millis()
                )));
            }
            Ok(Err(ListError::Service(e))) => {
                return Err(self.call_error(None, "resources/list", e, &live).await);
            }
            Ok(Err(ListError::Invalid(why))) => {
                return Err(ToolError::msg(format!(
                    "{}: resources/list failed: {why}",
                    self.label()
                )));
            }
            Ok(Ok(listed)) => listed,
        };
        Ok(listed
            .iter()
            .filter_map(|r| serde_json::to_value(r).ok())
            .collect())
    }

    pub(crate) async fn read_resource(
        self: &Arc<Self>,
        uri: &str,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<Value, ToolError> {
        let live = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ToolError::Cancelled(None)),
            live = self.live() => live?,
        };
        // A server that declared no resources is not asked to read one: this is Claude
        // Code's answer, where the server's own would be "Method not found".
        if !live.declares_resources() {
            return Err(ToolError::msg(format!(
                "{} does not support resources",
                self.label()
            )));
        }
        // Sent as tools/call is, so that an abandoned read is cancelled with its reason (and
        // never served from rmcp's response cache).
        let request = ClientRequest::ReadResourceRequest(rmcp::model::ReadResourceRequest::new(
            ReadResourceRequestParams::new(uri),
        ));
        // Its progress counts as a word from the server, as a tool call's does.
        let (route, options) = self.open_route(ProgressSender::none(), uri);
        let handle = match live.peer.send_request_with_option(request, options).await {
            Ok(handle) => handle,
            Err(e) => return Err(self.call_error(Some(uri), "resources/read", e, &live).await),
        };
        // Waited for as a tool call is: given up after the idle limit without a word, when
        // an HTTP server stops answering pings, on cancellation, or at the call timeout.
        let outcome = self
            .await_answer(&live, handle, "resources/read", uri, &route, cancel)
            .await?;
        // The URI as messages quote it from here on.
        let uri = tool_core::escape_hidden(uri);
        match outcome {
            rmcp::model::ServerResult::ReadResourceResult(result) => {
                let value =
                    serde_json::to_value(&result).map_err(|e| ToolError::msg(e.to_string()))?;
                if holds_too_deep(&value) {
                    return Err(ToolError::msg(format!(
                        "{}: the contents of resource \"{uri}\" {}",
                        self.label(),
                        too_deep_text()
                    )));
                }
                Ok(value)
            }
            rmcp::model::ServerResult::InputRequiredResult(_) => Err(ToolError::msg(format!(
                "{}: resources/read \"{uri}\" returned an unsupported result (input-required \
                     rounds are not supported)",
                self.label()
            ))),
            _ => Err(ToolError::msg(format!(
                "{}: resources/read \"{uri}\" returned a malformed result (expected an object \
                 with a `contents` list)",
                self.label()
            ))),
        }
    }

    /// Closes the connection for good: the child process ends.
    pub(crate) async fn shutdown(&self) {
        self.shut_down.store(true, Ordering::SeqCst);
        let live = lock(&self.live).take();
        if let Some(live) = live {
            live.close().await;
        }
        self.tools
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Closes the connection for good within `grace` (see [`Live::terminate`]): for a host
    /// that is being stopped.
    pub(crate) async fn terminate(&self, grace: Duration) {
        self.shut_down.store(true, Ordering::SeqCst);
        let live = lock(&self.live).take();
        if let Some(live) = live {
            live.terminate(grace).await;
        }
        self.tools
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Synchronous shutdown for `Drop`: the connection task is cancelled and the child
    /// killed (`kill_on_drop`) without waiting.
    pub(crate) fn shutdown_now(&self) {
        self.shut_down.store(true, Ordering::SeqCst);
        let live = lock(&self.live).take();
        if let Some(live) = live {
            drop(lock(&live.service).take());
            kill_child(&live.child);
        }
        self.tools
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

/// Most pages one listing follows: a server whose cursors never end is cut off here (well
/// within the listing's timeout) rather than growing the list until the timeout.
const MAX_LIST_PAGES: usize = 1_000;
/// Most items one listing keeps (Claude Code's largest known tool sets are a few thousand).
const MAX_LIST_ITEMS: usize = 100_000;
/// Most bytes (as JSON) one listing keeps.
const MAX_LIST_BYTES: u64 = 128 * 1024 * 1024;

/// Why a paged listing failed.
#[derive(Debug)]
enum ListError {
    /// A page's request failed.
    Service(ServiceError),
    /// The server's answer went wrong: a page that is no listing, a repeated cursor, or too
    /// many pages, items or bytes.
    Invalid(String),
}

impl std::fmt::Display for ListError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Service(e) => e.fmt(f),
            Self::Invalid(why) => f.write_str(why),
        }
    }
}

impl From<ServiceError> for ListError {
    fn from(e: ServiceError) -> Self {
        Self::Service(e)
    }
}

/// Sends `request` and waits for its answer; if the wait is given up (a listing's timeout,
/// the user's cancellation), the server is told with `notifications/cancelled` rather than
/// left working on a request no one reads, as the MCP specification asks of a client.
async fn request_cancelled_if_dropped(
    peer: &Peer<RoleClient>,
    request: ClientRequest,
) -> Result<rmcp::model::ServerResult, ServiceError> {
    /// Sends the cancellation when dropped while still armed.
    struct CancelOnDrop {
        peer: Peer<RoleClient>,
        id: Option<RequestId>,
    }
    impl Drop for CancelOnDrop {
        fn drop(&mut self) {
            let Some(id) = self.id.take() else { return };
            let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                return;
            };
            let peer = self.peer.clone();
            runtime.spawn(async move {
                let params =
                    CancelledNotificationParam::new(Some(id), Some("abandoned".to_owned()));
                let _ = tokio::time::timeout(Duration::from_secs(2), peer.notify_cancelled(params))
                    .await;
            });
        }
    }
    let handle = peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await?;
    let mut guard = CancelOnDrop {
        peer: peer.clone(),
        id: Some(handle.id.clone()),
    };
    let answer = handle.await_response().await;
    guard.id = None;
    answer
}

/// The tools of one `tools/list` page as JSON, as the server sent them, and its next
/// cursor (one that is not a string fails the listing). A tool definition rmcp cannot read (a
/// string `readOnlyHint`, no `inputSchema`)
/// makes the page a custom result: its tools are then taken one by one, for
/// [`tool_problem`] to leave a bad one out instead of failing the whole server.
fn tools_of_page(
    page: rmcp::model::ServerResult,
) -> Result<(Vec<Value>, Option<String>), ListError> {
    let page = match page {
        rmcp::model::ServerResult::ListToolsResult(page) => {
            let tools = page
                .tools
                .iter()
                .filter_map(|t| serde_json::to_value(t).ok())
                .collect();
            return Ok((tools, page.next_cursor));
        }
        rmcp::model::ServerResult::CustomResult(rmcp::model::CustomResult(page)) => page,
        _ => {
            return Err(ListError::Invalid(
                "its answer is not a tools/list result (an object with a `tools` list)".to_owned(),
            ));
        }
    };
    let tools = match page.get("tools") {
        Some(Value::Array(items)) => items.clone(),
        Some(other) => {
            return Err(ListError::Invalid(format!(
                "its answer's `tools` is {}, not a list",
                tool_core::shown_setting(other)
            )));
        }
        None => {
            return Err(ListError::Invalid(format!(
                "its answer ({}) has no `tools` list",
                tool_core::shown_setting(&page)
            )));
        }
    };
    // A cursor of another type cannot be sent back for the next page: the listing fails, as
    // a looping cursor does, rather than ending at this page without a word.
    let next = match page.get("nextCursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(cursor)) => Some(cursor.clone()),
        Some(other) => {
            return Err(ListError::Invalid(format!(
                "its answer's `nextCursor` is {}, not a string, so the next page cannot be \
                 asked for (the list would be incomplete)",
                crate::tool::described(other)
            )));
        }
    };
    Ok((tools, next))
}

/// Why the tool definition `raw` of a listing cannot be offered, if it cannot: no name
/// (MCP requires one; an empty one would be offered as `mcp__server__`, which a rule for
/// the whole server matches, and called as `""`), no `inputSchema` object, a part nested
/// deeper than this client reads, or anything else rmcp cannot read.
fn tool_problem(raw: &Value) -> Option<String> {
    let Value::Object(fields) = raw else {
        return Some(format!(
            "it is {}, not an object",
            tool_core::shown_setting(raw)
        ));
    };
    match fields.get("name") {
        None | Some(Value::Null) => return Some("it has no name".to_owned()),
        Some(Value::String(name)) if name.trim().is_empty() => {
            return Some("it has no name".to_owned());
        }
        Some(Value::String(_)) => {}
        Some(other) => {
            return Some(format!(
                "its name is {}, not a string",
                tool_core::shown_setting(other)
            ));
        }
    }
    if holds_too_deep(raw) {
        return Some(format!("its definition {}", too_deep_text()));
    }
    match fields.get("inputSchema") {
        None => return Some("it has no `inputSchema`".to_owned()),
        Some(Value::Object(_)) => {}
        Some(other) => {
            return Some(format!(
                "its `inputSchema` is {}, not an object",
                tool_core::shown_setting(other)
            ));
        }
    }
    // Checked as rmcp reads it, kept as the server sent it.
    <rmcp::model::Tool as serde::Deserialize>::deserialize(raw)
        .err()
        .map(|e| format!("its definition is not valid ({e})"))
}

/// A tool of a listing as messages name it: `"name"`, or by its place in the listing
/// (`#3`, from 1) when it has no name to go by.
fn tool_label(raw: &Value, at: usize) -> String {
    match raw.get("name").and_then(Value::as_str) {
        Some(name) if !name.trim().is_empty() => format!("{name:?}"),
        _ => format!("#{}", at + 1),
    }
}

fn page_params(cursor: Option<String>) -> rmcp::model::PaginatedRequestParams {
    rmcp::model::PaginatedRequestParams::default().with_cursor(cursor)
}

/// The protocol version a server answered `initialize` with, when it is none this client
/// knows.
fn unsupported_version(live: &Live) -> Option<String> {
    let info = live.peer.peer_info()?;
    let known = rmcp::model::ProtocolVersion::KNOWN_VERSIONS.contains(&info.protocol_version);
    (!known).then(|| info.protocol_version.as_str().to_owned())
}

/// Follows a listing's `nextCursor`s to the end. Unlike rmcp's `list_all_*`, a cursor the
/// server already sent is a loop and ends the listing with an error, and the pages, items
/// and bytes kept are bounded (`MAX_LIST_*`).
async fn list_all<T, F, Fut>(what: &str, mut page: F) -> Result<Vec<T>, ListError>
where
    T: serde::Serialize,
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), ListError>>,
{
    let mut items = Vec::new();
    let mut bytes = 0_u64;
    let mut seen = std::collections::HashSet::new();
    let mut cursor = None;
    for _ in 0..MAX_LIST_PAGES {
        let (page_items, next) = page(cursor).await?;
        for item in &page_items {
            bytes += json_len(item);
        }
        items.extend(page_items);
        if items.len() > MAX_LIST_ITEMS || bytes > MAX_LIST_BYTES {
            return Err(ListError::Invalid(format!(
                "the server listed more than {MAX_LIST_ITEMS} {what} or {} MiB of them",
                MAX_LIST_BYTES / (1024 * 1024)
            )));
        }
        match next {
            // An empty cursor ends the listing too, as the TypeScript SDK's loops read it
            // (servers send `""` for "no more pages").
            None => return Ok(items),
            Some(next) if next.is_empty() => return Ok(items),
            Some(next) if !seen.insert(next.clone()) => {
                return Err(ListError::Invalid(format!(
                    "the server sent the cursor {:?} twice (its paging loops)",
                    tool_core::truncate_middle(&next, 80)
                )));
            }
            Some(next) => cursor = Some(next),
        }
    }
    Err(ListError::Invalid(format!(
        "the server's {what} did not end within {MAX_LIST_PAGES} pages"
    )))
}

/// The length of `value` as JSON, without building the text.
fn json_len(value: &impl serde::Serialize) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// Resumes a broken SSE stream at most 3 times (0.25 s, 0.5 s, 1 s apart).
#[derive(Debug)]
struct BoundedSseRetry;

impl SseRetryPolicy for BoundedSseRetry {
    fn retry(&self, current_times: usize) -> Option<Duration> {
        (current_times < 3).then(|| Duration::from_millis(250 << current_times))
    }
}

/// An open progress route ([`ServerConn::open_route`]), closed when dropped.
struct RouteGuard {
    routes: ProgressRoutes,
    token: String,
    /// Told of every notification of the request.
    activity: Arc<tokio::sync::Notify>,
}

/// Counts a server request the host is answering ([`ServerConn::asking_host`]) while it
/// lives. Its end counts as a word from the server for every call in progress, so their
/// idle time starts again from the answer.
struct AskingHost(Option<Arc<ServerConn>>);

impl AskingHost {
    fn new(conn: &Weak<ServerConn>) -> Self {
        let conn = conn.upgrade();
        if let Some(conn) = &conn {
            conn.asking_host.fetch_add(1, Ordering::SeqCst);
        }
        Self(conn)
    }
}

impl Drop for AskingHost {
    fn drop(&mut self) {
        if let Some(conn) = &self.0 {
            conn.asking_host.fetch_sub(1, Ordering::SeqCst);
            for route in lock(&conn.routes).values() {
                route.activity.notify_one();
            }
        }
    }
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        lock(&self.routes).remove(&self.token);
    }
}

fn timeout_message(timeout: Duration) -> String {
    format!(
        "the server did not complete initialization within {} (MCP_TIMEOUT or the server's \"timeout\")",
        human_duration(timeout)
    )
}

pub(crate) fn human_duration(d: Duration) -> String {
    if d.as_millis().is_multiple_of(1000) {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection's progress is routed as it is read, in order, before the message read
    /// after it reaches rmcp: a server's last reports and its answer written together (the
    /// answer once lost the race to the last report) are all routed by the time the answer
    /// is received. A request with a route goes out with the route's key as its token, the
    /// key's `_meta` entry left out.
    #[tokio::test]
    async fn progress_is_routed_as_read_before_the_answer() {
        use rmcp::model::{GetMeta as _, JsonRpcMessage};
        use rmcp::transport::Transport as _;
        use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};

        let (client, server) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(client);
        let routes: ProgressRoutes = Arc::default();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = {
            let seen = Arc::clone(&seen);
            Arc::new(move |p: tool_core::ToolProgress| lock(&seen).push(p.data))
        };
        lock(&routes).insert(
            "tw-test".to_owned(),
            ProgressRoute {
                sender: ProgressSender::new("toolu_1", sink),
                tool: "slow".to_owned(),
                activity: Arc::default(),
            },
        );
        let inner = AsyncRwTransport::<RoleClient, _, _>::new(read, write);
        let mut transport = ProgressFirst::new(inner, "srv", &routes);

        let mut request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new("slow"),
        ));
        let meta = request.get_meta_mut();
        meta.insert(ROUTE_META_KEY.to_owned(), json!("tw-test"));
        meta.set_progress_token(ProgressToken(NumberOrString::Number(0)));
        let sent = transport
            .send(JsonRpcMessage::request(request, RequestId::Number(1)))
            .await;
        assert!(sent.is_ok(), "{sent:?}");
        let (server_read, mut server_write) = tokio::io::split(server);
        let mut lines = tokio::io::BufReader::new(server_read).lines();
        let line = lines.next_line().await.ok().flatten().unwrap_or_default();
        let sent: Value = serde_json::from_str(&line).unwrap_or_default();
        assert_eq!(
            sent["params"]["_meta"]["progressToken"], "tw-test",
            "{line}"
        );
        assert!(
            sent["params"]["_meta"].get(ROUTE_META_KEY).is_none(),
            "{line}"
        );

        let mut answer = String::new();
        for n in [3, 4] {
            answer.push_str(&format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":\"tw-test\",\"progress\":{n},\"total\":4}}}}\n"
            ));
        }
        answer.push_str(r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#);
        answer.push('\n');
        let written = server_write.write_all(answer.as_bytes()).await;
        assert!(written.is_ok(), "{written:?}");
        let received = transport.receive().await;
        assert!(
            matches!(&received, Some(JsonRpcMessage::Response(r)) if r.id == RequestId::Number(1)),
            "{received:?}"
        );
        let seen = lock(&seen).clone();
        let progress: Vec<Value> = seen.iter().map(|d| d["progress"].clone()).collect();
        assert_eq!(progress, [json!(3.0), json!(4.0)], "{seen:?}");
        assert_eq!(seen[1]["type"], "mcp_progress");
        assert_eq!(seen[1]["server"], "srv");
        assert_eq!(seen[1]["tool"], "slow");
    }

    /// `line` mended in one piece, and fed in pieces of `step` bytes.
    fn mended(line: &[u8], step: usize) -> (Vec<u8>, bool) {
        let mut mender = LineMender::default();
        let mut out = Vec::new();
        let mut cut = false;
        let mut chunks = line.chunks(step.max(1)).peekable();
        while let Some(chunk) = chunks.next() {
            cut |= mender.mend(chunk, chunks.peek().is_none(), &mut out);
        }
        (out, cut)
    }

    /// The mender gives the same line however the pipe cut it (a character split between
    /// two reads stays that character); bytes that are not UTF-8 become U+FFFD as Node
    /// decodes them (one for each invalid byte, one for a sequence cut short); a value
    /// nested deeper than 100 levels becomes the stand-in, brackets inside strings (and
    /// escaped quotes) not counted; and what comes out is JSON serde_json reads.
    #[test]
    fn lines_are_mended_alike_in_any_pieces() {
        let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let cases: Vec<(Vec<u8>, Vec<u8>, bool)> = vec![
            (
                "{\"t\":\"café 😀 ok\"}".as_bytes().to_vec(),
                "{\"t\":\"café 😀 ok\"}".as_bytes().to_vec(),
                false,
            ),
            (
                b"{\"t\":\"caf\xe9 \xff\xfe \xf0\x9f\x98\"}".to_vec(),
                "{\"t\":\"caf\u{FFFD} \u{FFFD}\u{FFFD} \u{FFFD}\"}"
                    .as_bytes()
                    .to_vec(),
                false,
            ),
            (
                format!("{{\"a\":{},\"b\":\"[[\\\"{{\",\"c\":1}}", nest(99)).into_bytes(),
                format!("{{\"a\":{},\"b\":\"[[\\\"{{\",\"c\":1}}", nest(99)).into_bytes(),
                false,
            ),
            (
                format!("{{\"a\":[{}],\"b\":\"]]\",\"c\":1}}", nest(150)).into_bytes(),
                format!(
                    "{{\"a\":[{}\"{TOO_DEEP}\"{}],\"b\":\"]]\",\"c\":1}}",
                    "[".repeat(98),
                    "]".repeat(98)
                )
                .into_bytes(),
                true,
            ),
        ];
        for (line, want, want_cut) in cases {
            for step in [1, 2, 3, 7, line.len()] {
                let (out, cut) = mended(&line, step);
                assert_eq!(
                    String::from_utf8_lossy(&out),
                    String::from_utf8_lossy(&want),
                    "step {step}"
                );
                assert_eq!(cut, want_cut, "step {step}");
                serde_json::from_slice::<Value>(&out).expect("mended JSON reads");
            }
        }
        // Each line starts afresh: an unclosed string or a deep line does not carry over.
        let mut mender = LineMender::default();
        let mut out = Vec::new();
        assert!(mender.mend(nest(101).as_bytes(), true, &mut out));
        out.clear();
        assert!(!mender.mend(b"{\"a\":[1]}", true, &mut out));
        assert_eq!(out, b"{\"a\":[1]}");
        let value: Value =
            serde_json::from_slice(&mended(format!("{{\"x\":{}}}", nest(300)).as_bytes(), 5).0)
                .unwrap();
        assert!(holds_too_deep(&value));
    }

    /// A value at the depth limit that holds many values too deep (`[[],[],[],…]` at level
    /// 100, `{"k":[],…}`) becomes one stand-in, not one per child: the mended line stays
    /// smaller than the line sent (it was 19 times larger, past the message cap), and still
    /// reads as JSON holding the stand-in, in any pieces.
    #[test]
    fn a_container_at_the_depth_limit_becomes_one_stand_in() {
        let children = 100_000;
        for (open, child, close) in [("[", "[]", "]"), ("{", "\"k\":{}", "}")] {
            let inner = vec![child; children].join(",");
            let line = format!(
                "{{\"a\":{}{open}1,{inner}{close}{},\"b\":2}}",
                "[".repeat(98),
                "]".repeat(98)
            );
            let line = if open == "{" {
                line.replace("{1,", "{\"one\":1,")
            } else {
                line
            };
            for step in [7, 4096, line.len()] {
                let (out, cut) = mended(line.as_bytes(), step);
                assert!(cut, "{open} step {step}");
                assert!(
                    out.len() < line.len() / 100,
                    "{open} step {step}: {} bytes mended from {}",
                    out.len(),
                    line.len()
                );
                let text = String::from_utf8(out).unwrap();
                assert_eq!(text.matches(TOO_DEEP).count(), 1, "{open} step {step}");
                let value: Value = serde_json::from_str(&text).expect("mended JSON reads");
                assert!(holds_too_deep(&value), "{open} step {step}");
                assert_eq!(value["b"], 2, "{open} step {step}");
            }
        }
    }

    /// The message cap counts a line as it is handed on, mended: a line under the cap
    /// whose bytes that are not UTF-8 each become U+FFFD's three bytes over it is refused
    /// as an over-long line is; one whose mended form fits goes through.
    #[tokio::test]
    async fn the_message_cap_counts_the_mended_line() {
        let mut process = tokio::process::Command::new("true")
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdout = process.stdout.take().unwrap();
        let child: SharedChild = Arc::new(ChildSlot::default());
        let mut guarded = GuardedStdout::new(
            stdout,
            child,
            Arc::new(StderrLog::new(4096, Vec::new())),
            SentIds::default(),
        );
        guarded.limit = 1000;
        let fits = [&b"{\"a\":\""[..], &[0xff; 300], b"\"}\n"].concat();
        guarded.take_in(&fits).unwrap();
        let over = [&b"{\"a\":\""[..], &[0xff; 400], b"\"}\n"].concat();
        assert!(over.len() < 1000);
        let err = guarded.take_in(&over).unwrap_err();
        assert!(err.contains("larger than"), "{err}");
        let _ = process.wait().await;
    }

    /// A server that closes its own stdin (a write to it then fails), and exits with a
    /// failure after our end of the pipe is dropped, went away on its own: how it ended is
    /// reported. (Before, the drop was taken for this client closing a running server's
    /// input, and the exit kept quiet; without `/proc`, as on macOS, even a server that had
    /// already exited counted as running.) A server whose input this client closes while it
    /// runs, and that ends with status 0 at the end of its input, is still not reported.
    #[tokio::test]
    async fn an_exit_after_the_server_closed_its_own_input_is_reported() {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
        async fn start(script: &str) -> (SharedChild, RecordingStdin, tokio::process::ChildStdout) {
            let mut cmd = tokio::process::Command::new("sh");
            cmd.args(["-c", script])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .kill_on_drop(true);
            tool_core::process::detach_from_terminal(cmd.as_std_mut());
            let mut process = cmd.spawn().unwrap();
            let (stdin, stdout) = (
                process.stdin.take().unwrap(),
                process.stdout.take().unwrap(),
            );
            let child: SharedChild = Arc::new(ChildSlot {
                process: Mutex::new(Some(process)),
                ..ChildSlot::default()
            });
            let stdin = RecordingStdin {
                inner: stdin,
                sent: SentIds::default(),
                lines: LineSplitter::default(),
                child: child.clone(),
            };
            (child, stdin, stdout)
        }
        let (child, mut stdin, stdout) = start("exec 0<&-; echo closed; sleep 0.5; exit 3").await;
        let mut stdout = tokio::io::BufReader::new(stdout);
        let mut line = String::new();
        stdout.read_line(&mut line).await.unwrap();
        assert_eq!(line, "closed\n");
        let request = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
        let err = stdin.write_all(request).await.unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe, "{err}");
        drop(stdin);
        assert_eq!(
            exit_note(&child, Duration::from_secs(10)).await.as_deref(),
            Some("the server exited with status 3")
        );
        // Ours: the input closed while the server ran, its stdout open.
        let (child, mut stdin, _stdout) = start("cat >/dev/null; exit 0").await;
        stdin.write_all(request).await.unwrap();
        stdin.shutdown().await.unwrap();
        drop(stdin);
        assert_eq!(exit_note(&child, Duration::from_secs(10)).await, None);
        assert!(
            lock(&child.process)
                .as_mut()
                .unwrap()
                .try_wait()
                .unwrap()
                .is_some()
        );
    }

    /// The roots a server is given are file URLs it reads back as the same directory.
    #[test]
    fn roots_are_percent_encoded_file_urls() {
        assert_eq!(
            file_uri(std::path::Path::new("/home/u/app#2 v?%")),
            "file:///home/u/app%232%20v%3F%25"
        );
        assert_eq!(file_uri(std::path::Path::new("/tmp")), "file:///tmp");
    }

    /// The project directory first, then each additional directory once.
    #[test]
    fn roots_are_the_project_then_the_additional_directories_once_each() {
        let mut opts = McpOptions::new("/work/app");
        opts.additional_directories = vec!["/data/x y".into(), "/work/app".into(), "/".into()];
        assert_eq!(
            roots(&opts),
            json!({"roots": [
                {"uri": "file:///work/app", "name": "app"},
                {"uri": "file:///data/x%20y", "name": "x y"},
                {"uri": "file:///", "name": "/"},
            ]})
        );
    }

    #[tokio::test]
    async fn listing_follows_cursors_and_bounds_pages_and_bytes() {
        // Three pages, then the end.
        let listed = list_all("tools", |cursor: Option<String>| async move {
            let n: u32 = cursor.map_or(0, |c| c.parse().unwrap_or(99));
            Ok((vec![n], (n < 2).then(|| (n + 1).to_string())))
        })
        .await
        .unwrap();
        assert_eq!(listed, [0, 1, 2]);
        // An empty cursor is the end (not a cursor to send, then a loop).
        let listed = list_all("tools", |cursor: Option<String>| async move {
            assert_eq!(cursor, None);
            Ok((vec![7], Some(String::new())))
        })
        .await
        .unwrap();
        assert_eq!(listed, [7]);
        // Fresh cursors forever: cut off at the page limit.
        let pages = std::cell::Cell::new(0_usize);
        let endless = list_all("tools", |_| {
            pages.set(pages.get() + 1);
            let n = pages.get();
            async move { Ok((Vec::<u8>::new(), Some(n.to_string()))) }
        })
        .await
        .unwrap_err()
        .to_string();
        assert_eq!(pages.get(), MAX_LIST_PAGES);
        assert!(
            endless.contains("did not end within 1000 pages"),
            "{endless}"
        );
        // Big pages: cut off at the byte limit, long before the page limit.
        let big = "x".repeat(8 * 1024 * 1024);
        pages.set(0);
        let huge = list_all("tools", |_| {
            pages.set(pages.get() + 1);
            let n = pages.get();
            let item = big.clone();
            async move { Ok((vec![item], Some(n.to_string()))) }
        })
        .await
        .unwrap_err()
        .to_string();
        assert_eq!(pages.get(), 16, "{huge}");
        assert!(huge.contains("more than 100000 tools or 128 MiB"), "{huge}");
    }

    #[test]
    fn backoff_doubles_from_one_second_up_to_thirty() {
        let delays: Vec<u64> = (1..=8).map(|n| backoff_delay(n).as_secs()).collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 30, 30, 30]);
        assert_eq!(backoff_delay(u32::MAX), MAX_BACKOFF);
    }

    /// Pings may go unanswered for 60 s, or for longer when the server's `timeout` or an
    /// explicit `MCP_TOOL_TIMEOUT` is longer (spec: HTTP requests time out at 60 s unless
    /// either is over 60000 ms).
    #[test]
    fn the_heartbeat_waits_for_the_longer_of_60_s_and_explicit_timeouts() {
        let give_up = |server: Option<u64>, tool: Option<u64>| {
            let mut config = ServerConfig::http("h", "http://127.0.0.1:9/mcp");
            config.timeout = server.map(Duration::from_secs);
            let mut opts = McpOptions::new("/p");
            if let Some(tool) = tool {
                opts.tool_timeout = Duration::from_secs(tool);
            }
            ServerConn::new(config, Arc::new(opts))
                .heartbeat_give_up()
                .as_secs()
        };
        assert_eq!(give_up(None, None), 60);
        assert_eq!(give_up(Some(90), None), 90);
        assert_eq!(give_up(Some(10), None), 60);
        assert_eq!(give_up(None, Some(120)), 120);
        assert_eq!(give_up(None, Some(30)), 60);
        assert_eq!(give_up(Some(90), Some(120)), 120);
        let env = |name: &str| (name == "MCP_TOOL_TIMEOUT").then(|| "150000".to_owned());
        let opts = McpOptions::from_lookup("/p", &env);
        let conn = ServerConn::new(
            ServerConfig::http("h", "http://127.0.0.1:9/mcp"),
            Arc::new(opts),
        );
        assert_eq!(conn.heartbeat_give_up(), Duration::from_secs(150));
    }

    /// Lines a server logs on stdout are handed on (rmcp skips them) or left out (JSON that
    /// is no JSON-RPC message), even when they open with `[` and quote a JSON-RPC message;
    /// broken JSON that is an object with a `"jsonrpc"` member and may be a response, and a
    /// batch of responses, are protocol errors.
    #[test]
    fn only_broken_json_rpc_objects_and_batches_are_protocol_violations() {
        let sent = SentIds::default();
        let check = |line: &str| examine_line(line.as_bytes(), &sent);
        for log in [
            r#"[DEBUG] recv {"jsonrpc":"2.0","id":3}"#,
            r#"[2026-01-01T00:00:00Z INFO] sent {"jsonrpc": "2.0", "result": {}}"#,
            r#"[notice] "jsonrpc": broken"#,
            r#"{"level": "info", "msg": "saw \"jsonrpc\" in a request"#,
            // A structured log line quoting a message, cut: the message's `"jsonrpc"` is
            // the log's nested value, not the line's own member.
            r#"{"level": "debug", "sent": {"jsonrpc": "2.0", "id": 3, "result": {"#,
            "not json at all",
        ] {
            assert_eq!(check(log), LineVerdict::Pass, "{log}");
        }
        for log in [
            "[]",
            r#"["log", "line"]"#,
            // A structured log line with the words of a response (pino, zap).
            r#"{"level":"error","msg":"upstream fetch failed","id":"req-42","error":"ECONNRESET"}"#,
            r#"{"id": 7, "result": {}}"#,
        ] {
            assert_eq!(check(log), LineVerdict::Skip(None), "{log}");
        }
        // A lone surrogate is read as `JSON.parse` reads it (found by review 36: the
        // connection failed and the server was restarted), handed on mended.
        let cut = r#"{"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "cut \ud83d"}}"#;
        let LineVerdict::Rewrite(mended) = check(cut) else {
            panic!("not mended: {cut}");
        };
        let mended: Value = serde_json::from_slice(&mended).unwrap();
        assert_eq!(mended["params"]["data"], "cut \u{fffd}");
        // A broken notification is left out, said in the server log; nothing waits for it,
        // whatever its params hold (found by code review 36: a nested `"error"` counted).
        for broken in [
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"cut"#,
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":{"error":"x","id":3,"detail":"cut"#,
        ] {
            let LineVerdict::Skip(Some(note)) = check(broken) else {
                panic!("not left out: {broken}");
            };
            assert!(note.contains("not valid JSON"), "{note}");
        }
        for broken in [
            // A response with a lone surrogate and another fault: may be the answer awaited.
            r#"{"result": {"content": [{"type": "text", "text": "cut \ud83d"}]}, "jsonrpc": "2.0", "id": 1,}"#,
            // A method with a result: may be a response as well.
            r#"{"jsonrpc": "2.0", "id": 1, "result": {"method": "x", "#,
            // A server's request (it waits for the answer, and the call for it).
            r#"{"jsonrpc": "2.0", "id": 5, "method": "roots/list", "params": {"x": "cut"#,
            "\u{feff} {\"jsonrpc\" : \"2.0\", \"id\": 1, \"result\": {\"content\": [",
            r#"  {"jsonrpc": "2.0", "id": 1, "result": {"content": ["#,
        ] {
            let LineVerdict::Fail(why) = check(broken) else {
                panic!("not reported: {broken}");
            };
            assert!(why.contains("not valid JSON"), "{why}");
        }
        let LineVerdict::Fail(batch) = check(r#"[{"jsonrpc": "2.0", "id": 1, "result": {}}]"#)
        else {
            panic!("a batch was not reported");
        };
        assert!(batch.contains("batch"), "{batch}");
    }

    /// A response is matched to the request waiting for it: a second one (a duplicate) is
    /// left out with a note, one to an id never sent fails the connection (the call would
    /// wait for its timeout); one that names request 2 as `"2"` is mended, as the
    /// TypeScript SDK matches it.
    /// An error without an id is the error of the one request waiting (mended with its id);
    /// with two waiting it fails the connection with the server's words; with none it is
    /// left out, said in the log. Found by review: rmcp dropped it and the call waited for
    /// the idle limit.
    #[test]
    fn an_idless_error_goes_to_the_one_request_waiting() {
        let idless =
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad\u001b[2J"}}"#;
        let sent = SentIds::default();
        let LineVerdict::Skip(Some(note)) = examine_line(idless, &sent) else {
            panic!("an error about nothing waiting was not left out with a note");
        };
        assert!(
            note.contains("while no request was waiting: bad\\u{1b}[2J (code -32600)"),
            "{note}"
        );
        lock(&sent).ids.insert("7".to_owned());
        let LineVerdict::Rewrite(mended) = examine_line(idless, &sent) else {
            panic!("the error was not given to the request waiting");
        };
        let mended: Value = serde_json::from_slice(&mended).unwrap();
        assert_eq!(mended["id"], 7);
        assert!(lock(&sent).ids.is_empty());
        lock(&sent).ids.insert("8".to_owned());
        lock(&sent).ids.insert("\"x\"".to_owned());
        let LineVerdict::Fail(why) = examine_line(idless, &sent) else {
            panic!("an error for one of two requests was not reported");
        };
        assert!(why.contains("while 2 requests were waiting"), "{why}");
        // A request the client cancelled waits no more (the server need not answer it): the
        // error goes to the one left, and a late answer to the cancelled one is left out.
        lock(&sent).record_cancel("8".to_owned());
        let LineVerdict::Rewrite(mended) = examine_line(idless, &sent) else {
            panic!("the error was not given to the one request still waiting");
        };
        let mended: Value = serde_json::from_slice(&mended).unwrap();
        assert_eq!(mended["id"], "x");
        let LineVerdict::Skip(Some(note)) =
            examine_line(br#"{"jsonrpc":"2.0","id":8,"result":{}}"#, &sent)
        else {
            panic!("a late answer to a cancelled request was not left out");
        };
        assert!(note.contains("after it was cancelled"), "{note}");
        // A request whose id could not be read: said as what it is.
        lock(&sent).unread = 1;
        let LineVerdict::Fail(why) = examine_line(idless, &sent) else {
            panic!("an error for a request of unknown id was not reported");
        };
        assert!(
            why.contains("a request too large to read its id from"),
            "{why}"
        );
    }

    #[test]
    fn responses_are_matched_to_the_requests_waiting_for_them() {
        let sent = SentIds::default();
        lock(&sent).ids.insert("2".to_owned());
        let answer = r#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#;
        assert_eq!(examine_line(answer.as_bytes(), &sent), LineVerdict::Pass);
        let LineVerdict::Skip(Some(note)) = examine_line(answer.as_bytes(), &sent) else {
            panic!("a duplicate was not left out");
        };
        assert!(note.contains("a second response to request 2"), "{note}");
        // One to an id never sent: a request waits for an answer that will not come.
        let LineVerdict::Fail(why) =
            examine_line(br#"{"jsonrpc":"2.0","id":987654,"result":{}}"#, &sent)
        else {
            panic!("a response to an id never sent was not reported");
        };
        assert!(why.contains("987654, which was never sent"), "{why}");

        lock(&sent).ids.insert("3".to_owned());
        let LineVerdict::Rewrite(mended) = examine_line(
            br#"{"jsonrpc":"2.0","id":"3","result":{"content":[]}}"#,
            &sent,
        ) else {
            panic!("a string id was not mended");
        };
        let mended: Value = serde_json::from_slice(&mended).unwrap();
        assert_eq!(mended["id"], 3);
        assert!(lock(&sent).ids.is_empty());
        // Its duplicate is a duplicate, not a response to a request never sent.
        let LineVerdict::Skip(Some(note)) = examine_line(
            br#"{"jsonrpc":"2.0","id":"3","result":{"content":[]}}"#,
            &sent,
        ) else {
            panic!("the duplicate of a string id was not left out");
        };
        assert!(note.contains("a second response to request 3;"), "{note}");

        // `4.0` for request 4, as `Number(id)` reads it: mended, and its duplicate skipped.
        lock(&sent).ids.insert("4".to_owned());
        let float = br#"{"jsonrpc":"2.0","id":4.0,"result":{"content":[]}}"#;
        let LineVerdict::Rewrite(mended) = examine_line(float, &sent) else {
            panic!("a float id was not mended");
        };
        let mended: Value = serde_json::from_slice(&mended).unwrap();
        assert_eq!(mended["id"], 4);
        assert!(matches!(
            examine_line(float, &sent),
            LineVerdict::Skip(Some(_))
        ));
        // One that is no integer names no request.
        let LineVerdict::Fail(why) =
            examine_line(br#"{"jsonrpc":"2.0","id":4.5,"result":{}}"#, &sent)
        else {
            panic!("a fractional id was taken");
        };
        assert!(why.contains("request 4.5, which was never sent"), "{why}");
    }

    /// A server URL's credentials are hidden wherever they stand in a URL, whatever their
    /// length, and elsewhere when they are long enough to be secrets; a short one leaves
    /// the rest of the text alone, and scrubbing again changes nothing.
    #[test]
    fn url_credentials_are_scrubbed_without_mangling_the_text() {
        let opts = Arc::new(McpOptions::new("/p"));
        let scrub = |url: &str, text: &str| {
            ServerConn::new(ServerConfig::http("h", url), opts.clone()).scrub(text.to_owned())
        };
        let cases = [
            (
                "http://127.0.0.1:1/mcp?e",
                "cannot connect to http://127.0.0.1:1/mcp?redacted: connection refused",
                "cannot connect to http://127.0.0.1:1/mcp?redacted: connection refused",
            ),
            (
                "http://127.0.0.1:1/mcp?e",
                "error sending request for url (http://127.0.0.1:1/mcp?e)",
                "error sending request for url (http://127.0.0.1:1/mcp?redacted)",
            ),
            (
                "http://user:o@127.0.0.1:1/mcp",
                "for url (http://user:o@127.0.0.1:1/mcp): connection to host refused",
                "for url (http://redacted@127.0.0.1:1/mcp): connection to host refused",
            ),
            (
                "http://127.0.0.1:1",
                "cannot connect to http://127.0.0.1:1/: connection refused",
                "cannot connect to http://127.0.0.1:1/: connection refused",
            ),
            // A short query followed by more of one (`&`), and a long value alone.
            (
                "http://127.0.0.1:1/mcp?k=abc&x=1",
                "for url (http://127.0.0.1:1/mcp?k=abc&x=1&page=2)",
                "for url (http://127.0.0.1:1/mcp?redacted&page=2)",
            ),
            (
                "http://h.example/mcp?api_key=SECRETKEY1234&v=2",
                "bad api_key SECRETKEY1234",
                "bad api_key …",
            ),
            // The user info as the Basic credentials it is sent as.
            (
                "http://alice:s3cretPassw0rd@h.example/mcp",
                "auth Basic YWxpY2U6czNjcmV0UGFzc3cwcmQ= refused",
                "auth Basic … refused",
            ),
            // Decoded first, as the client sends it: `p@ss:word-long`.
            (
                "http://u:p%40ss%3Aword-long@h.example/mcp",
                "auth Basic dTpwQHNzOndvcmQtbG9uZw== for p@ss:word-long refused",
                "auth Basic … for … refused",
            ),
            // As configured (`ä`) and as parsed (`%C3%A4`).
            (
                "http://u:pä@h.example/mcp",
                "at http://u:pä@h.example/mcp and http://u:p%C3%A4@h.example/mcp/x",
                "at http://redacted@h.example/mcp and http://redacted@h.example/mcp/x",
            ),
            (
                "https://tok:pw-SECRET-1@h.example/mcp?key=SECRET-2",
                "bad password pw-SECRET-1 for key=SECRET-2 at \
                 https://tok:pw-SECRET-1@h.example/other?key=SECRET-2&page=2",
                "bad password … for … at https://redacted@h.example/other?redacted&page=2",
            ),
        ];
        for (url, text, shown) in cases {
            let once = scrub(url, text);
            assert_eq!(once, shown, "{url}");
            assert_eq!(scrub(url, &once), once, "{url}: scrubbed twice");
        }
    }

    #[test]
    fn stderr_log_keeps_the_newest_bytes() {
        let log = StderrLog::new(8, Vec::new());
        log.push(b"0123456789");
        log.push(b"ab");
        assert_eq!(log.text(), "456789ab");
        assert_eq!(log.tail(3), "9ab");
    }

    fn stdio_env(pairs: &[(&str, &str)]) -> TransportConfig {
        TransportConfig::Stdio {
            command: "x".into(),
            args: Vec::new(),
            env: pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        }
    }

    /// Which configured values count as secrets: long ones, short ones with a credential's
    /// name, the token of `Bearer <token>`, and each as JSON quotes it; never `1`, `true`, a
    /// short value with an ordinary name, or a `${VAR}` left unexpanded.
    #[test]
    fn which_configured_values_are_secrets() {
        let secrets = configured_secrets(&stdio_env(&[
            ("DB_PASSWORD", "dbpass-SECRET-42"),
            ("API_PIN_TOKEN", "k9x2"),
            ("DEBUG", "1"),
            ("VERBOSE", "true"),
            ("LOG_LEVEL", "debug"),
            ("SECRET_FLAG", "disabled"),
            ("GH_TOKEN", "${GH_TOKEN}"),
            ("QUOTED_SECRET", "a\"quoted\"secret"),
            ("TINY_KEY", "abc"),
            // Settings, not secrets: no config value is hidden in the server's errors.
            ("HOME", "/home/me/some/long/dir"),
            ("NODE_ENV", "production-cluster-7"),
            ("AWS_REGION", "us-east-1-extended-zone"),
            ("CONFIG", "/etc/server/config.yml"),
            ("STAGE", "production"),
            ("CONN", "postgres://u:longpassword@db/app"),
            ("DB", "Sup3rS3cret!"),
            ("REDIS", "redis://:pw9@h:1"),
            ("GITHUB_TOKEN_ENV", "ghp_tok123"),
        ]));
        for short in ["Sup3rS3cret!", "redis://:pw9@h:1", "ghp_tok123"] {
            assert!(secrets.iter().any(|s| s == short), "{short}: {secrets:?}");
        }
        for expected in [
            "dbpass-SECRET-42",
            "k9x2",
            "a\"quoted\"secret",
            "a\\\"quoted\\\"secret",
        ] {
            assert!(
                secrets.iter().any(|s| s == expected),
                "{expected}: {secrets:?}"
            );
        }
        assert!(
            secrets
                .iter()
                .any(|s| s == "postgres://u:longpassword@db/app"),
            "{secrets:?}"
        );
        for not in [
            "1",
            "true",
            "debug",
            "disabled",
            "${GH_TOKEN}",
            "abc",
            "/home/me/some/long/dir",
            "production-cluster-7",
            "us-east-1-extended-zone",
            "/etc/server/config.yml",
            "production",
        ] {
            assert!(!secrets.iter().any(|s| s == not), "{not}: {secrets:?}");
        }
        let http = TransportConfig::Http {
            url: "http://h/mcp".into(),
            headers: [(
                "Authorization".to_owned(),
                "Bearer tok-0123456789".to_owned(),
            )]
            .into(),
        };
        let secrets = configured_secrets(&http);
        assert!(
            secrets.iter().any(|s| s == "Bearer tok-0123456789"),
            "{secrets:?}"
        );
        assert!(secrets.iter().any(|s| s == "tok-0123456789"), "{secrets:?}");
        assert!(!secrets.iter().any(|s| s == "Bearer"), "{secrets:?}");
        // Longest first.
        assert!(secrets.windows(2).all(|w| w[0].len() >= w[1].len()));
    }

    /// An HTTP server's log notification quoting a configured header's value (as JSON) shows
    /// it redacted.
    #[test]
    fn header_values_are_redacted_in_the_log() {
        let http = TransportConfig::Http {
            url: "http://h/mcp".into(),
            headers: [("X-Api-Key".to_owned(), "hdr\"xapi\"secret".to_owned())].into(),
        };
        let log = StderrLog::new(4096, configured_secrets(&http));
        let quoted = serde_json::to_string(&json!({"key": "hdr\"xapi\"secret"})).unwrap();
        log.push(format!("[notifications/message Info] {quoted}\n").as_bytes());
        let text = log.text();
        assert!(!text.contains("xapi"), "{text}");
        assert!(text.contains(r#"{"key":"[redacted]"}"#), "{text}");
    }

    /// A secret the bounded log cut at its front, or one still being written at its end,
    /// is not shown in part either (a piece of 4 characters or more); one that fits whole
    /// is replaced once, and reading it again changes nothing.
    #[test]
    fn a_secret_cut_at_either_end_of_the_log_is_not_shown_in_part() {
        let secrets = configured_secrets(&stdio_env(&[("DB_PASSWORD", "dbpass-SECRET-42")]));
        let log = StderrLog::new(16, secrets.clone());
        log.push(b"pw=dbpass-SECRET-42\nok\n");
        // It holds "ss-SECRET-42\nok\n": the secret's start was dropped.
        assert_eq!(log.text(), "[redacted]\nok\n");

        let log = StderrLog::new(4096, secrets.clone());
        log.push(b"starting\npassword is dbpass-SEC");
        let text = log.text();
        assert_eq!(text, "starting\npassword is [redacted]");
        // A log never cut keeps its start, even when it looks like a secret's end.
        let log = StderrLog::new(4096, secrets.clone());
        log.push(b"T-42 is fine\n");
        assert_eq!(log.text(), "T-42 is fine\n");
        // Three characters are no secret's piece.
        assert_eq!(redact_log("x dbp", &secrets, false), "x dbp");
        let once = redact_log("a dbpass-SECRET-42 b", &secrets, true);
        assert_eq!(once, "a [redacted] b");
        assert_eq!(redact_log(&once, &secrets, true), once);
    }
}
