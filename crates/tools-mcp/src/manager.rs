//! [`McpManager`]: connects every configured server concurrently and hands out their tools.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tool_core::{McpClientInfo, RefreshTools, Tool, ToolError};

use crate::client::{ServerConn, ServerState};
use crate::config::{Diagnostic, ServerConfig};
use crate::options::McpOptions;
use crate::resources::{ListMcpResourcesTool, ReadMcpResourceTool};

pub(crate) struct Inner {
    pub(crate) servers: Vec<Arc<ServerConn>>,
    pub(crate) opts: Arc<McpOptions>,
    blob_counter: AtomicU64,
}

impl Inner {
    pub(crate) fn server(&self, name: &str) -> Result<Arc<ServerConn>, ToolError> {
        self.servers
            .iter()
            .find(|s| s.name() == name)
            .cloned()
            .ok_or_else(|| {
                let known: Vec<String> = self
                    .servers
                    .iter()
                    .map(|s| tool_core::escape_hidden(s.name()))
                    .collect();
                ToolError::msg(format!(
                    "MCP server \"{}\" is not configured (configured servers: {})",
                    tool_core::escape_hidden(name),
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ))
            })
    }

    pub(crate) fn next_blob(&self) -> u64 {
        self.blob_counter.fetch_add(1, Ordering::SeqCst)
    }
}

/// What [`McpManager::servers`] reports for one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    /// The configured name.
    pub name: String,
    /// The transport (`stdio`, `http`, ...).
    pub transport: &'static str,
    /// Connecting (the first time), connected, failed (with the reason) or shut down.
    pub state: ServerState,
    /// How many tools it offers now.
    pub tool_count: usize,
}

/// The MCP connection manager: owns one connection per configured server and exposes their
/// tools as `Arc<dyn Tool>`. See the [crate docs](crate) for an example.
///
/// Dropping the manager ends every server: the connections are cancelled and each stdio
/// server killed with its whole process group (what it started, too).
/// [`shutdown`](Self::shutdown) does the same gracefully (stdin closed, then, after 3 s, SIGTERM
/// to the server's process group, after 2 s more SIGKILL to the server; then SIGKILL to what
/// is left of its process group) and waits for it; [`terminate`](Self::terminate) within a
/// short grace, for a host that is being stopped.
pub struct McpManager {
    inner: Arc<Inner>,
}

impl fmt::Debug for McpManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpManager")
            .field("servers", &self.inner.servers)
            .finish_non_exhaustive()
    }
}

impl McpManager {
    /// Connects to every server at once, each within its startup timeout, so one slow or
    /// broken server never delays the others. Servers that fail stay in the manager (their
    /// tools are absent; a later [`reconnect`](Self::reconnect) may bring them in) and are
    /// reported in the diagnostics, with the reason and the tail of their stderr. The
    /// diagnostics also carry [`McpOptions::env_warnings`], as warnings.
    pub async fn connect(configs: Vec<ServerConfig>, opts: McpOptions) -> (Self, Vec<Diagnostic>) {
        let (manager, early) = Self::configure(configs, opts);
        let diagnostics = connect_all(Arc::clone(&manager.inner), early).await;
        (manager, diagnostics)
    }

    /// The manager at once, its servers [`ServerState::Connecting`] (no tools yet;
    /// [`client_infos`](Self::client_infos) says they are pending), the diagnostics known
    /// before connecting (limits from the environment, names given twice), and the future
    /// that connects them as [`connect`](Self::connect) does and returns what went wrong: for a
    /// host that answers meanwhile (`toolwright serve` answers `initialize` before a slow
    /// server is up) and reads [`tools`](Self::tools) when the future is done. First
    /// connections are not announced through [`McpOptions::on_tools_changed`] (later
    /// changes are). A call that needs a server still connecting waits for that
    /// connection. Dropping the future abandons the connections it had not made (their
    /// processes end with it).
    pub fn connect_in_background(
        configs: Vec<ServerConfig>,
        opts: McpOptions,
    ) -> (
        Self,
        Vec<Diagnostic>,
        impl std::future::Future<Output = Vec<Diagnostic>> + Send + 'static,
    ) {
        let (manager, early) = Self::configure(configs, opts);
        let connecting = connect_all(Arc::clone(&manager.inner), Vec::new());
        (manager, early, connecting)
    }

