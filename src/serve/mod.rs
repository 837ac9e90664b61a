//! Tools served over MCP: the server side of `toolwright serve`, on the official Rust SDK
//! (`rmcp`), usable by any host that wants to serve its own tool list.
//!
//! - [`ToolServer`] is an rmcp `ServerHandler` that lists a context's tools (name, the
//!   model-facing prompt as description, the input schema exactly as a model API gets it,
//!   annotations from the safety flags) and runs every `tools/call` through the per-call
//!   pipeline (hooks, permission rules). A permission "ask" becomes an MCP elicitation
//!   (a form with a boolean `allow`; for AskUserQuestion, a form of its questions whose
//!   answers become the call's `answers`) when the client declared form elicitation, and a
//!   deny saying why otherwise (also for an input too long to show whole; ExitPlanMode's
//!   long plan is shown by its head and tail when its plan file holds it):
//!   `elicitation/create` while the call waits up to protocol
//!   2025-11-25, an input-required result answered by a retry from 2026-07-28 on (each
//!   `requestState` it gives out allows one call: a retry sending it again is refused). A
//!   request's `_meta.progressToken` turns the tool's progress reports into
//!   `notifications/progress`; cancelling the request cancels the call. A result carries
//!   what the model would read beside the tool_result in an agent loop (hook context and
//!   feedback, a skill's body, a hook's stop) as more text blocks.
//!   Bash's served description says that each command starts in the served directory (its
//!   `cd` is not kept, and a result that moved says so), and Skill's lists the skills
//!   ([`tools_builtin::skill::skills_listing`]).
//!   The tools served can change while it serves ([`ToolServer::set_tools`], as
//!   `toolwright serve` does when an upstream MCP server's list changes): it advertises
//!   `tools.listChanged` and sends `notifications/tools/list_changed` to every initialized
//!   client session, and to every 2026-07-28 `subscriptions/listen` that asked for it.
//! - [`serve_stdio`] serves a handler over standard input and output, answering the lines
//!   rmcp would drop without a word (not JSON, not UTF-8, too long): see [`stdio`].
//! - [`http`] serves a handler over Streamable HTTP on a loopback address, checking the `Host`
//!   and `Origin` headers of every request (DNS-rebinding protection).
//!
//! A host with more than tools (resources, prompts) wraps a [`ToolServer`] in its own
//! handler and delegates `tools/list` and `tools/call` to [`ToolServer::list`] and
//! [`ToolServer::call`] (see `examples/conformance_server.rs`); its `on_custom_request` can
//! answer with [`invalid_params`], as [`ToolServer`]'s does, so that a `tools/call` whose
//! params do not parse gets `-32602` rather than rmcp's "method not found" (and with
//! [`method_not_found`] for other methods: `Method not found: NAME`, where rmcp's own
//! answer is the bare name). [`ToolServer`] answers so for every method it does not serve
//! (resources, prompts, completions, logging), and answers a `_meta.progressToken` that is
//! neither a string nor an integer with `-32602`.
//!
//! What is meant for the person running the server rather than for the client (hooks' system
//! messages and errors, rejected protocol lines) goes to a [`NoticeSink`] when one is given
//! ([`ToolServer::with_notices`], [`serve_stdio_with_notices`]); `toolwright serve` prints
//! it on stderr. A hook's notice is also a `DEBUG` `tracing` event (target
//! `toolwright::serve`), which telemetry never exports: its text can echo a tool's input.

pub mod http;
pub mod stdio;

mod ask;
mod convert;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock, Weak};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    CustomRequest, CustomResult, ErrorCode, ErrorData, GetPromptRequestParams, GetPromptResponse,
    Implementation, InitializeRequestParams, InitializeResult, InputRequest, InputRequiredResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, SubscribeRequestParams, SubscriptionFilter,
    UnsubscribeRequestParams,
};
use rmcp::service::{
    NotificationContext, Peer, RequestContext, RoleServer, SubscriptionContext, SubscriptionSink,
};
use rmcp::{ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tool_core::{CancellationToken, ProgressSender, Tool, ToolProgress, ToolUseContext};
use tool_exec::{Hooks, Permissions, Pipeline, ToolUse};

pub use convert::{mcp_content, tool_entry};

/// Where a server's notices for the person running it go: one line of text each (hooks'
/// system messages and errors as `hook: ...`, rejected protocol lines). Not for the client.
pub type NoticeSink = Arc<dyn Fn(&str) + Send + Sync>;

/// Serves tools over MCP, each call through the pipeline. Cheap to clone; clones share the
/// tools, permissions and hooks. It answers one `initialize` (a second gets `-32600`, MCP
/// having one per session), and so do its clones: serve each client session a server of
/// its own ([`Self::new`], or [`Self::for_session`] as an HTTP service's factory). See the
/// [module docs](self).
#[derive(Clone)]
pub struct ToolServer {
    ctx: ToolUseContext,
    permissions: Arc<dyn Permissions>,
    hooks: Arc<dyn Hooks>,
    info: Implementation,
    instructions: Option<String>,
    calls: Arc<AtomicU64>,
    /// Cancelled by [`Self::shut_down`]: every call in progress, of every clone, stops.
    shutdown: CancellationToken,
    /// How many calls are in progress, across clones; [`Self::shut_down`] waits for none.
    running: Arc<tokio::sync::watch::Sender<usize>>,
    /// The context of requests without a session (stdio, and HTTP on protocol 2026-07-28,
    /// which has no sessions), shared by every clone.
    sessionless: Arc<Mutex<ToolUseContext>>,
    /// The context of the HTTP session this server was made for ([`Self::for_session`]),
    /// made on its first request. It lives as long as rmcp keeps the session's handler:
    /// when the session ends (`DELETE`, idle timeout), its read cache and background tasks
    /// go with it. `None` on the shared server, whose requests are all sessionless.
    session: Option<Arc<SessionSlot>>,
    /// The session states of every server [`Self::for_session`] made, weakly (a session
    /// that ended is gone): [`Self::kill_background_tasks`] reaches their tasks.
    sessions: Arc<Mutex<Vec<Weak<SessionSlot>>>>,
    /// The same session states by their `Mcp-Session-Id`, each entered when its context is
    /// made (its first request): a session's activity is looked up without going through
    /// the others' (see [`Self::slot_of`]).
    sessions_by_id: Arc<Mutex<std::collections::HashMap<String, Weak<SessionSlot>>>>,
    /// Where hooks' notices for the user go besides the `DEBUG` `tracing` event.
    notices: Option<NoticeSink>,
    /// The tools served, shared by every clone: the context's at first, then what
    /// [`Self::set_tools`] gave. Listed and called from here, not from a context's list.
    tools: Arc<RwLock<ToolList>>,
    /// Who is told when the tools change, shared by every clone.
    listeners: Arc<Mutex<Listeners>>,
    /// `tools/list` and `tools/call` wait until it reads `true` (or its sender is gone): the
    /// upstream MCP servers' first connections, which `initialize` does not wait for.
    tools_ready: Option<tokio::sync::watch::Receiver<bool>>,
    /// `initialize` was answered for the client session this server serves (stdio's one
    /// client; an HTTP session's own server, from [`Self::for_session`]): another is refused.
    initialized: Arc<AtomicBool>,
    /// The `requestState`s given out with input-required results (2026-07-28), shared by
    /// every clone and every session's server: each allows one call.
    ask_states: Arc<ask::AskStates>,
}

/// A list of tools, as a context holds it.
type ToolList = Arc<[Arc<dyn Tool>]>;

/// An HTTP session's state (see [`ToolServer::for_session`]).
#[derive(Default)]
struct SessionSlot {
    /// Its context, made on its first request.
    ctx: Mutex<Option<ToolUseContext>>,
    /// Its calls in progress.
    calls: Mutex<SessionCalls>,
}

/// An HTTP session's calls in progress.
#[derive(Default)]
struct SessionCalls {
    /// How many run: in progress, and not waiting for the client's answer to a question.
    running: usize,
    /// When one last stopped running (ended, or began to wait for the client).
    last: Option<std::time::Instant>,
    /// The request ids (as [`stdio::id_key`] makes them) of the calls in progress, each
    /// with how many calls have it.
    ids: std::collections::HashMap<String, usize>,
}

impl SessionSlot {
    fn calls(&self) -> std::sync::MutexGuard<'_, SessionCalls> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts one of its calls as waiting for the client's answer (not running) until the
    /// guard is dropped: a client that went away leaves it waiting, and that is the
    /// client's idleness, not the session's activity.
    /// A guard made while no call is counted as running takes nothing, and gives nothing
    /// back.
    pub(crate) fn waiting_on_client(self: &Arc<Self>) -> WaitingOnClient {
        let mut calls = self.calls();
        let took = calls.running > 0;
        if took {
            calls.running -= 1;
        }
        calls.last = Some(std::time::Instant::now());
        WaitingOnClient {
            slot: Arc::clone(self),
            took,
        }
    }
}

/// A session's call waiting for its client's answer (see [`SessionSlot::waiting_on_client`]).
pub(crate) struct WaitingOnClient {
    slot: Arc<SessionSlot>,
    /// Whether it took the call out of the running count, which it then gives back.
    took: bool,
}

impl Drop for WaitingOnClient {
    fn drop(&mut self) {
        let mut calls = self.slot.calls();
        if self.took {
            calls.running += 1;
        }
        calls.last = Some(std::time::Instant::now());
    }
}

/// A session's call in progress, request id `id` (as [`stdio::id_key`] makes it), running
/// until dropped; then notes when it ended.
struct SessionCall {
    slot: Option<Arc<SessionSlot>>,
    id: String,
}

impl SessionCall {
    fn start(slot: Option<Arc<SessionSlot>>, id: String) -> Self {
        if let Some(slot) = &slot {
            let mut calls = slot.calls();
            calls.running += 1;
            *calls.ids.entry(id.clone()).or_default() += 1;
        }
        Self { slot, id }
    }
}

impl Drop for SessionCall {
    fn drop(&mut self) {
        if let Some(slot) = &self.slot {
            let mut calls = slot.calls();
            calls.running = calls.running.saturating_sub(1);
            calls.last = Some(std::time::Instant::now());
            if let Some(n) = calls.ids.get_mut(&self.id) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    calls.ids.remove(&self.id);
                }
            }
        }
    }
}

