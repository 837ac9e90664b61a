//! The stdio transport of [`serve_stdio`](super::serve_stdio): newline-delimited JSON-RPC on
//! a reader and a writer, as rmcp's own, except that what rmcp drops is answered.
//!
//! rmcp's line transport drops three kinds of line without a word to the client (which then
//! waits for ever): a line longer than its limit, a line that is not JSON, and a line that is
//! not UTF-8. This one answers each as JSON-RPC 2.0 says, and carries on with the next line
//! (a last line without its newline, when the input ends, is served as any line before the
//! session ends):
//! - a line that is not JSON (or not UTF-8): `-32700` Parse error, `id: null`, or the
//!   request's id when it can be read all the same (it comes whole before the fault, or the
//!   line is JSON but for its encoding), so that the client's call ends;
//! - JSON that is not a JSON-RPC request (no `method`, a `jsonrpc` other than `"2.0"`, an id
//!   that is neither a string nor a number, a batch): `-32600` Invalid Request, with its id
//!   when it has a usable one;
//! - except that a client that negotiated protocol 2025-03-26, the one MCP version with
//!   JSON-RPC batches (receiving them was a MUST), may send an array: each element goes to
//!   rmcp as a message of its own (one that is not a request is answered as above), and the
//!   answers to its requests go back together as one array, as JSON-RPC 2.0 says (nothing
//!   when it held only notifications and responses; `-32600` for an empty array). A request
//!   of the batch the client cancels is left out of it, and an `initialize` in it is
//!   answered `-32600` (MCP: it "MUST NOT be part of a JSON-RPC batch");
//! - a request whose id is that of a request still in progress (handed to rmcp and not
//!   answered yet; cancelled, while its call is still ending), ids compared as rmcp reads
//!   them (`5.0` and `5e0` are `5`): `-32600` naming the id, at once, and it does not run
//!   (rmcp would run it and drop the first one's answer without a word, or send the
//!   cancelled call's answer in its place);
//! - a line longer than [`MAX_MESSAGE_BYTES`]: `-32600` Invalid Request with the request's id
//!   when it is in the part read (`null` if not), sent as soon as the limit is passed; the
//!   rest of the line is skipped as it arrives, never held in memory.
//!
//! What is never answered, as JSON-RPC wants: a notification (a `method` without an `id`) and
//! a response (a `result` or an `error` without a `method`) that do not parse; they are only
//! reported. Every rejected line is reported to the [notice sink](super::NoticeSink), if any,
//! and as a `tracing` warning. Well-formed messages go to rmcp as they are (a known method
//! with bad params reaches the handler, which answers `-32602`: see
//! [`ToolServer`](super::ToolServer)).
//!
//! Before `initialize` is answered, a notification or a response is dropped (and reported):
//! rmcp would end the session on it, and JSON-RPC answers neither. An `initialize` whose
//! params do not parse gets `-32602` naming what is wrong, and another request (but `ping`,
//! or a 2026-07-28 client's) `-32600` saying that `initialize` comes first: rmcp answers
//! both with the 2026-07-28 `_meta` fields they lack.
//!
//! When it serves a handler wrapped in `Tracked` (as [`serve_stdio`](super::serve_stdio)
//! does), a `notifications/cancelled` for a request in progress is handled here rather than
//! by rmcp: the handler's call is cancelled, and its id stays in use until the call has
//! ended, its answer then dropped (MCP: a cancelled request is not answered). rmcp freed
//! the id at once, while the call was still ending.
//!
//! Writes (rmcp's messages and these answers) go through one task, in the order they were
//! made, a whole line at a time. Once one fails (the client closed its end), the session
//! ends: no answer could reach the client.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet, VecDeque};
use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    ClientNotification, ClientRequest, ErrorData, InitializeResult, ProtocolVersion, RequestId,
    ServerResult,
};
use rmcp::service::{
    NotificationContext, RequestContext, RoleServer, RxJsonRpcMessage, Service, TxJsonRpcMessage,
};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot, watch};

use super::NoticeSink;

/// The longest message read, in bytes (16 MiB, rmcp's own limit): a longer line is answered
/// `-32600` and skipped.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// JSON-RPC's Parse error.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's Invalid Request.
const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;

/// A line to write, and who waits for it to be written.
struct Outgoing {
    bytes: Vec<u8>,
    written: Option<oneshot::Sender<io::Result<()>>>,
}

/// Newline-delimited JSON-RPC on `R` and `W` for an rmcp server, answering the lines rmcp
/// would drop. See the [module docs](self).
pub struct LineTransport<R> {
    read: BufReader<R>,
    /// The line being read (a read cancelled part-way resumes it).
    line: Vec<u8>,
    /// Skipping the rest of a line already answered as too long.
    discarding: bool,
    max: usize,
    /// Lines read, for notices.
    count: u64,
    out: Option<mpsc::UnboundedSender<Outgoing>>,
    notices: Option<NoticeSink>,
    /// The session negotiated protocol 2025-03-26, which has JSON-RPC batches.
    batches: bool,
    /// `initialize` was answered. Before, rmcp takes only requests (anything else ends the
    /// session): a notification or a response is dropped here, and reported.
    initialized: bool,
    /// The messages of a batch not yet handed to rmcp.
    queued: VecDeque<RxJsonRpcMessage<RoleServer>>,
    /// The batches some of whose requests are not answered yet.
    open_batches: Vec<Batch>,
    /// Why writing to the client failed, once it did (it closed its end): no answer can
    /// reach it any more, so the session ends.
    broken: watch::Receiver<Option<String>>,
    /// Cancelled when the client's end closes (its input ends, or the output broke).
    closed: Option<tool_core::CancellationToken>,
    /// The ids (as [`id_key`] makes them) of the requests handed to rmcp and not answered
    /// yet: a request reusing one is refused (rmcp would run it and drop the first one's
    /// answer).
    in_flight: HashSet<String>,
    /// The requests the handler serves, when it is wrapped in [`Tracked`]: the client's
    /// cancels are then handled here (see the [module docs](self)).
    requests: Option<Arc<Requests>>,
    /// The ids (as [`id_key`] makes them) of the requests in progress the client cancelled:
    /// their answers are dropped.
    cancelled: HashSet<String>,
    /// Which message (its number, and whether it was a batch) each request in progress came
    /// in, by id (as [`id_key`] makes it): an error answer names it on the notice sink.
    origins: HashMap<String, (u64, bool)>,
}

/// The requests a [`Tracked`] handler is serving, shared with the [`LineTransport`] that
/// feeds it: how the transport cancels a call when the client cancels its request.
#[derive(Debug, Default)]
pub(crate) struct Requests(Mutex<HashMap<String, RequestCancel>>);

/// A request's cancellation: the token of its call (once its handler started), and
/// whether the client cancelled it (maybe before its handler started).
#[derive(Debug, Default)]
struct RequestCancel {
    token: Option<tool_core::CancellationToken>,
    cancelled: bool,
}