    /// The manager with one (unconnected) server per name, and the diagnostics known before
    /// connecting: limits from the environment that could not be used, names given twice.
    fn configure(configs: Vec<ServerConfig>, opts: McpOptions) -> (Self, Vec<Diagnostic>) {
        let opts = Arc::new(opts);
        // Limits from the environment that could not be used (the defaults stand in).
        let mut diagnostics: Vec<Diagnostic> = opts
            .env_warnings
            .iter()
            .map(|w| Diagnostic::warning(None, None, w.clone()))
            .collect();
        let mut seen = HashSet::new();
        let mut servers = Vec::new();
        for config in configs {
            if !seen.insert(config.name.clone()) {
                diagnostics.push(Diagnostic::error(
                    Some(&config.name),
                    config.source.as_deref(),
                    "configured twice; the first entry is used".into(),
                ));
                continue;
            }
            servers.push(ServerConn::new(config, opts.clone()));
        }
        servers.sort_by(|a, b| a.name().cmp(b.name()));
        let manager = Self {
            inner: Arc::new(Inner {
                servers,
                opts,
                blob_counter: AtomicU64::new(0),
            }),
        };
        (manager, diagnostics)
    }

    /// One warning per server with tools left out because a tool before them (of a server
    /// earlier by name, or earlier in the same server's list) has the same name after
    /// normalisation (servers `my.server` and `my_server`, or two tool names that differ
    /// only in characters outside `[A-Za-z0-9_-]`). Each tool left out is named by its own
    /// name on its server, with the name both share and the tool offered under it.
    fn name_collisions(inner: &Inner) -> Vec<Diagnostic> {
        /// A tool offered: its server's name and its own name there.
        #[derive(Clone)]
        struct Offered {
            server: String,
            tool: String,
        }
        let mut owner: std::collections::HashMap<String, Offered> =
            std::collections::HashMap::new();
        let mut out = Vec::new();
        for server in &inner.servers {
            // (the tool left out, the name it shares, the tool offered under that name)
            let mut hidden: Vec<(String, String, Offered)> = Vec::new();
            for tool in server.tools() {
                let own = tool
                    .mcp_info()
                    .map_or_else(|| tool.name().to_owned(), |info| info.tool_name);
                match owner.get(tool.name()) {
                    Some(first) => hidden.push((own, tool.name().to_owned(), first.clone())),
                    None => {
                        owner.insert(
                            tool.name().to_owned(),
                            Offered {
                                server: server.name().to_owned(),
                                tool: own,
                            },
                        );
                    }
                }
            }
            if hidden.is_empty() {
                continue;
            }
            let shown: Vec<String> = hidden
                .iter()
                .take(5)
                .map(|(tool, name, first)| {
                    format!(
                        "tool \"{}\", whose name {name} (offered from server \"{}\") is that of \
                         tool \"{}\"",
                        tool_core::escape_hidden(tool),
                        tool_core::escape_hidden(&first.server),
                        tool_core::escape_hidden(&first.tool)
                    )
                })
                .collect();
            let more = match hidden.len() {
                n if n > 5 => format!(" and {} more", n - 5),
                _ => String::new(),
            };
            out.push(Diagnostic::warning(
                Some(server.name()),
                server.config.source.as_deref(),
                format!("{}{}{more}", not_offered(hidden.len()), shown.join("; ")),
            ));
        }
        out
    }