/// The clients to send `notifications/tools/list_changed` to.
#[derive(Default)]
struct Listeners {
    /// Each client session that completed `initialize` (stdio's one client, each HTTP
    /// session), until its transport closes.
    peers: Vec<Peer<RoleServer>>,
    /// The 2026-07-28 `subscriptions/listen` requests open that asked for tool list changes
    /// (that protocol's way to receive them), by a number of ours.
    subscriptions: Vec<(u64, SubscriptionSink)>,
    /// The next subscription's number.
    next: u64,
}

impl std::fmt::Debug for ToolServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolServer")
            .field("ctx", &self.ctx)
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl ToolServer {
    /// Serves the tools of `ctx`, deciding with `permissions` and running `hooks` around
    /// each call. Calls run in `ctx` (its cwd, permission state, results directory), each with
    /// its own cancellation; `avoid_prompts` is ignored, as asks go to the client; and
    /// with [`ToolOptions::reads_always_return_content`](tool_core::ToolOptions) set.
    pub fn new(
        ctx: ToolUseContext,
        permissions: Arc<dyn Permissions>,
        hooks: Arc<dyn Hooks>,
    ) -> Self {
        // A server cannot see conversations (a client keeps it across chats; sessionless
        // clients share one state): a Read never answers "File unchanged since last read",
        // which points at a result the model asking may never have received. Reads are still
        // recorded, for a later Edit or Write.
        let mut options = ctx.options().clone();
        options.reads_always_return_content = true;
        let ctx = ctx.with_options(options);
        Self {
            sessionless: Arc::new(Mutex::new(ctx.clone())),
            tools: Arc::new(RwLock::new(ctx.options().tools.clone())),
            listeners: Arc::default(),
            ctx,
            permissions,
            hooks,
            info: Implementation::new("toolwright", env!("CARGO_PKG_VERSION")),
            instructions: None,
            calls: Arc::default(),
            shutdown: CancellationToken::new(),
            running: Arc::new(tokio::sync::watch::Sender::new(0)),
            session: None,
            sessions: Arc::default(),
            sessions_by_id: Arc::default(),
            notices: None,
            tools_ready: None,
            initialized: Arc::default(),
            ask_states: Arc::default(),
        }
    }

    /// A server for one HTTP session: the same tools, permissions and hooks, and session
    /// state of its own (read cache, plan mode, worktree, background tasks) for the
    /// requests that carry an `Mcp-Session-Id`, dropped with this server. Give this to
    /// rmcp's Streamable HTTP service as its factory: rmcp makes one per session (and one
    /// per sessionless request, whose requests use the shared sessionless state).
    pub fn for_session(&self) -> Self {
        let slot: Arc<SessionSlot> = Arc::default();
        {
            let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
            sessions.retain(|s| s.strong_count() > 0);
            sessions.push(Arc::downgrade(&slot));
        }
        Self {
            session: Some(slot),
            initialized: Arc::default(),
            ..self.clone()
        }
    }

    /// The name and version given to clients in `initialize` (default: toolwright and this
    /// crate's version).
    pub fn with_server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info = Implementation::new(name, version);
        self
    }

    /// Sends what hooks address to the user (a `systemMessage`, a hook's error or timeout) to
    /// `sink`, as `hook: TEXT`, besides the `DEBUG` `tracing` event: the client never sees it.
    pub fn with_notices(mut self, sink: NoticeSink) -> Self {
        self.notices = Some(sink);
        self
    }

    /// Makes `tools/list` and `tools/call` wait until `ready` reads `true` (or its sender is
    /// dropped): a host that answers `initialize` before its upstream MCP servers are
    /// connected (`toolwright serve`) still lists their tools in the first `tools/list`.
    pub fn with_tools_ready(mut self, ready: tokio::sync::watch::Receiver<bool>) -> Self {
        self.tools_ready = Some(ready);
        self
    }

    /// Waits for [`Self::with_tools_ready`]'s signal; an error when the request is
    /// cancelled (`notifications/cancelled`) or the server shuts down first.
    async fn tools_ready(&self, request: &CancellationToken) -> Result<(), ErrorData> {
        let Some(ready) = &self.tools_ready else {
            return Ok(());
        };
        let mut ready = ready.clone();
        tokio::select! {
            _ = ready.wait_for(|ready| *ready) => Ok(()),
            () = request.cancelled() => Err(ErrorData::internal_error(
                "the request was cancelled while the MCP servers were connecting",
                None,
            )),
            () = self.shutdown.cancelled() => Err(ErrorData::internal_error(
                "the server is shutting down",
                None,
            )),
        }
    }

    /// The `instructions` given to clients in `initialize`.
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Stops serving calls: kills the background tasks of every state (the sessionless one
    /// and every HTTP session's still open) first, then cancels every call in progress (a
    /// running command's process group is killed; each is answered as interrupted, wherever
    /// it was: running, in a hook, waiting for the client's answer to a question), waits up
    /// to `grace` for them to end, and
    /// kills the background tasks started meanwhile. A host calls it on SIGTERM or Ctrl-C
    /// before exiting, as nothing runs the destructors of a process a signal ends; the
    /// background tasks go first because they run in process groups of their own, which a
    /// supervisor's SIGKILL during the wait would leave running.
    pub async fn shut_down(&self, grace: std::time::Duration) {
        self.kill_background_tasks();
        self.shutdown.cancel();
        let mut running = self.running.subscribe();
        let _ = tokio::time::timeout(grace, running.wait_for(|n| *n == 0)).await;
        self.kill_background_tasks();
    }

    /// The id of the context of the HTTP session `mcp_session` (its `Mcp-Session-Id`).
    fn session_id_of(&self, mcp_session: &str) -> String {
        format!("{}-{mcp_session}", self.ctx.session_id())
    }

    /// Ends the HTTP session `mcp_session` (its `Mcp-Session-Id`), as a client's `DELETE`
    /// or the idle timeout ends it: its calls in progress are cancelled (a running
    /// command's process group is killed) and its background tasks killed, now. Without
    /// this, rmcp lets a closed session's calls run on for seconds, and what they do with
    /// them. A session this server does not hold is left alone.
    pub fn end_session(&self, mcp_session: &str) {
        let Some(slot) = self.slot_of(mcp_session) else {
            return;
        };
        let ctx = slot
            .ctx
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(ctx) = ctx {
            ctx.cancellation().cancel();
            tools_builtin::tasks::task_registry(&ctx).kill_all();
        }
    }

    /// The contexts of the HTTP sessions still open that [`Self::for_session`] made (of this
    /// server, or of the server it was made from), this one's own among them.
    fn session_contexts(&self) -> Vec<ToolUseContext> {
        self.session_slots()
            .iter()
            .filter_map(|slot| {
                slot.ctx
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone()
            })
            .collect()
    }

    /// The states of the HTTP sessions still open that [`Self::for_session`] made (of this
    /// server, or of the server it was made from), this one's own among them.
    fn session_slots(&self) -> Vec<Arc<SessionSlot>> {
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter_map(Weak::upgrade)
            .chain(self.session.clone())
            .collect()
    }

    /// The state of the HTTP session `mcp_session` (its `Mcp-Session-Id`), when this
    /// server (or the server it was made from) holds it and it has had a request: one
    /// look-up, touching no other session's state (the idle reaper asks for every session,
    /// and every request carrying an id asks for its own).
    fn slot_of(&self, mcp_session: &str) -> Option<Arc<SessionSlot>> {
        self.sessions_by_id
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(mcp_session)
            .and_then(Weak::upgrade)
    }

    /// When a call of the HTTP session `mcp_session` (its `Mcp-Session-Id`) last ran: now
    /// while one runs, else when the last one ended or began to wait for the client's
    /// answer to a question; `None` when none has, or the session is not one this server
    /// holds. `toolwright serve --http` gives it to
    /// [`http::HttpServer::with_session_activity`]: a call still running keeps its session,
    /// also when its client closed the connection, and the idle time counts from its end;
    /// a call waiting for its client does not (a client gone leaves it waiting: the session
    /// then closes at the idle timeout, which withdraws the question and ends the call).
    pub fn session_last_active(&self, mcp_session: &str) -> Option<std::time::Instant> {
        let slot = self.slot_of(mcp_session)?;
        let calls = slot.calls();
        match calls.running {
            0 => calls.last,
            _ => Some(std::time::Instant::now()),
        }
    }

    /// Whether a call of the HTTP session `mcp_session` (its `Mcp-Session-Id`) with request
    /// id `id` is still in progress (running, or waiting for the client's answer).
    /// `toolwright serve --http` gives it to [`http::HttpServer::with_request_activity`]:
    /// a request reusing the id is refused until the call has ended, also when the call's
    /// client closed the connection.
    pub fn session_request_running(&self, mcp_session: &str, id: &rmcp::model::RequestId) -> bool {
        self.slot_of(mcp_session)
            .is_some_and(|slot| slot.calls().ids.contains_key(&stdio::id_key(id)))
    }

    /// Kills, now, the background tasks of the sessionless state and of every HTTP session
    /// of this server (or of the server it was made from) still open: for a host about to
    /// exit without unwinding.
    pub fn kill_background_tasks(&self) {
        let sessionless = self
            .sessionless
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        tools_builtin::tasks::task_registry(&sessionless).kill_all();
        for ctx in self.session_contexts() {
            tools_builtin::tasks::task_registry(&ctx).kill_all();
        }
    }

    /// The context `context`'s request runs in, and whether it is a session's: this
    /// server's own when the request belongs to an HTTP session (it carries
    /// `Mcp-Session-Id` and this server was made for a session), made on first use; else
    /// the shared sessionless context. What one client read does not count as read for
    /// another, and its plan mode, worktree and background tasks are its own. The header
    /// alone picks nothing: a client cannot reach another session's state, or push one out,
    /// by naming it.
    fn session(&self, context: &RequestContext<RoleServer>) -> (bool, ToolUseContext) {
        if let Some(slot) = self.session_slot(context) {
            let ctx = slot.ctx.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(ctx) = ctx.as_ref() {
                return (true, ctx.clone());
            }
        }
        let shared = self
            .sessionless
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        (false, shared.clone())
    }

    /// This server's session state when `context`'s request belongs to its HTTP session
    /// (see [`Self::session`]), its context made on first use; `None` for a sessionless
    /// request.
    fn session_slot(&self, context: &RequestContext<RoleServer>) -> Option<&Arc<SessionSlot>> {
        let headers = context
            .extensions
            .get::<::http::request::Parts>()
            .map(|parts| &parts.headers);
        let header = |name: &str| {
            headers
                .and_then(|h| h.get(name))
                .and_then(|v| v.to_str().ok())
        };
        // From 2026-07-28 on there are no sessions: such a request is sessionless whatever
        // it sends (rmcp made this server for that one request).
        let sessionless_protocol =
            header("mcp-protocol-version").is_some_and(|v| v >= "2026-07-28");
        let id = header("mcp-session-id").filter(|_| !sessionless_protocol)?;
        self.session_slot_for(id)
    }

    /// This server's session state for the HTTP session `id` (its `Mcp-Session-Id`), its
    /// context made on first use; `None` on a server not made for a session.
    fn session_slot_for(&self, id: &str) -> Option<&Arc<SessionSlot>> {
        let slot = self.session.as_ref()?;
        let mut made = false;
        {
            let mut own = slot.ctx.lock().unwrap_or_else(PoisonError::into_inner);
            own.get_or_insert_with(|| {
                made = true;
                // Its own cancellation: cancelled when the session ends
                // ([`Self::end_session`]), which stops its calls.
                let fresh = self
                    .ctx
                    .for_new_session(self.session_id_of(id))
                    .with_cancellation(CancellationToken::new());
                // The session's permission engine (rules with their sources, and those
                // added at run time) is shared, not session state: Grep and Glob skip what
                // it denies, as on stdio.
                if let Some(engine) = self.ctx.app_state().get::<tool_perms::SessionEngine>() {
                    fresh.app_state().set(engine);
                }
                fresh
            });
        }
        if made {
            // Found by its id from now on; the entries of sessions gone are dropped here,
            // so the map holds about as many as are open.
            let mut by_id = self
                .sessions_by_id
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            by_id.retain(|_, s| s.strong_count() > 0);
            by_id.insert(id.to_owned(), Arc::downgrade(slot));
        }
        Some(slot)
    }

    /// Applies a call's context modifier to its session's context (or the sessionless one),
    /// under the lock, so that two calls of one session changing it at once (EnterPlanMode
    /// and EnterWorktree) both count; a panic in it is caught (the change is then dropped,
    /// as the executor does).
    fn update_session(&self, in_session: bool, modifier: tool_core::ContextModifier) {
        let apply = |current: ToolUseContext| {
            let applied = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                modifier.apply(current)
            }));
            if applied.is_err() {
                tracing::warn!("a tool's context modifier panicked; the change was dropped");
            }
            applied.ok()
        };
        match self.session.as_deref().filter(|_| in_session) {
            Some(slot) => {
                let mut slot = slot.ctx.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(next) = slot.clone().and_then(apply) {
                    *slot = Some(next);
                }
            }
            None => {
                let mut shared = self
                    .sessionless
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                if let Some(next) = apply(shared.clone()) {
                    *shared = next;
                }
            }
        }
    }

    /// A finished call's MCP content: what the model would read beside the tool_result in an
    /// agent loop goes with it, as text blocks: the messages before the result (PreToolUse
    /// hook context) first, then the result, then the messages after it (a skill's body,
    /// PostToolUse feedback and context, a hook's stop), then what background hooks
    /// delivered since the last call. When a hook stopped the turn, a last text says so.
    /// What is meant for the user (hooks' system messages and errors) goes to the notice sink
    /// and to `tracing` at `DEBUG` (never exported).
    fn result_content(&self, outcome: &tool_exec::CallOutcome) -> Vec<Value> {
        let background = self.hooks.take_background_messages();
        let crate::agent::CallHookTexts {
            before,
            after,
            mut notices,
        } = crate::agent::CallHookTexts::of(outcome);
        let (late, more) = crate::agent::split_hook_messages(&background);
        notices.extend(more);
        for notice in &notices {
            // DEBUG: the text can echo a tool's input (a hook's error carries its whole
            // input), and telemetry exports INFO and above only.
            tracing::debug!(target: "toolwright::serve", tool = %outcome.tool_name, "hook notice: {notice}");
            if let Some(sink) = &self.notices {
                sink(&format!("hook: {notice}"));
            }
        }
        let text = |t: &String| json!({"type": "text", "text": t});
        let mut content: Vec<Value> = before.iter().map(text).collect();
        content.extend(mcp_content(&outcome.result.content));
        content.extend(after.iter().chain(&late).map(text));
        if let Some(reason) = &outcome.stop_turn {
            let said = tool_exec::stopped_continuation_text(
                &format!("PreToolUse:{}", outcome.tool_name),
                reason.as_deref(),
            );
            let stop = "A hook stopped the turn after this call: make no further tool calls until the user says to go on.";
            // The call's own note (a hook that stopped an accepted call) says it already.
            let text = if after
                .iter()
                .any(|t| t.contains(" hook stopped continuation"))
            {
                stop.to_owned()
            } else {
                format!("{said}\n{stop}")
            };
            content.push(json!({"type": "text", "text": text}));
        }
        content
    }

    /// The capabilities this server has: tools, whose list may change
    /// ([`Self::set_tools`]).
    pub fn capabilities(&self) -> ServerCapabilities {
        serde_json::from_value(json!({"tools": {"listChanged": true}})).unwrap_or_default()
    }

    /// The tools served now, in their order: the context's, or what [`Self::set_tools`] last
    /// gave.
    pub fn tools(&self) -> ToolList {
        self.tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Serves `tools` from now on, for every client (calls already running keep the tools
    /// they started with). When the list clients see changed (a tool added or removed, a
    /// description or schema that differs), every initialized client session is sent
    /// `notifications/tools/list_changed` (as is every 2026-07-28 subscription that asked
    /// for it), in the background: a client that reads slowly holds up nobody. A host whose
    /// tools change (an upstream MCP server's `tools/list_changed`) calls this.
    pub fn set_tools(&self, tools: impl Into<ToolList>) {
        if self.replace_tools(tools.into()) {
            self.notify_tools_changed();
        }
    }

    /// Serves `tools` from now on without telling the clients: for tools no client can have
    /// listed yet (the upstream servers' first connections, which `tools/list` waits for
    /// through [`Self::with_tools_ready`]).
    pub fn set_tools_unannounced(&self, tools: impl Into<ToolList>) {
        self.replace_tools(tools.into());
    }

    /// Serves `tools` from now on; whether the list clients see changed.
    fn replace_tools(&self, tools: ToolList) -> bool {
        let entries = |tools: &[Arc<dyn Tool>]| -> Vec<Value> {
            tools.iter().map(|t| tool_entry(t.as_ref())).collect()
        };
        let changed = entries(&self.tools()) != entries(&tools);
        *self.tools.write().unwrap_or_else(PoisonError::into_inner) = tools;
        changed
    }

    /// Sends `notifications/tools/list_changed` to every client session still open and
    /// every subscription that asked for it, each in a task of its own (nothing is sent
    /// outside a Tokio runtime).
    fn notify_tools_changed(&self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (peers, subscriptions) = {
            let mut listeners = self
                .listeners
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            listeners.peers.retain(|p| !p.is_transport_closed());
            let subscriptions: Vec<SubscriptionSink> = listeners
                .subscriptions
                .iter()
                .map(|(_, sink)| sink.clone())
                .collect();
            (listeners.peers.clone(), subscriptions)
        };
        tracing::debug!(target: "toolwright::serve", clients = peers.len() + subscriptions.len(), "the tool list changed");
        for peer in peers {
            runtime.spawn(async move {
                let _ = peer.notify_tool_list_changed().await;
            });
        }
        for sink in subscriptions {
            runtime.spawn(async move {
                let _ = sink.notify_tool_list_changed().await;
            });
        }
    }

    /// The `tools/list` entries, in the order of the tools served: each [`tool_entry`], with
    /// what serving changes said in the descriptions: Bash's says that each command starts
    /// in the served directory, and Skill's lists the skills ([`tools_builtin::skill::skills_listing`]).
    pub fn list(&self) -> Vec<rmcp::model::Tool> {
        self.tools()
            .iter()
            .filter_map(|t| serde_json::from_value(self.served_entry(t.as_ref())).ok())
            .collect()
    }

    /// A tool's `tools/list` entry as served: Bash's description says that each command
    /// starts in the served directory (its `cd` is not kept: see [`Self::call`]), and
    /// Skill's lists the skills there are ([`tools_builtin::skill::skills_listing`]), as Claude Code tells its
    /// model; a client has no other way to learn their names.
    fn served_entry(&self, tool: &dyn Tool) -> Value {
        let mut entry = tool_entry(tool);
        if tool.is_mcp() {
            return entry;
        }
        let description = entry["description"].as_str().unwrap_or_default();
        let served = match tool.name() {
            "Bash" => served_bash_description(description, self.ctx.cwd()),
            "Skill" => match tools_builtin::skill::skills_listing(
                &self.ctx.clone().with_tools(self.tools()),
            ) {
                Some(listing) => format!("{description}\n\n{listing}"),
                None => return entry,
            },
            _ => return entry,
        };
        entry["description"] = Value::from(served);
        entry
    }

    /// Runs one `tools/call` through the pipeline. The answer is a result (an unknown tool,
    /// invalid input, a denial and a failure are `isError` results the caller reads), or,
    /// on protocol 2026-07-28 and later, an input-required result when the call asks.
    pub async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        progress_token_check(&context)?;
        self.running.send_modify(|n| *n += 1);
        let _running = Running(&self.running);
        // A session's call keeps it open while it runs (whether or not its client is still
        // connected), and its request id in use until it ends: see
        // [`Self::session_last_active`] and [`Self::session_request_running`].
        let slot = self.session_slot(&context).cloned();
        let _session_call = SessionCall::start(slot.clone(), stdio::id_key(&context.id));
        self.tools_ready(&context.ct).await?;
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        let input = Value::Object(request.arguments.clone().unwrap_or_default());
        let tool_use = ToolUse::new(format!("mcp_call_{n}"), request.name.to_string(), input);

        // Asks go to this client when it can answer them, through the pipeline's seams. Our
        // asks are forms: a client that declared only URL-mode elicitation cannot be sent
        // one (an empty `elicitation` object means forms, as the spec says).
        let can_elicit = context
            .client_capabilities()
            .and_then(|c| c.elicitation)
            .is_some_and(|e| e.form.is_some() || e.url.is_none());
        // From 2026-07-28 on, a server may not send requests: asks travel in the result.
        let no_server_requests = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ask::FIRST_STATELESS_VERSION);
        let channel = match (can_elicit, no_server_requests) {
            (false, _) => ask::Channel::None,
            (true, false) => ask::Channel::Request(context.peer.clone()),
            (true, true) => ask::Channel::InputRequired {
                answer: request.request_state.clone().zip(
                    request
                        .input_responses
                        .as_ref()
                        .and_then(|r| r.get(ask::INPUT_KEY).cloned()),
                ),
                states: Arc::clone(&self.ask_states),
            },
        };
        // Plan mode is left only with the user's approval (ExitPlanMode always asks, whatever
        // the rules): a client that cannot be asked would stay in it for good, every change
        // refused. It is not entered. (A tool not served is unknown, as any other.)
        if matches!(channel, ask::Channel::None)
            && request.name == "EnterPlanMode"
            && tool_core::find_tool(&self.tools(), "EnterPlanMode").is_some()
        {
            let result = json!({
                "resultType": "complete",
                "content": [{"type": "text", "text": NO_PLAN_MODE_WITHOUT_ASKS}],
                "isError": true,
            });
            let result: CallToolResult = serde_json::from_value(result).map_err(|e| {
                ErrorData::internal_error(format!("cannot encode the result: {e}"), None)
            })?;
            return Ok(CallToolResponse::Complete(result));
        }
        // Waiting for the client's answer is not the session's activity.
        let route = Arc::new(ask::AskRoute::new(channel).with_session(slot));
        let pipeline = Pipeline::new(
            Arc::new(ask::ServePermissions::new(
                self.permissions.clone(),
                route.clone(),
            )),
            Arc::new(ask::ElicitPrompter::new(route.clone())),
            self.hooks.clone(),
        );
        let (session, session_ctx) = self.session(&context);
        // Where the call's command starts, and the next one will.
        let start_dir = session_ctx.cwd().to_path_buf();
        let mut permission = session_ctx.permission().clone();
        permission.avoid_prompts = false;
        // The request's cancellation is the call's, and so is the server's shutdown.
        let cancel = context.ct.child_token();
        if self.shutdown.is_cancelled() {
            cancel.cancel();
        }
        // And the session's end (an HTTP client's `DELETE`: [`Self::end_session`]).
        if session && session_ctx.is_cancelled() {
            cancel.cancel();
        }
        let _link = AbortOnDrop(tokio::spawn({
            let (shutdown, cancel) = (self.shutdown.clone(), cancel.clone());
            let ended = session.then(|| session_ctx.cancellation().clone());
            async move {
                let ended = async {
                    match ended {
                        Some(ended) => ended.cancelled().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    () = shutdown.cancelled() => cancel.cancel(),
                    () = ended => cancel.cancel(),
                    () = cancel.cancelled() => {}
                }
            }
        }));
        // Whether the call was cancelled, for its progress reports (below).
        let cancelled = cancel.clone();
        // The tools served now (an upstream server's list may have changed since the
        // session's context was made): the pipeline finds the call's tool among them.
        let ctx = session_ctx
            .with_tools(self.tools())
            .with_permission(permission)
            .with_cancellation(cancel);

        let token = context.meta.get_progress_token();
        let (progress, mut reports) = match &token {
            Some(_) => {
                let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<ToolProgress>();
                let sink = Arc::new(move |p: ToolProgress| {
                    let _ = tx.send(p);
                });
                (ProgressSender::new(tool_use.id.clone(), sink), Some(rx))
            }
            None => (ProgressSender::none(), None),
        };
        let run = pipeline.run_tool_use(&tool_use, ctx, progress);
        let outcome = match (&token, reports.as_mut()) {
            (Some(token), Some(reports)) => {
                let mut forward = ProgressForwarder::new(context.peer.clone(), token.clone());
                tokio::pin!(run);
                // The reports waiting to be written, and the call's outcome once it ended.
                let mut waiting = std::collections::VecDeque::new();
                let mut ended = None;
                loop {
                    // A call cancelled (the server shutting down, the request cancelled, its
                    // session ended) that has ended starts no new report: a report may then
                    // never be sent (rmcp stops sending once the client's input has ended),
                    // and the call's answer must not wait for it, nor follow one begun after
                    // it. The reports still waiting are dropped.
                    if cancelled.is_cancelled()
                        && let Some(outcome) = ended.take()
                    {
                        break outcome;
                    }
                    while let Ok(report) = reports.try_recv() {
                        queue_report(&mut waiting, report);
                    }
                    if let Some(report) = waiting.pop_front() {
                        // The call keeps running while a report is written: a client that
                        // stops reading must not stall the tool's timers and cancellation.
                        // A report being written is written whole, the call ended or not,
                        // unless the call was cancelled (below).
                        let send = forward.send(&report.data);
                        tokio::pin!(send);
                        if ended.is_none() {
                            tokio::select! {
                                biased;
                                () = &mut send => continue,
                                outcome = &mut run => ended = Some(outcome),
                            }
                        }
                        // Unless the call was cancelled: then the answer goes now (above).
                        tokio::select! {
                            biased;
                            () = &mut send => {}
                            () = cancelled.cancelled() => {}
                        }
                        continue;
                    }
                    // Every report made before the end (an MCP tool's last one, sent just
                    // before its result, too) precedes the response.
                    if let Some(outcome) = ended.take() {
                        break outcome;
                    }
                    tokio::select! {
                        biased;
                        Some(report) = reports.recv() => queue_report(&mut waiting, report),
                        outcome = &mut run => ended = Some(outcome),
                    }
                }
            }
            _ => run.await,
        };
        let mut outcome = outcome;
        // The server shutting down (the stdio client closed its input, a signal) interrupts
        // every call in progress: each is answered as interrupted, as a running tool is,
        // wherever the cancellation found it (waiting for the client's answer to its
        // question, which is withdrawn; in a PreToolUse hook), not as the user's rejection.
        if self.shutdown.is_cancelled() && outcome.ending == tool_exec::Ending::Cancelled {
            outcome.result = tool_core::ToolResultBlock::error(
                &tool_use.id,
                tool_core::INTERRUPT_MESSAGE_FOR_TOOL_USE,
            );
        }
        // EnterPlanMode, ExitPlanMode, EnterWorktree, ...: the change stays with the session.
        // Not Bash's `cd`: over MCP each command starts in the project directory, as the
        // docs and the served description say (and sessionless clients share one state,
        // which one's `cd` must not move); the result says where the next one starts.
        let modifier = outcome.context_modifier.take();
        let mut dropped_cd = None;
        match modifier {
            Some(modifier) if outcome.tool_name == "Bash" => {
                dropped_cd = modifier
                    .new_cwd()
                    .filter(|dir| *dir != start_dir)
                    .map(|dir| cd_not_kept(&start_dir, dir));
            }
            Some(modifier) => self.update_session(session, modifier),
            None => {}
        }
        if let Some((state, params)) = route.take_pending() {
            let elicit = json!({"method": "elicitation/create", "params": params});
            let elicit: InputRequest = serde_json::from_value(elicit).map_err(|e| {
                ErrorData::internal_error(format!("cannot encode the elicitation: {e}"), None)
            })?;
            let requests = std::iter::once((ask::INPUT_KEY.to_owned(), elicit)).collect();
            return Ok(CallToolResponse::InputRequired(InputRequiredResult::new(
                Some(requests),
                Some(state),
            )));
        }
        let mut content = self.result_content(&outcome);
        if let Some(note) = dropped_cd {
            content.push(json!({"type": "text", "text": note}));
        }
        let result = json!({
            "resultType": "complete",
            "content": content,
            "isError": outcome.result.is_error,
        });
        let result: CallToolResult = serde_json::from_value(result).map_err(|e| {
            ErrorData::internal_error(format!("cannot encode the result: {e}"), None)
        })?;
        Ok(CallToolResponse::Complete(result))
    }
}