impl Requests {
    /// The handler starts on request `id`, with `token` as its call's cancellation:
    /// cancelled at once when the client has already cancelled the request.
    fn started(&self, id: &RequestId, token: &tool_core::CancellationToken) {
        let mut requests = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let request = requests.entry(id_key(id)).or_default();
        if request.cancelled {
            token.cancel();
        }
        request.token = Some(token.clone());
    }

    /// The client cancels request `key` (as [`id_key`] makes it): its call is cancelled,
    /// now or when its handler starts.
    fn cancel(&self, key: &str) {
        let mut requests = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let request = requests.entry(key.to_owned()).or_default();
        request.cancelled = true;
        if let Some(token) = &request.token {
            token.cancel();
        }
    }

    /// Request `key` is over (its answer came): forgotten.
    fn answered(&self, key: &str) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(key);
    }
}

/// A handler served over a [`LineTransport`] given the same [`Requests`]
/// ([`LineTransport::with_requests`]): each request's call gets a cancellation the
/// transport can reach, so that the transport, not rmcp, handles the client's
/// `notifications/cancelled` and keeps the id in use until the call has ended.
pub(crate) struct Tracked<S> {
    inner: S,
    requests: Arc<Requests>,
}

impl<S> Tracked<S> {
    /// `inner`, its requests noted in `requests`.
    pub(crate) fn new(inner: S, requests: Arc<Requests>) -> Self {
        Self { inner, requests }
    }
}

impl<S: Service<RoleServer>> Service<RoleServer> for Tracked<S> {
    async fn handle_request(
        &self,
        request: ClientRequest,
        mut context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        // Still cancelled by rmcp (the session's end), and by the transport.
        let token = context.ct.child_token();
        self.requests.started(&context.id, &token);
        context.ct = token;
        self.inner.handle_request(request, context).await
    }

    async fn handle_notification(
        &self,
        notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.inner.handle_notification(notification, context).await
    }

    fn get_info(&self) -> InitializeResult {
        self.inner.get_info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.inner.supported_protocol_versions()
    }
}

/// A batch waiting for the answers to its requests, to send them as one array.
#[derive(Debug, Default)]
struct Batch {
    /// The ids (as JSON text) of its requests not answered yet.
    waiting: Vec<String>,
    /// The answers so far, in the order they were made.
    answers: Vec<Value>,
}

/// What becomes of a message rmcp sends.
enum Batched {
    /// It is not an answer to a batch's request: written as it is.
    No,
    /// Kept until the rest of its batch is answered.
    Held,
    /// It completed its batch: these answers are written as one array.
    Complete(Vec<Value>),
    /// It answers a request the client cancelled: not sent.
    Dropped,
}

impl<R> std::fmt::Debug for LineTransport<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineTransport")
            .field("max", &self.max)
            .field("count", &self.count)
            .finish_non_exhaustive()
    }
}

/// What one bounded line read gave.
enum LineRead {
    /// A whole line is in `line`.
    Line,
    /// The line passed the limit; what its first part says.
    Oversized(Lead),
    Eof,
    Io(io::Error),
}

/// What a whole line is.
#[derive(Debug)]
enum Decoded {
    /// A message for rmcp.
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// To be answered with this error (code, message, id).
    Reject(i64, String, Option<Value>),
    /// Not answered (a malformed notification or response); why, for the report.
    Ignore(String),
    /// An empty line.
    Blank,
}