    /// Every MCP tool of the connected servers, sorted by name and de-duplicated (first
    /// wins), followed by ListMcpResourcesTool and ReadMcpResourceTool when a connected
    /// server has resources.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        collect_tools(&self.inner)
    }

    /// The two resource tools, whether or not any server has resources.
    pub fn resource_tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![
            Arc::new(ListMcpResourcesTool {
                inner: self.inner.clone(),
            }),
            Arc::new(ReadMcpResourceTool {
                inner: self.inner.clone(),
            }),
        ]
    }

    /// A [`RefreshTools`] hook for `ToolOptions::refresh_tools`: returns the current MCP
    /// tools (after `tools/list_changed` notifications and reconnections).
    pub fn refresh_tools_hook(&self) -> RefreshTools {
        let inner = self.inner.clone();
        Arc::new(move || collect_tools(&inner))
    }

    /// The servers' names and connection states, for `ToolOptions::mcp_clients`.
    pub fn client_infos(&self) -> Vec<McpClientInfo> {
        client_infos(&self.inner)
    }

    /// The status of every configured server.
    pub fn servers(&self) -> Vec<ServerStatus> {
        self.inner
            .servers
            .iter()
            .map(|s| ServerStatus {
                name: s.name().to_owned(),
                transport: s.config.transport.kind(),
                state: s.state(),
                tool_count: s.tools().len(),
            })
            .collect()
    }

    /// The captured stderr of a stdio server (and its `notifications/message` log lines),
    /// newest bytes only, the values of the server's configured `env` and `headers` that may
    /// be secrets shown as `[redacted]` (the rule is in `docs/mcp.md`).
    pub fn stderr(&self, server: &str) -> Option<String> {
        self.inner
            .servers
            .iter()
            .find(|s| s.name() == server)
            .map(|s| s.stderr.text())
    }

    /// The process id of a connected stdio server.
    pub fn server_pid(&self, server: &str) -> Option<u32> {
        self.inner
            .servers
            .iter()
            .find(|s| s.name() == server)
            .and_then(|s| s.pid())
    }

    /// Reconnects `server` if it is not connected (subject to backoff after failures) and
    /// re-lists its tools. Errors name the server.
    pub async fn reconnect(&self, server: &str) -> Result<(), ToolError> {
        let conn = self.inner.server(server)?;
        conn.live().await?;
        conn.refresh_tools()
            .await
            .map_err(|e| ToolError::msg(format!("{}: {e}", conn.label())))
    }

    /// Closes every connection and waits for stdio servers to exit (stdin closed; after 3 s
    /// SIGTERM to the server's process group, after 2 s more SIGKILL), then kills what is
    /// left of each server's process group.
    pub async fn shutdown(&self) {
        futures::future::join_all(self.inner.servers.iter().map(|s| s.shutdown())).await;
    }

    /// Closes every connection within `grace`, for a host that is being stopped (Ctrl-C,
    /// SIGTERM): each stdio server's process group is sent SIGTERM and its stdin closed at
    /// once, and whatever still runs when `grace` is over is killed (SIGKILL to the server's
    /// process group). All servers at once. Unlike dropping the manager, which kills them on
    /// the spot, this lets a server that cleans up on SIGTERM do so: a server that runs
    /// commands in process groups of their own (`toolwright serve`) stops them, where a kill
    /// would leave them running. Dropping the future kills what it has not ended yet.
    pub async fn terminate(&self, grace: std::time::Duration) {
        futures::future::join_all(self.inner.servers.iter().map(|s| s.terminate(grace))).await;
    }
}

impl Drop for McpManager {
    fn drop(&mut self) {
        for server in &self.inner.servers {
            server.shutdown_now();
        }
    }
}

/// The connection state of each server of `inner`.
fn client_infos(inner: &Inner) -> Vec<McpClientInfo> {
    inner
        .servers
        .iter()
        .map(|s| McpClientInfo {
            name: s.name().to_owned(),
            state: match s.state() {
                ServerState::Connecting => tool_core::McpClientState::Pending,
                ServerState::Connected => tool_core::McpClientState::Connected,
                ServerState::Failed(_) | ServerState::ShutDown => tool_core::McpClientState::Failed,
            },
        })
        .collect()
}