/// The sentence of Bash's prompt that does not hold when served.
const BASH_CWD_PERSISTS: &str =
    "The working directory persists between commands, but shell state does not.";

/// Bash's description as served from `project`: each command starts there (a `cd` does not
/// carry over), in place of the prompt's "The working directory persists between
/// commands" (said first when the prompt no longer has that sentence).
fn served_bash_description(prompt: &str, project: &std::path::Path) -> String {
    let starts = format!(
        "Each command starts in the project directory ({}): the working directory does not persist between commands (a `cd` does not carry over to the next command), and neither does other shell state. Use absolute paths, or `cd DIR && ...` within one command.",
        project.display()
    );
    if prompt.contains(BASH_CWD_PERSISTS) {
        prompt.replacen(BASH_CWD_PERSISTS, &starts, 1)
    } else {
        format!("{starts}\n\n{prompt}")
    }
}

/// The note of a served Bash result whose `cd` to `moved_to` was not kept.
fn cd_not_kept(project: &std::path::Path, moved_to: &std::path::Path) -> String {
    format!(
        "Note: the working directory does not persist between commands here: the next command starts in {} again, not in {}. Use `cd {} && ...` within one command, or absolute paths.",
        project.display(),
        moved_to.display(),
        moved_to.display()
    )
}