impl<R: AsyncRead + Send + Unpin> LineTransport<R> {
    /// Reads messages from `read` and writes to `write` (a task of its own, started now: call
    /// this inside a Tokio runtime).
    pub fn new<W>(read: R, write: W) -> Self
    where
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let (tx, rx) = mpsc::unbounded_channel();
        let (broken_tx, broken) = watch::channel(None);
        tokio::spawn(write_lines(write, rx, broken_tx));
        Self {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            max: MAX_MESSAGE_BYTES,
            count: 0,
            out: Some(tx),
            notices: None,
            batches: false,
            initialized: false,
            queued: VecDeque::new(),
            open_batches: Vec::new(),
            broken,
            closed: None,
            in_flight: HashSet::new(),
            requests: None,
            cancelled: HashSet::new(),
            origins: HashMap::new(),
        }
    }

    /// Handles the client's cancels of requests in progress itself, with `requests`, which
    /// the handler served must note its requests in ([`Tracked`]): the call is cancelled,
    /// and its id stays in use until the call has ended (its answer is not sent). Without
    /// it a cancel goes to rmcp, which frees the id at once.
    pub(crate) fn with_requests(mut self, requests: Arc<Requests>) -> Self {
        self.requests = Some(requests);
        self
    }

    /// Cancels `token` the moment the client's end closes (its input ends, or its output
    /// cannot be written): a host ends the calls in progress with it, which no answer can
    /// reach, rather than wait for them.
    pub fn with_closed_token(mut self, token: tool_core::CancellationToken) -> Self {
        self.closed = Some(token);
        self
    }

    /// Tells, once writing to the client failed (it closed its end of the output), why:
    /// the answers due from then on were lost, which the session's end must say.
    pub(crate) fn output_failure(&self) -> watch::Receiver<Option<String>> {
        self.broken.clone()
    }

    fn close_session(&self) {
        if let Some(token) = &self.closed {
            token.cancel();
        }
    }

    /// Reports every rejected or ignored line (and a read error that ends the session) to
    /// `sink`, as one line of text.
    pub fn with_notices(mut self, sink: NoticeSink) -> Self {
        self.notices = Some(sink);
        self
    }

    /// The longest message read ([`MAX_MESSAGE_BYTES`] by default).
    pub fn with_max_message_bytes(mut self, max: usize) -> Self {
        self.max = max.max(1);
        self
    }

    /// Reports `text` as one line (its line breaks written as `\n`, `\r`: the texts
    /// quote what the client sent).
    fn notice(&self, text: &str) {
        let text = one_line(text);
        tracing::warn!(target: "toolwright::serve", "{text}");
        if let Some(sink) = &self.notices {
            sink(&text);
        }
    }

    /// Reports an error answer the handler (or rmcp) gives to a request: the line that
    /// answers with an error says so, whoever made the answer.
    fn report_error(&self, key: Option<&str>, error: &ErrorData) {
        let code = error.code.0;
        let id = key.unwrap_or("null");
        let text = match key.and_then(|key| self.origins.get(key)) {
            Some((n, false)) => format!("message {n} answered with error {code} (id {id})"),
            Some((n, true)) => {
                format!("message {n} (a batch): an element answered with error {code} (id {id})")
            }
            None => format!("a request answered with error {code} (id {id})"),
        };
        self.notice(&format!("{text}: {}", error.message));
    }

    /// Answers line `self.count` with an error, and reports it.
    fn reject(&self, code: i64, message: &str, id: Option<Value>) {
        let id = id.unwrap_or(Value::Null);
        let mut bytes = error_response(&id, code, message).into_bytes();
        bytes.push(b'\n');
        if let Some(out) = &self.out {
            let _ = out.send(Outgoing {
                bytes,
                written: None,
            });
        }
        self.notice(&format!(
            "message {} answered with error {code} (id {id}): {message}",
            self.count
        ));
    }

    /// Writes `bytes` and a newline, without waiting.
    fn write_line(&self, mut bytes: Vec<u8>) {
        bytes.push(b'\n');
        if let Some(out) = &self.out {
            let _ = out.send(Outgoing {
                bytes,
                written: None,
            });
        }
    }

    /// Takes the elements of batch `elements` (read as line `self.count`): the messages are
    /// queued for rmcp, the others answered in the batch's array (or reported, when they
    /// are not to be answered).
    fn take_batch(&mut self, elements: Vec<Value>) {
        if elements.is_empty() {
            self.reject(
                INVALID_REQUEST,
                "Invalid Request: an empty batch (an empty array)",
                None,
            );
            return;
        }
        let mut batch = Batch::default();
        for element in elements {
            // JSON-RPC's batch holds messages: an array in it is no message (and no batch
            // of its own).
            if element.is_array() {
                let why = "Invalid Request: a batch inside a batch: each element of a batch must be one message (a JSON object), not an array";
                self.notice(&format!(
                    "message {} (a batch): an element answered with error {INVALID_REQUEST} (id null): {why}",
                    self.count
                ));
                let answer = error_response(&Value::Null, INVALID_REQUEST, why);
                batch
                    .answers
                    .push(serde_json::from_str(&answer).unwrap_or_default());
                continue;
            }
            let bytes = serde_json::to_vec(&element).unwrap_or_default();
            match decode(&bytes) {
                Decoded::Message(message) => {
                    if let Some((id, why)) = self.refusal(&message, true) {
                        self.notice(&format!(
                            "message {} (a batch): an element answered with error {INVALID_REQUEST} (id {id}): {why}",
                            self.count
                        ));
                        let answer = error_response(&id, INVALID_REQUEST, &why);
                        batch
                            .answers
                            .push(serde_json::from_str(&answer).unwrap_or_default());
                        continue;
                    }
                    if let RxJsonRpcMessage::<RoleServer>::Request(request) = &*message {
                        batch.waiting.push(id_key(&request.id));
                    }
                    // A cancel of a request of this very batch: no answer comes for it.
                    if let Some(key) = cancelled_key(&message) {
                        batch.waiting.retain(|k| *k != key);
                    }
                    self.cancel_in_batches(&message);
                    if self.take_cancel(&message) {
                        continue;
                    }
                    self.track(&message, true);
                    self.queued.push_back(*message);
                }
                Decoded::Reject(code, message, id) => {
                    let id = id.unwrap_or(Value::Null);
                    self.notice(&format!(
                        "message {} (a batch): an element answered with error {code} (id {id}): {message}",
                        self.count
                    ));
                    let answer = error_response(&id, code, &message);
                    batch
                        .answers
                        .push(serde_json::from_str(&answer).unwrap_or_default());
                }
                Decoded::Ignore(why) => {
                    self.notice(&format!(
                        "message {} (a batch): an element ignored: {why}",
                        self.count
                    ));
                }
                Decoded::Blank => {}
            }
        }
        if !batch.waiting.is_empty() {
            self.open_batches.push(batch);
        } else if !batch.answers.is_empty() {
            self.write_line(serde_json::to_vec(&batch.answers).unwrap_or_default());
        }
    }

    /// Why `message`, about to go to rmcp, is refused with `-32600`, with the id to answer
    /// (`None`: it goes on): a request whose id is that of a request still in progress, and
    /// an `initialize` in a batch (MCP: it "MUST NOT be part of a JSON-RPC batch"). A
    /// second `initialize` alone is the handler's to refuse.
    fn refusal(
        &self,
        message: &RxJsonRpcMessage<RoleServer>,
        in_batch: bool,
    ) -> Option<(Value, String)> {
        let RxJsonRpcMessage::<RoleServer>::Request(request) = message else {
            return None;
        };
        let id = serde_json::to_value(&request.id).unwrap_or(Value::Null);
        if in_batch
            && matches!(
                request.request,
                rmcp::model::ClientRequest::InitializeRequest(_)
            )
        {
            return Some((
                id,
                "Invalid Request: `initialize` must not be part of a JSON-RPC batch (MCP); it comes alone, once per session".to_owned(),
            ));
        }
        if self.in_flight.contains(&id_key(&request.id)) {
            let why = id_in_use(&request.id);
            return Some((id, why));
        }
        None
    }

    /// Notes a request handed to rmcp as in progress until it is answered, and which
    /// message (a batch or not) it came in.
    fn track(&mut self, message: &RxJsonRpcMessage<RoleServer>, in_batch: bool) {
        if let RxJsonRpcMessage::<RoleServer>::Request(request) = message {
            let key = id_key(&request.id);
            self.origins.insert(key.clone(), (self.count, in_batch));
            self.in_flight.insert(key);
        }
    }

    /// Takes the client's cancel of a request in progress, when `message` is one: with
    /// [`Self::with_requests`], the call is cancelled here and its id stays in use until
    /// its answer, which is dropped (`true`: the message is not for rmcp); without, the id
    /// is freed and rmcp cancels the call (it sends no answer for it).
    fn take_cancel(&mut self, message: &RxJsonRpcMessage<RoleServer>) -> bool {
        let Some(key) = cancelled_key(message) else {
            return false;
        };
        if !self.in_flight.contains(&key) {
            // Over already (or never seen): rmcp ignores it, and the handler hears of it.
            return false;
        }
        match &self.requests {
            Some(requests) => {
                requests.cancel(&key);
                self.cancelled.insert(key);
                true
            }
            None => {
                self.in_flight.remove(&key);
                false
            }
        }
    }

    /// When `message` cancels a request of an open batch, the batch no longer waits for its
    /// answer (none comes): it is sent without it once the rest is there.
    fn cancel_in_batches(&mut self, message: &RxJsonRpcMessage<RoleServer>) {
        if self.open_batches.is_empty() {
            return;
        }
        let Some(key) = cancelled_key(message) else {
            return;
        };
        let mut complete = Vec::new();
        self.open_batches.retain_mut(|batch| {
            batch.waiting.retain(|k| *k != key);
            if batch.waiting.is_empty() {
                complete.push(std::mem::take(&mut batch.answers));
                return false;
            }
            true
        });
        for answers in complete.into_iter().filter(|a| !a.is_empty()) {
            self.write_line(serde_json::to_vec(&answers).unwrap_or_default());
        }
    }

    /// Whether `item`, which rmcp sends, answers a request of an open batch, and so waits for
    /// the rest of it; notes the protocol version `initialize` agreed on.
    fn batched(&mut self, item: &TxJsonRpcMessage<RoleServer>) -> Batched {
        let id = match item {
            TxJsonRpcMessage::<RoleServer>::Response(response) => {
                if let ServerResult::InitializeResult(init) = &response.result {
                    self.batches = init.protocol_version == ProtocolVersion::V_2025_03_26;
                    self.initialized = true;
                }
                &response.id
            }
            TxJsonRpcMessage::<RoleServer>::Error(error) => match &error.id {
                Some(id) => id,
                None => {
                    self.report_error(None, &error.error);
                    return Batched::No;
                }
            },
            _ => return Batched::No,
        };
        let key = id_key(id);
        self.in_flight.remove(&key);
        if let Some(requests) = &self.requests {
            requests.answered(&key);
        }
        if self.cancelled.remove(&key) {
            self.origins.remove(&key);
            tracing::debug!(target: "toolwright::serve", id = %key, "the answer of a cancelled request is not sent");
            return Batched::Dropped;
        }
        // An error answer (a method not found, bad params, a second `initialize`) is told
        // as the transport's own are.
        if let TxJsonRpcMessage::<RoleServer>::Error(error) = item {
            self.report_error(Some(&key), &error.error);
        }
        self.origins.remove(&key);
        if self.open_batches.is_empty() {
            return Batched::No;
        }
        let Some(at) = self
            .open_batches
            .iter()
            .position(|b| b.waiting.contains(&key))
        else {
            return Batched::No;
        };
        let batch = &mut self.open_batches[at];
        batch.waiting.retain(|k| *k != key);
        batch
            .answers
            .push(serde_json::to_value(item).unwrap_or_default());
        if batch.waiting.is_empty() {
            Batched::Complete(self.open_batches.remove(at).answers)
        } else {
            Batched::Held
        }
    }

    /// Waits until every line queued so far is written (or failed to be).
    fn written(&self) -> impl Future<Output = ()> + Send + 'static {
        let (tx, rx) = oneshot::channel();
        let marker = Outgoing {
            bytes: Vec::new(),
            written: Some(tx),
        };
        let queued = self
            .out
            .as_ref()
            .is_some_and(|out| out.send(marker).is_ok());
        async move {
            if queued {
                let _ = rx.await;
            }
        }
    }

    /// Reads one `\n`-terminated line into `self.line`, never holding more than `self.max`
    /// bytes of it; at the end of the input, a last line without its `\n` is a line too (the
    /// next read is then the end). Cancellation-safe: what was read stays in `self.line` (or
    /// the skipping goes on) for the next call.
    async fn read_line(&mut self) -> LineRead {
        loop {
            let (consumed, done) = {
                let available = match self.read.fill_buf().await {
                    Ok(available) => available,
                    Err(e) => return LineRead::Io(e),
                };
                if available.is_empty() {
                    // What is held is never a skipped line's (that one was answered when it
                    // passed the limit, and nothing of it is held).
                    if !self.line.is_empty() {
                        return LineRead::Line;
                    }
                    return LineRead::Eof;
                }
                let newline = available.iter().position(|b| *b == b'\n');
                let take = newline.map_or(available.len(), |i| i + 1);
                if self.discarding {
                    if newline.is_some() {
                        self.discarding = false;
                    }
                    (take, None)
                } else if self.line.len() + take > self.max {
                    // Fill up to the limit, look for the id in what is held, and drop it.
                    let room = self.max - self.line.len();
                    self.line.extend_from_slice(&available[..room]);
                    let lead = lead(&self.line);
                    self.line = Vec::new();
                    self.discarding = newline.is_none();
                    (take, Some(LineRead::Oversized(lead)))
                } else {
                    self.line.extend_from_slice(&available[..take]);
                    (take, newline.map(|_| LineRead::Line))
                }
            };
            self.read.consume(consumed);
            if let Some(done) = done {
                return done;
            }
        }
    }
}