/// Connects every server of `inner` at once (see [`McpManager::connect`]); `early`: the
/// diagnostics found before.
async fn connect_all(inner: Arc<Inner>, early: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut diagnostics = early;
    let results = futures::future::join_all(
        inner
            .servers
            .iter()
            .map(|s| async move { (s, s.connect_first().await) }),
    )
    .await;
    for (server, result) in results {
        match result {
            Err(e) => diagnostics.push(Diagnostic::error(
                Some(server.name()),
                server.config.source.as_deref(),
                format!("failed to connect: {e}"),
            )),
            Ok(()) => diagnostics.extend(listing_warnings(server)),
        }
    }
    diagnostics.extend(McpManager::name_collisions(&inner));
    diagnostics
}

/// Most tools left out that `connect` names one warning each; the rest get one warning
/// together (the server's log names them all).
const LEFT_OUT_NAMED: usize = 10;

/// One warning for each tool `server`'s listing left out (named, or by its place when it has
/// no name, with the reason: no `inputSchema`, no name, ...), and for a server that declares
/// no tools, rather than tools missing without a word.
fn listing_warnings(server: &ServerConn) -> Vec<Diagnostic> {
    let notes = server.listing_notes();
    let source = server.config.source.as_deref();
    let mut out: Vec<Diagnostic> = notes
        .iter()
        .take(LEFT_OUT_NAMED)
        .map(|note| Diagnostic::warning(Some(server.name()), source, note.clone()))
        .collect();
    if notes.len() > LEFT_OUT_NAMED {
        out.push(Diagnostic::warning(
            Some(server.name()),
            source,
            left_out_more(notes.len() - LEFT_OUT_NAMED),
        ));
    }
    out
}

/// The warning for `count` tools left out beyond those named one by one.
fn left_out_more(count: usize) -> String {
    if count == 1 {
        "tools/list: 1 more tool is left out (the server's log names it and why)".to_owned()
    } else {
        format!("tools/list: {count} more tools are left out (the server's log names them and why)")
    }
}

/// The start of the warning for `count` tools hidden by a name offered before them; the
/// names follow.
fn not_offered(count: usize) -> String {
    if count == 1 {
        "1 of its tools is not offered: it has the same name after normalisation as a tool \
         offered before it: "
            .to_owned()
    } else {
        format!(
            "{count} of its tools are not offered: each has the same name after normalisation \
             as a tool offered before it: "
        )
    }
}

fn collect_tools(inner: &Arc<Inner>) -> Vec<Arc<dyn Tool>> {
    let mut tools: Vec<Arc<dyn Tool>> = inner.servers.iter().flat_map(|s| s.tools()).collect();
    tools.sort_by(|a, b| a.name().cmp(b.name()));
    // Reported at connection time (`name_collisions`); a list refreshed later can collide
    // too, so it is logged here as well.
    tools.dedup_by(|later, earlier| {
        let same = later.name() == earlier.name();
        if same {
            tracing::warn!(
                tool = later.name(),
                "two MCP tools have the same name after normalisation; only the first is offered"
            );
        }
        same
    });
    if inner
        .servers
        .iter()
        .any(|s| s.supports_resources() && s.state() == ServerState::Connected)
    {
        tools.push(Arc::new(ListMcpResourcesTool {
            inner: inner.clone(),
        }));
        tools.push(Arc::new(ReadMcpResourceTool {
            inner: inner.clone(),
        }));
    }
    tools
}

#[cfg(test)]
mod wording_tests {
    use super::*;

    /// The counts in warnings agree with their number: `1 more tool is`, `2 more tools are`.
    #[test]
    fn counts_of_tools_agree_in_number() {
        assert_eq!(
            left_out_more(1),
            "tools/list: 1 more tool is left out (the server's log names it and why)"
        );
        assert_eq!(
            left_out_more(3),
            "tools/list: 3 more tools are left out (the server's log names them and why)"
        );
        assert!(not_offered(1).starts_with("1 of its tools is not offered: it has the same name"));
        assert!(
            not_offered(2).starts_with("2 of its tools are not offered: each has the same name")
        );
    }
}