/// Why EnterPlanMode is refused to a client that cannot be asked.
const NO_PLAN_MODE_WITHOUT_ASKS: &str = "EnterPlanMode is not available to this client: leaving plan mode needs the user's approval (ExitPlanMode always asks), and this MCP client cannot ask its user (it did not declare form elicitation). Plan in your answer instead, without entering plan mode.";

impl ServerHandler for ToolServer {
    fn get_info(&self) -> InitializeResult {
        let mut info =
            InitializeResult::new(self.capabilities()).with_server_info(self.info.clone());
        if let Some(text) = &self.instructions {
            info = info.with_instructions(text.clone());
        }
        info
    }

    /// The first `initialize` of the client session is answered as rmcp does; another is
    /// refused with `-32600` and changes nothing (the protocol version agreed on, the
    /// client's info): MCP has one `initialize` per session.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        if self.initialized.load(Ordering::SeqCst) {
            return Err(already_initialized());
        }
        let result = self.negotiate_initialize(&request)?;
        if self.initialized.swap(true, Ordering::SeqCst) {
            return Err(already_initialized());
        }
        context.peer.set_peer_info(request);
        Ok(result)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        progress_token_check(&context)?;
        // Every tool comes in one page, so no cursor was ever given out: one is invalid
        // (the spec's -32602), not a request for the first page again.
        if let Some(cursor) = request.and_then(|r| r.cursor) {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown cursor {cursor:?}: this server lists every tool in one page, with no nextCursor"
                ),
                None,
            ));
        }
        self.tools_ready(&context.ct).await?;
        Ok(ListToolsResult::with_all_items(self.list()))
    }

    /// The client session is told when the tools change from now on (until it closes).
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let mut listeners = self
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        listeners.peers.retain(|p| !p.is_transport_closed());
        listeners.peers.push(context.peer);
    }

    /// On 2026-07-28, tool list changes reach a client through `subscriptions/listen`.
    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        if context.accepted().tools_list_changed != Some(true) {
            context.cancelled().await;
            return Ok(());
        }
        let number = {
            let mut listeners = self
                .listeners
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let number = listeners.next;
            listeners.next += 1;
            listeners
                .subscriptions
                .push((number, context.sink().clone()));
            number
        };
        // Ended by the client (or the server's shutdown): it is told nothing more.
        let _forget = Forget(&self.listeners, number);
        context.cancelled().await;
        Ok(())
    }

    // rmcp's own answer to a method a server does not serve says only the method's name
    // (`"message": "resources/list"`); these say what is wrong.

    async fn complete(
        &self,
        _request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        Err(method_not_found("completion/complete"))
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        _request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Err(method_not_found("logging/setLevel"))
    }

    async fn get_prompt(
        &self,
        _request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        Err(method_not_found("prompts/get"))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Err(method_not_found("prompts/list"))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Err(method_not_found("resources/list"))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Err(method_not_found("resources/templates/list"))
    }

    async fn read_resource(
        &self,
        _request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        Err(method_not_found("resources/read"))
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        _request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Err(method_not_found("resources/subscribe"))
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        _request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Err(method_not_found("resources/unsubscribe"))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        let tool = self.tools().iter().find(|t| t.name() == name).cloned()?;
        serde_json::from_value(self.served_entry(tool.as_ref())).ok()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, context).await
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(invalid_params(&request).unwrap_or_else(|| method_not_found(&request.method)))
    }
}