impl<R: AsyncRead + Send + Unpin> Transport<RoleServer> for LineTransport<R> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = self.out.clone();
        let bytes = match self.batched(&item) {
            Batched::No => serde_json::to_vec(&item).map(Some),
            Batched::Held | Batched::Dropped => Ok(None),
            Batched::Complete(answers) => serde_json::to_vec(&answers).map(Some),
        };
        async move {
            let Some(mut bytes) = bytes.map_err(io::Error::other)? else {
                return Ok(());
            };
            bytes.push(b'\n');
            let closed = || io::Error::new(io::ErrorKind::NotConnected, "the transport is closed");
            let out = out.ok_or_else(closed)?;
            let (tx, rx) = oneshot::channel();
            out.send(Outgoing {
                bytes,
                written: Some(tx),
            })
            .map_err(|_| closed())?;
            rx.await.map_err(|_| closed())?
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if let Some(message) = self.queued.pop_front() {
                return Some(message);
            }
            // A client that stopped reading gets no more answers: the session ends rather
            // than run calls whose results go nowhere.
            let mut broken = self.broken.clone();
            let read = tokio::select! {
                read = self.read_line() => read,
                Ok(why) = broken.wait_for(Option::is_some) => {
                    let why = why.clone().unwrap_or_default();
                    self.notice(&format!("cannot write to the client ({why}): the session ends"));
                    self.close_session();
                    return None;
                }
            };
            match read {
                LineRead::Line => {}
                LineRead::Oversized(lead) => {
                    self.count += 1;
                    let message = format!(
                        "Invalid Request: the message is longer than {} bytes, the most this server reads",
                        self.max
                    );
                    if lead.response {
                        self.notice(&format!(
                            "message {} ignored: a response longer than {} bytes",
                            self.count, self.max
                        ));
                    } else {
                        self.reject(INVALID_REQUEST, &message, lead.request_id());
                    }
                    continue;
                }
                // The answers already made are written before the session (and maybe the
                // process) ends. (A last line without its newline was read as a line.)
                LineRead::Eof => {
                    self.close_session();
                    self.written().await;
                    return None;
                }
                LineRead::Io(e) => {
                    self.notice(&format!("cannot read the client's messages: {e}"));
                    self.close_session();
                    self.written().await;
                    return None;
                }
            }
            let line = std::mem::take(&mut self.line);
            if self.batches
                && let Some(elements) = batch_elements(&line)
            {
                self.count += 1;
                self.take_batch(elements);
                continue;
            }
            let decoded = decode(&line);
            if !matches!(decoded, Decoded::Blank) {
                self.count += 1;
            }
            match decoded {
                Decoded::Message(message) => {
                    if !self.initialized {
                        if !matches!(*message, RxJsonRpcMessage::<RoleServer>::Request(_)) {
                            self.notice(&format!(
                                "message {} ignored: a notification or response before `initialize`",
                                self.count
                            ));
                            continue;
                        }
                        // rmcp answers a request it cannot take before `initialize` with
                        // what the 2026-07-28 `_meta` lacks, which an older client never
                        // sends: such a client is told what is wrong instead.
                        if let RxJsonRpcMessage::<RoleServer>::Request(request) = &*message
                            && let Some((code, why)) = before_initialize(&request.request, &line)
                        {
                            let id = serde_json::to_value(&request.id).ok();
                            self.reject(code, &why, id);
                            continue;
                        }
                        // A 2026-07-28 client sends no `initialize`: each request names its
                        // version. From its first request on, its notifications are read
                        // (`notifications/cancelled` is its only way to cancel over stdio).
                        if names_a_stateless_version(&line) {
                            self.initialized = true;
                        }
                    }
                    if let Some((id, why)) = self.refusal(&message, false) {
                        self.reject(INVALID_REQUEST, &why, Some(id));
                        continue;
                    }
                    self.cancel_in_batches(&message);
                    if self.take_cancel(&message) {
                        continue;
                    }
                    self.track(&message, false);
                    return Some(*message);
                }
                Decoded::Reject(code, message, id) => self.reject(code, &message, id),
                Decoded::Ignore(why) => {
                    self.notice(&format!("message {} ignored: {why}", self.count));
                }
                Decoded::Blank => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // The writer ends (flushing) once the sends still in flight are done.
        self.out = None;
        Ok(())
    }
}