/// The `-32600` answer to an `initialize` in a session that already had one.
fn already_initialized() -> ErrorData {
    ErrorData::new(
        ErrorCode::INVALID_REQUEST,
        "Invalid Request: the session is already initialized: `initialize` comes once per session, and this one changed nothing (start a new session to negotiate again)",
        None,
    )
}

/// JSON-RPC's `-32601` for `method`: `Method not found: METHOD`.
pub fn method_not_found(method: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("Method not found: {method}"),
        None,
    )
}

/// `-32602` for a request whose `_meta.progressToken` is neither a string nor an integer
/// (MCP's two kinds), which rmcp would take for no token at all. `null` counts as none.
fn progress_token_check(context: &RequestContext<RoleServer>) -> Result<(), ErrorData> {
    match context.meta.get("progressToken") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(_)) => Ok(()),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Ok(()),
        Some(other) => Err(ErrorData::invalid_params(
            format!(
                "Invalid params: _meta.progressToken must be a string or an integer, not {other}"
            ),
            None,
        )),
    }
}

/// Removes subscription `.1` from the listeners when dropped.
struct Forget<'a>(&'a Mutex<Listeners>, u64);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .subscriptions
            .retain(|(n, _)| *n != self.1);
    }
}

/// The `-32602` answer to a request for a method this server serves whose params did not
/// parse: rmcp hands such a request over as a custom one (it would say "method not found").
/// `None` for other methods.
pub fn invalid_params(request: &CustomRequest) -> Option<ErrorData> {
    let params = request.params.clone().unwrap_or(Value::Null);
    let problem = match request.method.as_str() {
        "tools/call" => serde_json::from_value::<CallToolRequestParams>(params).err(),
        "tools/list" => serde_json::from_value::<Option<PaginatedRequestParams>>(params).err(),
        "initialize" => {
            return stdio::initialize_problem(&json!({"method": "initialize", "params": params}))
                .map(|why| ErrorData::invalid_params(why, None));
        }
        "ping" => None,
        _ => return None,
    };
    let why = match problem {
        Some(_) if request.params.is_none() => "no params".to_owned(),
        Some(e) => e.to_string(),
        None => "they do not fit the method".to_owned(),
    };
    Some(ErrorData::invalid_params(
        format!("Invalid params for {}: {why}", request.method),
        None,
    ))
}

/// Ends a helper task with the call that started it.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Counts a call as running until dropped.
struct Running<'a>(&'a tokio::sync::watch::Sender<usize>);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n -= 1);
    }
}

/// How many progress reports of one call wait to be written at most ([`queue_report`]).
const MAX_WAITING_REPORTS: usize = 1024;

/// Queues `report` to be written after those `waiting`. Every report of an MCP tool is
/// written, as its server sent it; a Bash output report (the output so far, counted in bytes)
/// replaces one of those waiting last, which it supersedes. A server that reports faster
/// than the client reads cannot make the queue grow past [`MAX_WAITING_REPORTS`]: the last
/// one waiting is replaced then (the reports count up: the newest says most).
fn queue_report(waiting: &mut std::collections::VecDeque<ToolProgress>, report: ToolProgress) {
    let superseding =
        |p: &ToolProgress| p.data.get("progress").is_none() && p.data.get("totalBytes").is_some();
    let full = waiting.len() >= MAX_WAITING_REPORTS;
    if let Some(last) = waiting.back_mut()
        && (full || (superseding(&report) && superseding(last)))
    {
        *last = report;
        return;
    }
    waiting.push_back(report);
}

/// Turns a call's progress reports into `notifications/progress` for one progress token.
/// MCP wants `progress` to increase with every notification: a report with a numeric
/// `progress` (an MCP tool's) is forwarded as it is, Bash's output reports count bytes, and
/// any other report counts one step; a report that would not increase is dropped.
struct ProgressForwarder {
    peer: Peer<RoleServer>,
    token: ProgressToken,
    last: Option<f64>,
}