/// Writes the lines of `rx` to `write` in order, flushing each, until every sender is gone;
/// the first write that fails is told to `broken`.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut write: W,
    mut rx: mpsc::UnboundedReceiver<Outgoing>,
    broken: watch::Sender<Option<String>>,
) {
    // Once a write failed, the rest fail with the same error.
    let mut failed: Option<(io::ErrorKind, String)> = None;
    let mut queue = VecDeque::new();
    while let Some(first) = rx.recv().await {
        queue.push_back(first);
        while let Ok(more) = rx.try_recv() {
            queue.push_back(more);
        }
        while let Some(out) = queue.pop_front() {
            let result = match &failed {
                Some((kind, text)) => Err(io::Error::new(*kind, text.clone())),
                None => async {
                    write.write_all(&out.bytes).await?;
                    write.flush().await
                }
                .await
                .inspect_err(|e| {
                    failed = Some((e.kind(), e.to_string()));
                    let _ = broken.send(Some(e.to_string()));
                }),
            };
            if let Some(written) = out.written {
                let _ = written.send(result);
            }
        }
    }
    let _ = write.shutdown().await;
}

/// The error for `request` (read from `line`) when it comes before `initialize` and is
/// neither a valid `initialize`, a `ping`, nor a request of a 2026-07-28 client (whose
/// `_meta` names an `io.modelcontextprotocol/` field: rmcp's answer about the fields it lacks
/// is the right one then): an `initialize` whose params do not parse gets `-32602` saying
/// why, another request `-32600` saying that `initialize` comes first.
fn before_initialize(request: &rmcp::model::ClientRequest, line: &[u8]) -> Option<(i64, String)> {
    use rmcp::model::ClientRequest;
    if matches!(
        request,
        ClientRequest::InitializeRequest(_) | ClientRequest::PingRequest(_)
    ) {
        return None;
    }
    let value: Value = serde_json::from_slice(line).ok()?;
    let stateless = value["params"]["_meta"].as_object().is_some_and(|meta| {
        meta.keys()
            .any(|k| k.starts_with("io.modelcontextprotocol/"))
    });
    if stateless {
        return None;
    }
    Some(match initialize_problem(&value) {
        Some(why) => (INVALID_PARAMS, why),
        None => (
            INVALID_REQUEST,
            format!(
                "Invalid Request: {} before `initialize`: send `initialize` first (a client on protocol 2026-07-28 or later, which has no `initialize`, names io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities in every request's `_meta`)",
                value["method"].as_str().unwrap_or("a request")
            ),
        ),
    })
}

/// For an `initialize` request (as JSON) whose params do not parse, why: `Invalid params
/// for initialize: missing field `clientInfo``. `None` for other messages, and for an
/// `initialize` that parses.
pub(crate) fn initialize_problem(request: &Value) -> Option<String> {
    if request["method"] != "initialize" {
        return None;
    }
    let params = request.get("params").cloned().unwrap_or(Value::Null);
    let why = match serde_json::from_value::<rmcp::model::InitializeRequestParams>(params) {
        Ok(_) => return None,
        Err(_) if request.get("params").is_none_or(Value::is_null) => "no params".to_owned(),
        Err(e) => e.to_string(),
    };
    Some(format!(
        "Invalid params for initialize: {why} (it takes protocolVersion, capabilities and clientInfo)"
    ))
}

/// What `line` (one line as read, with its newline) is.
/// Whether the request `line` names, in its `_meta`, a protocol version without
/// `initialize` (2026-07-28 on).
fn names_a_stateless_version(line: &[u8]) -> bool {
    serde_json::from_slice::<Value>(line).is_ok_and(|request| {
        request["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
            .as_str()
            .is_some_and(|v| v >= super::ask::FIRST_STATELESS_VERSION)
    })
}

fn decode(line: &[u8]) -> Decoded {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Decoded::Blank;
    }
    let text = match std::str::from_utf8(line) {
        Ok(text) => text,
        Err(e) => {
            // JSON is UTF-8: this is a parse error, but the id may still be readable.
            let lead = match serde_json::from_str::<Value>(&String::from_utf8_lossy(line)) {
                Ok(value) => Lead {
                    id: usable_id(&value),
                    method: value.get("method").is_some(),
                    response: value.get("result").is_some() || value.get("error").is_some(),
                },
                Err(_) => lead(line),
            };
            if lead.response {
                return Decoded::Ignore(format!(
                    "a response that is not valid UTF-8 (byte {})",
                    e.valid_up_to()
                ));
            }
            let id = lead.request_id();
            return Decoded::Reject(
                PARSE_ERROR,
                format!(
                    "Parse error: the message is not valid UTF-8 (byte {})",
                    e.valid_up_to()
                ),
                id,
            );
        }
    };
    // rmcp reads a `tools/list` whose `cursor` is not a string as one without params (every
    // tool again); no cursor is valid here, and that one is not even a cursor.
    if text.contains("\"cursor\"")
        && let Ok(value) = serde_json::from_str::<Value>(text)
        && value["jsonrpc"] == "2.0"
        && value["method"] == "tools/list"
        && value["params"]
            .get("cursor")
            .is_some_and(|c| !c.is_string() && !c.is_null())
        && let Some(id) = usable_id(&value)
    {
        return Decoded::Reject(
            INVALID_PARAMS,
            "Invalid params for tools/list: `cursor` must be a string (and this server gives out none: every tool comes in one page)".to_owned(),
            Some(id),
        );
    }
    let error = match serde_json::from_str::<RxJsonRpcMessage<RoleServer>>(text) {
        Ok(message) => return Decoded::Message(Box::new(message)),
        Err(e) => e,
    };
    let value = match serde_json::from_str::<Value>(text) {
        Ok(value) => value,
        // The id, when it comes whole before what does not parse (a lone surrogate escape
        // further on), lets the client end its call.
        Err(e) => {
            let lead = lead(line);
            if lead.response {
                return Decoded::Ignore(format!("a response that does not parse: {e}"));
            }
            return Decoded::Reject(PARSE_ERROR, format!("Parse error: {e}"), lead.request_id());
        }
    };
    let Some(object) = value.as_object() else {
        let what = if value.is_array() {
            "a batch (an array), which MCP has only on protocol 2025-03-26: send one message at a time"
        } else {
            "not a JSON object"
        };
        return Decoded::Reject(INVALID_REQUEST, format!("Invalid Request: {what}"), None);
    };
    let id = usable_id(&value);
    let has_method = object.contains_key("method");
    if has_method && !object.contains_key("id") {
        return Decoded::Ignore(format!("a notification that is not valid: {error}"));
    }
    if !has_method && (object.contains_key("result") || object.contains_key("error")) {
        return Decoded::Ignore(format!("a response that is not valid: {error}"));
    }
    // A method this server serves with `params` that are not an object (positional, an
    // array): the request is understood, its params are not (MCP's methods take named ones).
    let served = matches!(
        object.get("method").and_then(Value::as_str),
        Some("tools/call" | "tools/list" | "ping" | "initialize")
    );
    if served
        && id.is_some()
        && object.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && object
            .get("params")
            .is_some_and(|p| !p.is_object() && !p.is_null())
    {
        return Decoded::Reject(
            INVALID_PARAMS,
            format!(
                "Invalid params for {}: `params` must be an object (MCP's methods take named params)",
                object["method"].as_str().unwrap_or_default()
            ),
            id,
        );
    }
    let why = if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        "`jsonrpc` must be \"2.0\"".to_owned()
    } else if !has_method {
        "no `method`".to_owned()
    } else if !object["method"].is_string() {
        "`method` must be a string".to_owned()
    } else if id.is_none() {
        "`id` must be a string or an integer (a whole number from -9223372036854775808 to 9223372036854775807); this one is not, so the answer's id is null".to_owned()
    } else {
        error.to_string()
    };
    Decoded::Reject(INVALID_REQUEST, format!("Invalid Request: {why}"), id)
}