impl ProgressForwarder {
    fn new(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        Self {
            peer,
            token,
            last: None,
        }
    }

    async fn send(&mut self, data: &Value) {
        let (progress, total, message) = convert::progress_of(data, self.last);
        if self.last.is_some_and(|last| progress <= last) {
            return;
        }
        self.last = Some(progress);
        let mut param = ProgressNotificationParam::new(self.token.clone(), progress);
        param.total = total;
        param.message = message;
        // A client that went away gets nothing more; the call's own result says the rest.
        let _ = self.peer.notify_progress(param).await;
    }
}

/// Serves `handler` over standard input and output until the client closes its end. Lines
/// that are not JSON-RPC requests are answered with JSON-RPC errors (see [`stdio`]).
pub async fn serve_stdio<S: ServerHandler>(handler: S) -> Result<(), ServeError> {
    serve_transport(
        handler,
        stdio::LineTransport::new(tokio::io::stdin(), tokio::io::stdout()),
        CancellationToken::new(),
    )
    .await
}

/// [`serve_stdio`], reporting every rejected line to `notices`, and cancelling `closed` the
/// moment the client's end closes (its input ends, or the output cannot be written;
/// [`stdio::LineTransport::with_closed_token`]): the host ends the calls in progress then,
/// rather than when rmcp stops waiting for them. Cancelling `stop` ends the session with
/// the client still there (a host stopped by a signal, once it has ended the calls with
/// [`ToolServer::shut_down`]): the answers made by then, and those of the calls still
/// ending (for up to 2 s, rmcp's wait), are written to standard output and flushed before
/// it returns. Dropping the future instead loses the answers not yet written.
pub async fn serve_stdio_with_notices<S: ServerHandler>(
    handler: S,
    notices: NoticeSink,
    closed: CancellationToken,
    stop: CancellationToken,
) -> Result<(), ServeError> {
    let transport = stdio::LineTransport::new(tokio::io::stdin(), tokio::io::stdout())
        .with_notices(notices)
        .with_closed_token(closed);
    serve_transport(handler, transport, stop).await
}

async fn serve_transport<S: ServerHandler>(
    handler: S,
    transport: stdio::LineTransport<tokio::io::Stdin>,
    stop: CancellationToken,
) -> Result<(), ServeError> {
    // The transport handles the client's cancels itself: a cancelled request's id stays in
    // use until its call has ended.
    let requests = Arc::new(stdio::Requests::default());
    let transport = transport.with_requests(Arc::clone(&requests));
    let output = transport.output_failure();
    // rmcp ends a cancelled session as one whose input ended: it waits (up to 2 s) for the
    // handlers' answers and writes them, each flushed, before it closes the transport.
    let service = stdio::Tracked::new(handler, requests)
        .serve_with_ct(transport, stop)
        .await
        .map_err(|e| ServeError::Initialize(e.to_string()))?;
    service
        .waiting()
        .await
        .map_err(|e| ServeError::Session(e.to_string()))?;
    // The client closed its end of the output: the answers due since were lost.
    match output.borrow().clone() {
        Some(why) => Err(ServeError::Output(why)),
        None => Ok(()),
    }
}

/// Why serving stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The client never completed `initialize`.
    #[error("the client did not initialize: {0}")]
    Initialize(String),
    /// The session ended abnormally.
    #[error("the MCP session failed: {0}")]
    Session(String),
    /// Writing to the client failed (it closed its end of the output): the answers due
    /// from then on were lost, and the session ended.
    #[error("the MCP session failed: cannot write to the client ({0}); answers were lost")]
    Output(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every MCP report waits its turn, in order; a Bash output report replaces the one
    /// waiting last; a flood of reports never waits past `MAX_WAITING_REPORTS`, the newest
    /// kept last.
    #[test]
    fn waiting_reports_are_kept_in_order_and_bounded() {
        let report = |data: Value| ToolProgress {
            tool_use_id: "toolu_1".into(),
            data,
        };
        let mut waiting = std::collections::VecDeque::new();
        for n in 1..=3 {
            queue_report(&mut waiting, report(json!({"progress": n, "total": 3})));
        }
        let progress: Vec<&Value> = waiting.iter().map(|r| &r.data["progress"]).collect();
        assert_eq!(progress, [&json!(1), &json!(2), &json!(3)]);

        let mut waiting = std::collections::VecDeque::new();
        for bytes in [10, 20, 30] {
            queue_report(
                &mut waiting,
                report(json!({"totalBytes": bytes, "output": "x"})),
            );
        }
        assert_eq!(waiting.len(), 1);
        assert_eq!(waiting[0].data["totalBytes"], 30);

        let mut waiting = std::collections::VecDeque::new();
        for n in 1..=5000 {
            queue_report(&mut waiting, report(json!({"progress": n})));
        }
        assert_eq!(waiting.len(), MAX_WAITING_REPORTS);
        assert_eq!(waiting[0].data["progress"], 1);
        assert_eq!(
            waiting.back().map(|r| r.data["progress"].clone()),
            Some(json!(5000))
        );
    }

    /// Two calls of one client changing its context at once both count: each change is
    /// applied to the other's result, not to the context both started from.
    #[test]
    fn concurrent_context_changes_are_not_lost() {
        let ctx = ToolUseContext::new(std::env::temp_dir());
        let server = ToolServer::new(
            ctx,
            Arc::new(tool_exec::AllowAll),
            Arc::new(tool_exec::NoHooks),
        );
        let slow = |dir: &'static str| {
            tool_core::ContextModifier::new(move |ctx: ToolUseContext| {
                // Slow, so that without the lock both would start from the same context.
                std::thread::sleep(std::time::Duration::from_millis(50));
                let mut dirs = ctx.working_directories();
                dirs.push(dir.into());
                ctx.with_working_directories(dirs)
            })
        };
        std::thread::scope(|s| {
            s.spawn(|| server.update_session(false, slow("/first")));
            s.spawn(|| server.update_session(false, slow("/second")));
        });
        let dirs = server
            .sessionless
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .working_directories();
        for dir in ["/first", "/second"] {
            assert!(dirs.contains(&std::path::PathBuf::from(dir)), "{dirs:?}");
        }
    }

    /// A server with the tools of an empty context, allowing everything.
    fn server() -> ToolServer {
        ToolServer::new(
            ToolUseContext::new(std::env::temp_dir()),
            Arc::new(tool_exec::AllowAll),
            Arc::new(tool_exec::NoHooks),
        )
    }

    /// Waiting for the client gives back only the running count it took: a guard made
    /// while no call was counted leaves the session with no call running when it ends
    /// (else the session would count as busy for ever and never be closed), and one made
    /// for a running call counts it again when it ends.
    #[test]
    fn waiting_on_the_client_gives_back_only_what_it_took() {
        let slot: Arc<SessionSlot> = Arc::default();
        drop(slot.waiting_on_client());
        assert_eq!(
            slot.calls().running,
            0,
            "a guard over no call left one running"
        );

        let call = SessionCall::start(Some(Arc::clone(&slot)), "1".into());
        let waiting = slot.waiting_on_client();
        assert_eq!(
            slot.calls().running,
            0,
            "a call waiting for its client still runs"
        );
        drop(waiting);
        assert_eq!(slot.calls().running, 1, "the call runs again once answered");
        drop(call);
        assert_eq!(slot.calls().running, 0);
    }

    /// A session's activity is found by its id, without touching the state of the other
    /// sessions: a lookup goes on while another session's context is locked (a context
    /// change being applied), and finds the session's calls and request ids.
    #[test]
    fn session_activity_is_found_without_touching_other_sessions() {
        let server = server();
        let (one, two) = (server.for_session(), server.for_session());
        let one_slot = Arc::clone(one.session_slot_for("one").expect("a session's server"));
        let two_slot = Arc::clone(two.session_slot_for("two").expect("a session's server"));
        let _call = SessionCall::start(Some(two_slot), "7".into());

        let (tx, rx) = std::sync::mpsc::channel();
        let lookup = server.clone();
        let held = one_slot.ctx.lock().unwrap_or_else(PoisonError::into_inner);
        std::thread::spawn(move || {
            let _ = tx.send((
                lookup.session_last_active("two").is_some(),
                lookup.session_request_running("two", &rmcp::model::RequestId::Number(7)),
                lookup.session_request_running("two", &rmcp::model::RequestId::Number(8)),
                lookup.session_last_active("three").is_none(),
            ));
        });
        let found = rx.recv_timeout(std::time::Duration::from_secs(5));
        drop(held);
        assert_eq!(
            found.expect("looking up session two waited for session one's context"),
            (true, true, false, true)
        );
        drop(one);
        // The first session's state is gone with its server: nothing answers for it.
        drop(one_slot);
        assert!(server.session_last_active("one").is_none());
    }
}