/// The elements of `line` when it is a JSON array (a JSON-RPC batch).
fn batch_elements(line: &[u8]) -> Option<Vec<Value>> {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let start = line.iter().position(|b| !b.is_ascii_whitespace())?;
    if line[start] != b'[' {
        return None;
    }
    match serde_json::from_slice::<Value>(line).ok()? {
        Value::Array(elements) => Some(elements),
        _ => None,
    }
}

/// A request id as rmcp reads it, as JSON text (`5`, `"a"`): the one way request ids are
/// compared, over stdio (requests in progress, a batch's answers) and over HTTP (a
/// session's requests in progress). rmcp reads `5.0`, `5e0` and `50e-1` as the number 5,
/// and answers them as `5`: the same id.
pub(crate) fn id_key(id: &RequestId) -> String {
    serde_json::to_string(id).unwrap_or_default()
}

/// `id`, as a request carries it, as rmcp reads it; `None` when rmcp would not take it
/// (neither a string nor a number that is a whole one).
pub(crate) fn request_id(id: &Value) -> Option<RequestId> {
    serde_json::from_value(id.clone()).ok()
}

/// Why a request whose id (`id`, as rmcp reads it) is that of a request still in progress
/// is refused.
pub(crate) fn id_in_use(id: &RequestId) -> String {
    format!(
        "Invalid Request: request id {} is already in use by a request still in progress; a request's id must differ from those of the requests in progress (this one was not run)",
        id_key(id)
    )
}

/// `text` on one line: line breaks (which a client's method name or id may hold) written
/// as `\n` and `\r`.
fn one_line(text: &str) -> Cow<'_, str> {
    if !text.contains(['\n', '\r']) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.replace('\n', "\\n").replace('\r', "\\r"))
}

/// A JSON-RPC error response, members in the usual order (`jsonrpc`, `id`, `error`).
pub(crate) fn error_response(id: &Value, code: i64, message: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":{}}}}}"#,
        Value::from(message)
    )
}

/// The JSON-RPC error (code and message) for a message, such as an HTTP request's body,
/// that does not deserialize as one for a server: `-32700` when it is not JSON, else
/// `-32600`.
pub(crate) fn rejection(message: &[u8]) -> (i64, String) {
    match decode(message) {
        Decoded::Reject(code, message, _) => (code, message),
        Decoded::Ignore(why) => (INVALID_REQUEST, format!("Invalid Request: {why}")),
        Decoded::Blank => (PARSE_ERROR, "Parse error: the message is empty".to_owned()),
        Decoded::Message(_) => (
            INVALID_REQUEST,
            "Invalid Request: not a message for this server".to_owned(),
        ),
    }
}

/// The `id` of `message` when a response can carry it: a string, or a number rmcp reads as
/// an integer (`5`, `5.0`; not `1.5`, nor one past the 64-bit range, which JSON parsing
/// would change: `18446744073709551616` read as `1.8446744073709552e19`).
pub(crate) fn usable_id(message: &Value) -> Option<Value> {
    message.get("id").filter(|id| is_usable_id(id)).cloned()
}

/// Whether `id` is one a response can carry as it came (see [`usable_id`]).
fn is_usable_id(id: &Value) -> bool {
    (id.is_string() || id.is_number()) && request_id(id).is_some()
}

/// What the members of the JSON object that `text` begins with say, as far as they come
/// whole within `text` (the rest may be cut off, or not parse): scanned without being parsed.
#[derive(Debug, Default, PartialEq)]
struct Lead {
    /// The `id`, when a response can carry it (see [`usable_id`]).
    id: Option<Value>,
    /// A `method` member was seen: a request (or a notification).
    method: bool,
    /// A `result` or `error` member was seen: a response, never to be answered.
    response: bool,
}

impl Lead {
    /// The id to answer with: a request's, when it was read.
    fn request_id(self) -> Option<Value> {
        self.id.filter(|_| self.method && !self.response)
    }
}

fn lead(text: &[u8]) -> Lead {
    let mut lead = Lead::default();
    let mut scan = Scanner {
        text: text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text),
        pos: 0,
    };
    let mut id_seen = false;
    let mut member = |scan: &mut Scanner<'_>, lead: &mut Lead| -> Option<()> {
        scan.space();
        let key = scan.string()?.to_vec();
        scan.space();
        scan.expect(b':')?;
        scan.space();
        // The name says enough, whatever the value (a result may be what is cut off).
        match key.as_slice() {
            b"\"method\"" => lead.method = true,
            b"\"result\"" | b"\"error\"" => lead.response = true,
            _ => {}
        }
        let start = scan.pos;
        scan.value()?;
        if key == b"\"id\"" {
            id_seen = true;
            lead.id = serde_json::from_slice::<Value>(&scan.text[start..scan.pos])
                .ok()
                .filter(is_usable_id);
        }
        // Enough is known.
        if id_seen && (lead.method || lead.response) {
            return None;
        }
        scan.space();
        scan.expect(b',')
    };
    scan.space();
    if scan.expect(b'{').is_some() {
        while member(&mut scan, &mut lead).is_some() {}
    }
    lead
}

/// A forward scan over JSON text that may be cut off: each step is `None` at the cut.
struct Scanner<'a> {
    text: &'a [u8],
    pos: usize,
}

impl Scanner<'_> {
    fn space(&mut self) {
        while self
            .text
            .get(self.pos)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.text.get(self.pos) == Some(&byte)).then(|| self.pos += 1)
    }

    /// A string, quotes included.
    fn string(&mut self) -> Option<&[u8]> {
        let start = self.pos;
        self.expect(b'"')?;
        loop {
            match self.text.get(self.pos)? {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    return self.text.get(start..self.pos);
                }
                _ => self.pos += 1,
            }
        }
    }

    /// Any value, skipped.
    fn value(&mut self) -> Option<()> {
        match self.text.get(self.pos)? {
            b'"' => self.string().map(|_| ()),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.text.get(self.pos)? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.pos += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.pos += 1;
                }
            }
            _ => {
                // A number or a literal: it ends at a delimiter, which must have been read.
                while !matches!(
                    self.text.get(self.pos)?,
                    b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'
                ) {
                    self.pos += 1;
                }
                Some(())
            }
        }
    }
}

/// The key (as [`id_key`] makes it) of the request `message` cancels, when it is a
/// `notifications/cancelled`.
fn cancelled_key(message: &RxJsonRpcMessage<RoleServer>) -> Option<String> {
    let value = serde_json::to_value(message).ok()?;
    (value["method"] == "notifications/cancelled").then(|| value["params"]["requestId"].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_requests_id_is_found_before_the_cut() {
        let cases: [(&[u8], Option<Value>); 10] = [
            (
                br#"{"jsonrpc":"2.0","id":7,"method":"x","params":{"a":"#,
                Some(json!(7)),
            ),
            (br#" { "id" : "a\"b", "method": "x""#, Some(json!("a\"b"))),
            (
                br#"{"params":{"id":1,"s":"}{"},"list":[1,[2]],"id":-3.5e2,"method":"m","#,
                Some(json!(-350.0)),
            ),
            (br#"{"method":"x","params":{"text":"aaaa"#, None),
            (br#"{"jsonrpc":"2.0","id":12"#, None),
            (br#"{"id":null,"method":"x""#, None),
            (br#"{"id":{"a":1},"method":"x""#, None),
            (br#"[{"id":1,"method":"x"}"#, None),
            (
                b"\xEF\xBB\xBF{\"id\":\"b\",\"method\":\"x\",",
                Some(json!("b")),
            ),
            // A response is never answered, whatever its id.
            (br#"{"jsonrpc":"2.0","id":4,"result":{"content":["#, None),
        ];
        for (text, id) in cases {
            assert_eq!(
                lead(text).request_id(),
                id,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        assert!(lead(br#"{"id":4,"error":{"code":1"#).response);
    }

    #[test]
    fn lines_are_decoded_or_rejected_as_json_rpc_says() {
        let reject = |line: &[u8]| match decode(line) {
            Decoded::Reject(code, message, id) => Some((code, message, id)),
            _ => None,
        };
        assert!(matches!(
            decode(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n"),
            Decoded::Message(_)
        ));
        assert!(matches!(decode(b"  \r\n"), Decoded::Blank));
        let (code, _, id) = reject(b"{not json\n").unwrap_or_default();
        assert_eq!((code, id), (PARSE_ERROR, None));
        let (code, _, id) =
            reject(br#"{"jsonrpc":"2.0","id":2,"method":"x","params":{"s":"\ud83d"}}"#)
                .unwrap_or_default();
        assert_eq!((code, id), (PARSE_ERROR, Some(json!(2))));
        let (code, message, id) = reject(
            b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}\n",
        )
        .unwrap_or_default();
        assert_eq!((code, id), (PARSE_ERROR, Some(json!(3))), "{message}");
        assert!(message.contains("UTF-8"), "{message}");
        let (code, message, id) =
            reject(b"{\"jsonrpc\":\"1.0\",\"id\":\"a\",\"method\":\"ping\"}\n").unwrap_or_default();
        assert_eq!((code, id), (INVALID_REQUEST, Some(json!("a"))), "{message}");
        let (code, _, id) = reject(b"{\"jsonrpc\":\"2.0\",\"id\":4}\n").unwrap_or_default();
        assert_eq!((code, id), (INVALID_REQUEST, Some(json!(4))));
        let (code, _, id) = reject(b"[]\n").unwrap_or_default();
        assert_eq!((code, id), (INVALID_REQUEST, None));
        let (code, _, id) = reject(
            b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\",\"params\":{\"cursor\":5}}\n",
        )
        .unwrap_or_default();
        assert_eq!((code, id), (INVALID_PARAMS, Some(json!(6))));
        // Without `"jsonrpc": "2.0"` it is no request at all.
        let (code, _, _) =
            reject(b"{\"id\":7,\"method\":\"tools/list\",\"params\":{\"cursor\":5}}\n")
                .unwrap_or_default();
        assert_eq!(code, INVALID_REQUEST);
        // Positional params for a method this server serves: its params are what is wrong.
        for method in ["ping", "tools/list", "tools/call"] {
            let line = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"{method}\",\"params\":[1]}}\n"
            );
            let (code, message, id) = reject(line.as_bytes()).unwrap_or_default();
            assert_eq!(
                (code, id),
                (INVALID_PARAMS, Some(json!(5))),
                "{method}: {message}"
            );
            assert!(message.contains("`params` must be an object"), "{message}");
        }
        let (code, _, id) =
            reject(b"{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}\n").unwrap_or_default();
        assert_eq!((code, id), (INVALID_REQUEST, None));
        // Never answered: a notification and a response, even malformed.
        assert!(matches!(
            decode(br#"{"jsonrpc":"2.0","id":2,"result":{"s":"\ud83d"}}"#),
            Decoded::Ignore(_)
        ));
        assert!(matches!(
            decode(b"{\"jsonrpc\":\"1.0\",\"method\":\"notifications/x\"}\n"),
            Decoded::Ignore(_)
        ));
        assert!(matches!(
            decode(b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700}}\n"),
            Decoded::Ignore(_)
        ));
    }

    /// A response to request `id`, as rmcp sends it.
    fn response(id: u32, result: ServerResult) -> TxJsonRpcMessage<RoleServer> {
        use rmcp::model::{JsonRpcMessage, JsonRpcResponse, NumberOrString};
        JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: Default::default(),
            id: NumberOrString::Number(id.into()),
            result,
        })
    }

    /// Takes the next message (a ping standing for `initialize`, id 0) and answers it as an
    /// `initialize` that agreed on 2025-03-26.
    async fn agree_on_2025_03_26<R: AsyncRead + Send + Unpin>(transport: &mut LineTransport<R>) {
        let mut init = rmcp::model::InitializeResult::new(Default::default());
        init.protocol_version = ProtocolVersion::V_2025_03_26;
        let first = transport.receive().await;
        assert!(first.is_some(), "{first:?}");
        let sent = transport
            .send(response(0, ServerResult::InitializeResult(init)))
            .await;
        assert!(sent.is_ok());
    }

    /// Closes `transport` once its input is read out, and returns what it wrote: the text,
    /// and each line as JSON.
    async fn written<R: AsyncRead + Send + Unpin>(
        mut transport: LineTransport<R>,
        mut read_back: tokio::io::DuplexStream,
    ) -> (String, Vec<Value>) {
        use tokio::io::AsyncReadExt as _;
        assert!(transport.receive().await.is_none());
        transport.close().await.unwrap_or_default();
        drop(transport);
        let mut out = String::new();
        read_back.read_to_string(&mut out).await.unwrap_or_default();
        let lines = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_default())
            .collect();
        (out, lines)
    }

    /// A client that closed its end of the server's output (it stopped reading) ends the
    /// session at the first answer that cannot be written, though its input is still open:
    /// no answer could reach it.
    #[tokio::test]
    async fn a_client_that_stops_reading_ends_the_session() {
        let (client_in, server_in) = tokio::io::duplex(1024);
        let (server_out, client_out) = tokio::io::duplex(1024);
        drop(client_out);
        let mut transport = LineTransport::new(server_in, server_out);
        let sent = transport.send(response(1, ServerResult::empty(()))).await;
        assert!(sent.is_err(), "{sent:?}");
        let next =
            tokio::time::timeout(std::time::Duration::from_secs(10), transport.receive()).await;
        assert!(matches!(next, Ok(None)), "{next:?}");
        drop(client_in);
    }

    /// On 2025-03-26, a batch's requests reach rmcp one by one and their answers go back as
    /// one array; a request of it the client cancels is not waited for. Before the session
    /// agreed on 2025-03-26 an array is refused.
    #[tokio::test]
    async fn a_batch_is_answered_as_one_array_without_its_cancelled_requests() {
        let input = concat!(
            "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]\n",
            "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}\n",
            "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},",
            "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"ping\"},",
            "{\"jsonrpc\":\"2.0\",\"id\":3}]\n",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"b\"}}\n",
        );
        let (write, read_back) = tokio::io::duplex(1 << 16);
        let mut transport = LineTransport::new(input.as_bytes(), write);
        // Not yet negotiated: the first batch is refused.
        agree_on_2025_03_26(&mut transport).await;
        for expected in [json!(1), json!("b")] {
            let next = transport.receive().await;
            let Some(RxJsonRpcMessage::<RoleServer>::Request(request)) = next else {
                panic!("{next:?}")
            };
            assert_eq!(serde_json::to_value(&request.id).ok(), Some(expected));
        }
        // The cancellation goes to rmcp too; the batch then waits for request 1 only.
        let cancelled = transport.receive().await;
        assert!(
            matches!(
                cancelled,
                Some(RxJsonRpcMessage::<RoleServer>::Notification(_))
            ),
            "{cancelled:?}"
        );
        let sent = transport.send(response(1, ServerResult::empty(()))).await;
        assert!(sent.is_ok());
        let (out, lines) = written(transport, read_back).await;
        assert_eq!(lines.len(), 3, "{out}");
        assert_eq!(lines[0]["error"]["code"], INVALID_REQUEST, "{out}");
        assert_eq!(lines[1]["result"]["protocolVersion"], "2025-03-26", "{out}");
        let batch = lines[2].as_array().cloned().unwrap_or_default();
        assert_eq!(batch.len(), 2, "{out}");
        assert_eq!(batch[0]["error"]["code"], INVALID_REQUEST, "{out}");
        assert_eq!(batch[0]["id"], 3, "{out}");
        assert_eq!(batch[1]["id"], 1, "{out}");
        assert!(batch[1].get("result").is_some(), "{out}");
    }

    /// A batch that cancels one of its own requests is answered without it (no answer
    /// comes for a cancelled request): the array is not waited for for ever.
    #[tokio::test]
    async fn a_batch_cancelling_its_own_request_is_still_answered() {
        let input = concat!(
            "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}\n",
            "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},",
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"},",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}]\n",
        );
        let (write, read_back) = tokio::io::duplex(1 << 16);
        let mut transport = LineTransport::new(input.as_bytes(), write);
        agree_on_2025_03_26(&mut transport).await;
        // Requests 1 and 2, then the cancellation, reach rmcp; only 2 is answered.
        for _ in 0..3 {
            assert!(transport.receive().await.is_some());
        }
        let sent = transport.send(response(2, ServerResult::empty(()))).await;
        assert!(sent.is_ok());
        let (out, lines) = written(transport, read_back).await;
        assert_eq!(lines.len(), 2, "{out}");
        let batch = lines[1].as_array().cloned().unwrap_or_default();
        assert_eq!(batch.len(), 1, "{out}");
        assert_eq!(batch[0]["id"], 2, "{out}");
    }

    /// A line over the limit is answered with its id as soon as the limit is passed, its
    /// rest skipped, and the next line served.
    #[tokio::test]
    async fn an_oversized_line_is_answered_and_skipped() {
        let mut input = br#"{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":""#.to_vec();
        input.extend(std::iter::repeat_n(b'a', 10_000));
        input.extend_from_slice(b"\"}}\n{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\"}\n");
        let (write, mut read_back) = tokio::io::duplex(1 << 16);
        let mut transport = LineTransport::new(&input[..], write).with_max_message_bytes(100);
        let next = transport.receive().await;
        let Some(RxJsonRpcMessage::<RoleServer>::Request(request)) = next else {
            panic!("{next:?}")
        };
        assert_eq!(serde_json::to_value(&request.id).ok(), Some(json!(10)));
        assert!(transport.receive().await.is_none());
        transport.close().await.unwrap_or_default();
        drop(transport);
        let mut out = String::new();
        use tokio::io::AsyncReadExt as _;
        read_back.read_to_string(&mut out).await.unwrap_or_default();
        let answer: Value = serde_json::from_str(out.trim()).unwrap_or_default();
        assert_eq!(answer["id"], 9, "{out}");
        assert_eq!(answer["error"]["code"], INVALID_REQUEST, "{out}");
    }

    /// At the end of the input, a last line without its newline is served as any line: a
    /// request goes to rmcp, broken JSON is answered `-32700`; then the input has ended.
    #[tokio::test]
    async fn a_last_line_without_its_newline_is_served() {
        let input = br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
        let (write, _read_back) = tokio::io::duplex(1 << 16);
        let mut transport = LineTransport::new(&input[..], write);
        let next = transport.receive().await;
        let Some(RxJsonRpcMessage::<RoleServer>::Request(request)) = next else {
            panic!("{next:?}")
        };
        assert_eq!(serde_json::to_value(&request.id).ok(), Some(json!(7)));
        assert!(transport.receive().await.is_none());

        let input = br#"{"jsonrpc":"2.0","id":8,"method":"pi"#;
        let (write, mut read_back) = tokio::io::duplex(1 << 16);
        let mut transport = LineTransport::new(&input[..], write);
        assert!(transport.receive().await.is_none());
        transport.close().await.unwrap_or_default();
        drop(transport);
        let mut out = String::new();
        use tokio::io::AsyncReadExt as _;
        read_back.read_to_string(&mut out).await.unwrap_or_default();
        let answer: Value = serde_json::from_str(out.trim()).unwrap_or_default();
        assert_eq!(answer["id"], 8, "{out}");
        assert_eq!(answer["error"]["code"], PARSE_ERROR, "{out}");
    }
}
