//! MCP server configuration in Claude Code's shapes: `.mcp.json`, the `mcpServers` maps of
//! `~/.claude.json` (user and local scopes) and `--mcp-config` files.
//!
//! Loading never fails as a whole: every problem (a file that is not JSON, a server entry
//! without a command, an empty or reserved name, an unset `${VAR}`) becomes a
//! [`Diagnostic`] naming the file and the server, and the other servers still load.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::policy::{McpPolicy, visit_strings};

/// Server names Claude Code reserves for itself; entries with these names are skipped.
pub const RESERVED_SERVER_NAMES: &[&str] = &[
    "workspace",
    "claude-in-chrome",
    "computer-use",
    "Claude Preview",
    "Claude Browser",
];

/// The environment variable that tells a process how deep it sits in a chain of MCP servers
/// started one by another: every stdio server this crate starts gets it, one more than the
/// starting process's own depth ([`McpOptions::mcp_depth`](crate::McpOptions::mcp_depth)).
/// A process whose depth is 1 or more is itself an MCP server some client of this crate
/// started (`toolwright serve` named in `~/.claude.json`): [`ConfigLoader::load`] reads only
/// the servers given to it explicitly (`--mcp-config`), and from [`MAX_MCP_DEPTH`] on none.
pub const MCP_DEPTH_VAR: &str = "TOOLWRIGHT_MCP_DEPTH";

/// The depth ([`MCP_DEPTH_VAR`]) from which [`ConfigLoader::load`] loads no server at all,
/// not even the explicit ones: a chain of servers each given the next with `--mcp-config`
/// ends there.
pub const MAX_MCP_DEPTH: u32 = 4;

/// This process's depth in a chain of MCP servers, read from [`MCP_DEPTH_VAR`] through
/// `env`: 0 when unset or unreadable (not a whole number, surrounding blanks aside); a
/// number too large to hold is the largest.
pub fn mcp_depth(env: &dyn Fn(&str) -> Option<String>) -> u32 {
    let Some(raw) = env(MCP_DEPTH_VAR) else {
        return 0;
    };
    match raw.trim().parse::<u32>() {
        Ok(depth) => depth,
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => u32::MAX,
        Err(_) => 0,
    }
}

/// Where a server entry comes from, highest precedence first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConfigScope {
    /// `managed-mcp.json` in the managed settings directory. When that file exists it has
    /// exclusive control: only its servers and the [`Managed`](Self::Managed) ones load.
    Enterprise,
    /// A `--mcp-config` file (or JSON string) given on the command line.
    Dynamic,
    /// `managedMcpServers` in managed settings: remote servers provided to every user.
    Managed,
    /// `~/.claude.json` → `projects[<project dir>].mcpServers` and, inside a git repository,
    /// `projects[<its root>].mcpServers`, where Claude Code keys them (private to one
    /// project; the folder's own entry wins for a name).
    Local,
    /// `.mcp.json` in the project directory or a directory above it (shared through
    /// version control); the nearest one wins for a name.
    Project,
    /// `~/.claude.json` → top-level `mcpServers` (all projects of the user).
    User,
}

impl fmt::Display for ConfigScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Enterprise => "enterprise",
            Self::Dynamic => "dynamic",
            Self::Managed => "managed",
            Self::Local => "local",
            Self::Project => "project",
            Self::User => "user",
        })
    }
}

/// How to reach a server.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportConfig {
    /// A child process speaking newline-delimited JSON-RPC on stdin/stdout.
    Stdio {
        /// The program (looked up on `PATH` when not a path).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to the inherited environment.
        env: BTreeMap<String, String>,
    },
    /// Streamable HTTP (`type: "http"` or `"streamable-http"`).
    Http {
        /// The endpoint, e.g. `https://example.com/mcp`.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
    },
    /// Legacy HTTP+SSE (`type: "sse"`, deprecated). The SDK has no client for it any more;
    /// connecting reports a clear error.
    Sse {
        /// The SSE endpoint.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
    },
    /// WebSocket (`type: "ws"`). Not supported; connecting reports a clear error.
    Ws {
        /// The endpoint.
        url: String,
        /// Headers sent with the upgrade request.
        headers: BTreeMap<String, String>,
    },
}

impl TransportConfig {
    /// The transport's name as written in configuration (`stdio`, `http`, `sse`, `ws`).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Stdio { .. } => "stdio",
            Self::Http { .. } => "http",
            Self::Sse { .. } => "sse",
            Self::Ws { .. } => "ws",
        }
    }
}

/// One configured MCP server, after environment expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The configured name (the key in `mcpServers`).
    pub name: String,
    /// How to reach it.
    pub transport: TransportConfig,
    /// The per-server `timeout` (milliseconds in the file): used for startup and for each
    /// call when set. Values under one second are ignored, as in Claude Code.
    pub timeout: Option<Duration>,
    /// `alwaysLoad`: the server's tools are never deferred for ToolSearch.
    pub always_load: bool,
    /// Which scope the entry came from.
    pub scope: ConfigScope,
    /// The file it came from, if any.
    pub source: Option<PathBuf>,
}

impl ServerConfig {
    /// A stdio server entry (scope [`ConfigScope::Dynamic`]), for hosts and tests that build
    /// configuration in code.
    pub fn stdio(
        name: impl Into<String>,
        command: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            name: name.into(),
            transport: TransportConfig::Stdio {
                command: command.into(),
                args: args.into_iter().map(Into::into).collect(),
                env: BTreeMap::new(),
            },
            timeout: None,
            always_load: false,
            scope: ConfigScope::Dynamic,
            source: None,
        }
    }

    /// A Streamable HTTP server entry (scope [`ConfigScope::Dynamic`]).
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            transport: TransportConfig::Http {
                url: url.into(),
                headers: BTreeMap::new(),
            },
            timeout: None,
            always_load: false,
            scope: ConfigScope::Dynamic,
            source: None,
        }
    }

    /// The same entry with an environment variable for a stdio server (ignored otherwise).
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let TransportConfig::Stdio { env, .. } = &mut self.transport {
            env.insert(key.into(), value.into());
        }
        self
    }

    /// The same entry with a per-server timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

/// A server entry as read, with the warnings for the `${VAR}`s in it that are not set:
/// given only when the entry is used (not for one left out by the policy or overridden by a
/// higher scope, where they would send the user looking for a variable that does not
/// matter).
struct Pending {
    server: ServerConfig,
    unset: Vec<Diagnostic>,
}

/// How serious a [`Diagnostic`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Severity {
    /// The server still loads (unset variable, ignored field).
    Warning,
    /// The server (or file) is skipped, or failed to connect.
    Error,
}

/// A problem found while loading configuration or connecting, for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Warning or error.
    pub severity: Severity,
    /// The server concerned, when there is one.
    pub server: Option<String>,
    /// The file concerned, when there is one.
    pub file: Option<PathBuf>,
    /// What is wrong, in a sentence.
    pub message: String,
    /// Whether the problem makes the loader skip the server: said after the message
    /// (`; the server is skipped`) where loading goes on, not where it stops the command
    /// ([`ConfigLoader::mcp_config_errors`]).
    pub skips_server: bool,
}

impl Diagnostic {
    pub(crate) fn error(server: Option<&str>, file: Option<&Path>, message: String) -> Self {
        Self {
            severity: Severity::Error,
            server: server.map(str::to_owned),
            file: file.map(Path::to_path_buf),
            message,
            skips_server: false,
        }
    }

    pub(crate) fn warning(server: Option<&str>, file: Option<&Path>, message: String) -> Self {
        Self {
            severity: Severity::Warning,
            ..Self::error(server, file, message)
        }
    }

    /// The diagnostic as an error of the command line, which stops the command: without
    /// the `; the server is skipped` of a load that goes on.
    pub fn stopping_the_command(&self) -> String {
        Self {
            skips_server: false,
            ..self.clone()
        }
        .to_string()
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        write!(f, "{level}: ")?;
        if let Some(server) = &self.server {
            write!(f, "MCP server \"{}\"", tool_core::escape_hidden(server))?;
            if let Some(file) = &self.file {
                write!(f, " ({})", file.display())?;
            }
            write!(f, ": ")?;
        } else if let Some(file) = &self.file {
            write!(f, "{}: ", file.display())?;
        }
        f.write_str(&self.message)?;
        if self.skips_server {
            f.write_str("; the server is skipped")?;
        }
        Ok(())
    }
}

/// Reads environment variables for `${VAR}` expansion. The default reads the process
/// environment; tests pass a map.
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Where to look for configuration, in Claude Code's layout.
#[derive(Clone)]
pub struct ConfigLoader {
    /// The project root: `.mcp.json` is read here and in each directory above it, and it
    /// keys the local scope (with its git repository's root).
    pub project_dir: PathBuf,
    /// The file holding user and local servers: `$CLAUDE_CONFIG_DIR/.claude.json`, else
    /// `~/.claude.json`. `None` skips both scopes.
    pub claude_json: Option<PathBuf>,
    /// `--mcp-config` arguments: paths to files, or JSON strings.
    pub mcp_config_args: Vec<String>,
    /// `--strict-mcp-config`: only the `--mcp-config` servers are used.
    pub strict: bool,
    /// Environment lookup for `${VAR}` expansion.
    pub env: EnvLookup,
    /// Whether the project's `.mcp.json` may be used (a trusted folder). When not, its
    /// servers are left out *before* scopes are merged, so a user or local server of the
    /// same name stays (see [`untrusted_project_servers`](Self::untrusted_project_servers)).
    pub project_trusted: bool,
    /// The managed settings directory, where `managed-mcp.json` takes exclusive control
    /// when it exists ([`tool_core::managed_settings_dir`] by default; `None` skips it).
    pub managed_dir: Option<PathBuf>,
    /// What the settings allow, deny, disable and provide (see [`McpPolicy`]).
    pub policy: McpPolicy,
    /// How deep this process sits in a chain of MCP servers ([`MCP_DEPTH_VAR`], read by
    /// [`new`](Self::new) and [`with_env`](Self::with_env)). From 1 on, only the
    /// `--mcp-config` servers load (the scopes would start this process again, without
    /// end); from [`MAX_MCP_DEPTH`] on, none.
    pub mcp_depth: u32,
}

impl fmt::Debug for ConfigLoader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConfigLoader")
            .field("project_dir", &self.project_dir)
            .field("claude_json", &self.claude_json)
            .field("mcp_config_args", &self.mcp_config_args)
            .field("strict", &self.strict)
            .field("project_trusted", &self.project_trusted)
            .field("managed_dir", &self.managed_dir)
            .field("policy", &self.policy)
            .field("mcp_depth", &self.mcp_depth)
            .finish_non_exhaustive()
    }
}

impl ConfigLoader {
    /// A loader for `project_dir` using the process environment: `~/.claude.json` (or
    /// `$CLAUDE_CONFIG_DIR/.claude.json`), no `--mcp-config`, and the depth of
    /// [`MCP_DEPTH_VAR`].
    pub fn new(project_dir: impl Into<PathBuf>) -> Self {
        let env: EnvLookup = Arc::new(|name| std::env::var(name).ok());
        let claude_json = default_claude_json(&*env);
        let mcp_depth = mcp_depth(&*env);
        Self {
            project_dir: project_dir.into(),
            claude_json,
            mcp_config_args: Vec::new(),
            strict: false,
            env,
            project_trusted: true,
            managed_dir: Some(tool_core::managed_settings_dir()),
            policy: McpPolicy::default(),
            mcp_depth,
        }
    }

    /// The same loader at `depth` in a chain of MCP servers (see
    /// [`mcp_depth`](Self::mcp_depth)).
    pub fn with_mcp_depth(mut self, depth: u32) -> Self {
        self.mcp_depth = depth;
        self
    }

    /// The same loader applying `policy` (built from the session's settings).
    pub fn with_policy(mut self, policy: McpPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// `<managed_dir>/managed-mcp.json`, when it exists (even unreadable or broken: it is
    /// the administrator's, and a broken one must not open MCP up).
    pub fn enterprise_config(&self) -> Option<PathBuf> {
        let file = self.managed_dir.as_ref()?.join("managed-mcp.json");
        match std::fs::metadata(&file) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            _ => Some(file),
        }
    }

    /// Why this loader's `--mcp-config`/`--strict-mcp-config` must not run: an enterprise
    /// `managed-mcp.json` is present and owns the server set. Claude Code exits at startup
    /// with this message; [`load`](Self::load) on its own ignores those servers.
    pub fn dynamic_config_refused(&self) -> Option<String> {
        let file = self.enterprise_config()?;
        (!self.mcp_config_args.is_empty() || self.strict).then(|| {
            format!(
                "You cannot dynamically configure MCP servers when an enterprise MCP config is \
                 present ({})",
                file.display()
            )
        })
    }

    /// What makes the `--mcp-config` values unusable: a file that cannot be read, a file
    /// or inline value that is not JSON, a document whose `mcpServers` is not an object of
    /// servers, or a server entry that is skipped as malformed (no `command`, a bad `type`,
    /// ...). A host stops on these, as on a broken `--settings` (Claude Code exits on an
    /// invalid `--mcp-config`); [`load`](Self::load) on its own reports them and goes on
    /// without those servers. Warnings (an unset `${VAR}`, an ignored field) do not count.
    pub fn mcp_config_errors(&self) -> Vec<String> {
        let mut out = Vec::new();
        for arg in &self.mcp_config_args {
            let mut diags = Vec::new();
            if tool_core::is_inline_json(arg) {
                let trimmed = tool_core::without_bom(arg).trim_start();
                match tool_core::parse_config_json(trimmed) {
                    Ok(doc) => {
                        self.parse_document(&doc, ConfigScope::Dynamic, None, &mut diags);
                    }
                    Err(e) => out.push(format!("--mcp-config argument is not valid JSON: {e}")),
                }
            } else {
                let path = resolve(&self.project_dir, tool_core::without_bom(arg).trim_start());
                if let Some(doc) = read_json(&path, true, &mut diags) {
                    self.parse_document(&doc, ConfigScope::Dynamic, Some(&path), &mut diags);
                }
            }
            out.extend(
                diags
                    .iter()
                    .filter(|d| d.severity == Severity::Error)
                    .map(Diagnostic::stopping_the_command),
            );
        }
        out
    }

    /// The same loader, using the project's `.mcp.json` only when `trusted`.
    pub fn with_project_trusted(mut self, trusted: bool) -> Self {
        self.project_trusted = trusted;
        self
    }

    /// The names of the servers the project's `.mcp.json` files (its own and those above
    /// it) define, when the project is not trusted and they are therefore left out (empty
    /// otherwise, and in a process that reads no project servers at its
    /// [`mcp_depth`](Self::mcp_depth)).
    pub fn untrusted_project_servers(&self) -> Vec<String> {
        if self.project_trusted || self.strict || self.mcp_depth > 0 {
            return Vec::new();
        }
        let mut names: Vec<String> = Vec::new();
        for (file, doc) in self.project_documents(&mut Vec::new()) {
            for server in
                self.parse_document(&doc, ConfigScope::Project, Some(&file), &mut Vec::new())
            {
                if !names.contains(&server.name) {
                    names.push(server.name);
                }
            }
        }
        names
    }

    /// The keys of `.claude.json`'s `projects` whose servers are the local scope, nearest
    /// first: the project directory's own, then its git repository's root
    /// ([`tool_core::git_root`], as the trust record is read), then, in a linked worktree,
    /// its main checkout's root ([`tool_core::canonical_git_root`]), which is where Claude
    /// Code keys them (`getProjectPathForConfig`), so `claude mcp add` run anywhere in a
    /// repository or its worktrees writes there and the servers are found from every folder
    /// of them. The folder's own entry is still read, as it was before: it is the nearer
    /// one.
    fn local_scope_keys(&self) -> Vec<String> {
        let own = self.project_dir.to_string_lossy().into_owned();
        let absolute = std::path::absolute(&self.project_dir).unwrap_or(self.project_dir.clone());
        let root = tool_core::git_root(&absolute).map(|root| root.to_string_lossy().into_owned());
        // A linked worktree's main checkout, where `claude mcp add` in it wrote its servers.
        let main = tool_core::canonical_git_root(&absolute)
            .map(|root| root.to_string_lossy().into_owned());
        let mut keys = vec![own];
        for key in root.into_iter().chain(main) {
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        keys
    }

    /// The `.mcp.json` files of the project scope, nearest first: the project directory's
    /// own, then each directory's above it up to the root, as Claude Code finds them. A file
    /// above the project that another user may have put there or may change (its directory
    /// is writable by everyone, as `/tmp` is, and it is neither ours nor root's; or the file
    /// itself is writable by everyone) is not read, with a warning: such a file would name
    /// the programs to start for every project below it.
    fn project_documents(&self, diags: &mut Vec<Diagnostic>) -> Vec<(PathBuf, Value)> {
        let start = std::path::absolute(&self.project_dir).unwrap_or(self.project_dir.clone());
        let mut out = Vec::new();
        for (at, dir) in start.ancestors().enumerate() {
            let file = dir.join(".mcp.json");
            if at > 0
                && let Some(why) = foreign_file(&file)
            {
                diags.push(Diagnostic::warning(
                    None,
                    Some(&file),
                    format!(
                        "not read: {why}; a `.mcp.json` above the project that another user \
                         could have written does not name servers to start (move it, or make \
                         it yours and writable by you alone, to use it)"
                    ),
                ));
                continue;
            }
            if let Some(doc) = read_json(&file, false, diags) {
                out.push((file, doc));
            }
        }
        out
    }

    /// The same loader with an environment lookup (also used to find `.claude.json`, and
    /// for the [`mcp_depth`](Self::mcp_depth)).
    pub fn with_env(mut self, env: EnvLookup) -> Self {
        self.claude_json = default_claude_json(&*env);
        self.mcp_depth = mcp_depth(&*env);
        self.env = env;
        self
    }

    /// The same loader with `--mcp-config` arguments.
    pub fn with_mcp_config(mut self, args: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.mcp_config_args = args.into_iter().map(Into::into).collect();
        self
    }

    /// Loads every scope and merges them: the same name in several scopes takes the whole
    /// entry from the highest one (enterprise > dynamic > managed > local > project > user;
    /// no field merge; among `--mcp-config` arguments, the last one that names it; among
    /// `.mcp.json` files, the nearest to the project directory), then applies the
    /// [`policy`](Self::policy). With an enterprise `managed-mcp.json`, only its servers and
    /// the managed ones are read. Servers come back sorted by name.
    ///
    /// A process that is itself an MCP server started by a client of this crate
    /// ([`mcp_depth`](Self::mcp_depth) 1 or more) reads only `--mcp-config` (none beside an
    /// enterprise `managed-mcp.json`, which ignores it), with a warning naming the servers
    /// of the other scopes left out; from [`MAX_MCP_DEPTH`] on it loads none, with a
    /// warning saying so.
    pub fn load(&self) -> (Vec<ServerConfig>, Vec<Diagnostic>) {
        let depth = self.mcp_depth;
        if depth >= MAX_MCP_DEPTH {
            return (
                Vec::new(),
                vec![Diagnostic::warning(
                    None,
                    None,
                    format!(
                        "{MCP_DEPTH_VAR}={depth}: this process is an MCP server at the end of a \
                         chain of {depth} started one by another, so it loads no MCP server at \
                         all, not even those given with --mcp-config: the chain ends here"
                    ),
                )],
            );
        }
        if depth == 0 {
            return self.load_scopes();
        }
        // What the scopes would have given: said, not started.
        let everything = Self {
            mcp_depth: 0,
            mcp_config_args: Vec::new(),
            ..self.clone()
        };
        let mut left_out: Vec<String> = everything
            .load_scopes()
            .0
            .into_iter()
            .map(|s| s.name)
            .collect();
        let mut diags = Vec::new();
        let mut found = Vec::new();
        let enterprise = self.enterprise_config();
        if enterprise.is_none() {
            found.extend(self.dynamic_servers(&mut diags));
        }
        let (servers, mut more) = self.apply_policy(found, &[], Vec::new());
        left_out.retain(|name| !servers.iter().any(|s| &s.name == name));
        if !left_out.is_empty() {
            let shown: Vec<String> = left_out
                .iter()
                .take(10)
                .map(|name| format!("\"{}\"", tool_core::escape_hidden(name)))
                .collect();
            let more_names = match left_out.len().saturating_sub(10) {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            let beside = match &enterprise {
                Some(file) => format!(
                    "; beside the enterprise MCP configuration ({}) --mcp-config is ignored, \
                     so none loads",
                    file.display()
                ),
                None => String::new(),
            };
            diags.push(Diagnostic::warning(
                None,
                None,
                format!(
                    "{MCP_DEPTH_VAR}={depth}: this process is an MCP server that toolwright \
                     started, so it loads only the MCP servers given to it with --mcp-config, \
                     not those of ~/.claude.json, .mcp.json or the managed configuration, \
                     which would start more copies of it (a `toolwright serve` among them, \
                     itself without end): {}{more_names} not loaded{beside}",
                    shown.join(", ")
                ),
            ));
        }
        diags.append(&mut more);
        (servers, diags)
    }

    /// The servers of the `--mcp-config` arguments: a name given in several comes from the
    /// last of them, as in Claude Code (its configs are spread into one object in order).
    fn dynamic_servers(&self, diags: &mut Vec<Diagnostic>) -> Vec<Pending> {
        let mut dynamic: Vec<Pending> = Vec::new();
        let mut add_dynamic = |servers: Vec<Pending>| {
            for pending in servers {
                dynamic.retain(|earlier| earlier.server.name != pending.server.name);
                dynamic.push(pending);
            }
        };
        for arg in &self.mcp_config_args {
            if tool_core::is_inline_json(arg) {
                let trimmed = tool_core::without_bom(arg).trim_start();
                match tool_core::parse_config_json(trimmed) {
                    Ok(doc) => add_dynamic(self.parse_document_pending(
                        &doc,
                        ConfigScope::Dynamic,
                        None,
                        diags,
                        true,
                    )),
                    Err(e) => diags.push(Diagnostic::error(
                        None,
                        None,
                        format!("--mcp-config argument is not valid JSON: {e}"),
                    )),
                }
            } else {
                let path = resolve(&self.project_dir, tool_core::without_bom(arg).trim_start());
                if let Some(doc) = read_json(&path, true, diags) {
                    add_dynamic(self.parse_document_pending(
                        &doc,
                        ConfigScope::Dynamic,
                        Some(&path),
                        diags,
                        true,
                    ));
                }
            }
        }
        dynamic
    }

    /// [`load`](Self::load) at depth 0: every scope.
    fn load_scopes(&self) -> (Vec<ServerConfig>, Vec<Diagnostic>) {
        let mut diags = Vec::new();
        let mut found: Vec<Pending> = Vec::new();

        let (provided, problems) = self.policy.provided_servers();
        diags.extend(problems);
        let provided: Vec<Pending> = provided
            .into_iter()
            .filter_map(|(name, entry, file)| {
                self.parse_entry(name, entry, ConfigScope::Managed, file, &mut diags)
            })
            .collect();

        // managed-mcp.json entries skip the allowlist unless their values come from each
        // user's environment (`managedMcpServers` ones always skip it).
        let mut exempt: Vec<String> = Vec::new();
        if let Some(file) = self.enterprise_config() {
            if !self.mcp_config_args.is_empty() || self.strict {
                diags.push(Diagnostic::error(
                    None,
                    Some(&file),
                    "an enterprise MCP configuration has exclusive control over MCP servers; \
                     --mcp-config and --strict-mcp-config are ignored"
                        .into(),
                ));
            }
            match read_json(&file, true, &mut diags) {
                Some(doc) => {
                    let servers = doc.get("mcpServers").and_then(Value::as_object);
                    exempt.extend(servers.into_iter().flatten().filter_map(|(name, entry)| {
                        let mut uses_env = false;
                        visit_strings(entry, &mut |s| uses_env |= s.contains("${"));
                        (!uses_env).then(|| name.clone())
                    }));
                    found.extend(self.parse_document_pending(
                        &doc,
                        ConfigScope::Enterprise,
                        Some(&file),
                        &mut diags,
                        true,
                    ));
                }
                None => diags.push(Diagnostic::error(
                    None,
                    Some(&file),
                    "the enterprise MCP configuration cannot be used, and while it is present \
                     no other configured server loads"
                        .into(),
                )),
            }
            found.extend(provided);
            return self.apply_policy(found, &exempt, diags);
        }
        if !self.strict {
            found.extend(provided);
        }

        // A name given in several `--mcp-config` arguments comes from the last one; the
        // merge below keeps the first of equal scope, so earlier ones are left out there.
        found.extend(self.dynamic_servers(&mut diags));

        if !self.strict {
            if let Some(claude_json) = &self.claude_json
                && let Some(doc) = read_json(claude_json, false, &mut diags)
            {
                // The folder's own entry first: the merge keeps the first of equal scope.
                for key in self.local_scope_keys() {
                    if let Some(project) = doc.get("projects").and_then(|p| p.get(&key)) {
                        found.extend(self.parse_project_entry(
                            &key,
                            project,
                            claude_json,
                            &mut diags,
                        ));
                    }
                }
                found.extend(self.parse_document_pending(
                    &doc,
                    ConfigScope::User,
                    Some(claude_json),
                    &mut diags,
                    true,
                ));
            }
            // Nearest first: the merge keeps the first of equal scope.
            if self.project_trusted {
                for (project_file, doc) in self.project_documents(&mut diags) {
                    // Rejected ones are left out before scopes merge, like untrusted ones.
                    found.extend(
                        self.parse_document_pending(
                            &doc,
                            ConfigScope::Project,
                            Some(&project_file),
                            &mut diags,
                            true,
                        )
                        .into_iter()
                        .filter(|p| !self.policy.is_project_server_disabled(&p.server.name)),
                    );
                }
            }
        }
        self.apply_policy(found, &exempt, diags)
    }

    /// Merges scopes (highest wins, whole entry; the first of equal scope wins: `load` has
    /// already left out all but the last `--mcp-config` entry of a name), then drops what
    /// the policy blocks, with a warning for each. The warnings for unset variables are
    /// given for the entries left, the ones that are used.
    fn apply_policy(
        &self,
        mut found: Vec<Pending>,
        allowlist_exempt: &[String],
        mut diags: Vec<Diagnostic>,
    ) -> (Vec<ServerConfig>, Vec<Diagnostic>) {
        found.sort_by(|a, b| {
            (a.server.name.cmp(&b.server.name)).then(a.server.scope.cmp(&b.server.scope))
        });
        found.dedup_by(|later, earlier| later.server.name == earlier.server.name);
        if self.policy.restricts() {
            let rules = self.policy.resolve(&*self.env, &mut diags);
            found.retain(|Pending { server, .. }| {
                let exempt = match server.scope {
                    ConfigScope::Managed => true,
                    ConfigScope::Enterprise => allowlist_exempt.contains(&server.name),
                    _ => false,
                };
                match rules.check(server, exempt) {
                    Ok(()) => true,
                    Err(blocked) => {
                        diags.push(Diagnostic::warning(
                            Some(&server.name),
                            server.source.as_deref(),
                            blocked.to_string(),
                        ));
                        false
                    }
                }
            });
        }
        let mut servers = Vec::with_capacity(found.len());
        for pending in found {
            diags.extend(pending.unset);
            servers.push(pending.server);
        }
        diags.extend(prefix_clashes(&servers));
        (servers, diags)
    }

    /// The local scope: the servers of `.claude.json`'s `projects[key]`, the entry of this
    /// folder. Its problems name that entry (`projects["/dir"]`), not the file as a whole,
    /// and one that leaves the entry unreadable (not an object, an `mcpServers` that is not
    /// one) says what is skipped: this folder's servers, while the user's servers of the
    /// same file are still read.
    fn parse_project_entry(
        &self,
        key: &str,
        entry: &Value,
        claude_json: &Path,
        diags: &mut Vec<Diagnostic>,
    ) -> Vec<Pending> {
        const SKIPPED: &str = "this folder's MCP servers (local scope) are not read from it; \
                               the user's servers in this file still are";
        let quoted = serde_json::to_string(key).unwrap_or_else(|_| format!("\"{key}\""));
        let at = format!("projects[{}]", tool_core::escape_hidden(&quoted));
        let unreadable = if entry.is_object() {
            entry
                .get("mcpServers")
                .filter(|servers| !servers.is_object())
                .map(|servers| {
                    format!(
                        "{at}.mcpServers must be an object (found {}); {SKIPPED}",
                        tool_core::shown_setting(servers)
                    )
                })
        } else {
            Some(format!(
                "{at}: the entry for this folder must be an object (found {}); {SKIPPED}",
                tool_core::shown_setting(entry)
            ))
        };
        if let Some(message) = unreadable {
            diags.push(Diagnostic::error(None, Some(claude_json), message));
            return Vec::new();
        }
        let first = diags.len();
        let found =
            self.parse_document_pending(entry, ConfigScope::Local, Some(claude_json), diags, true);
        // The entry's own warnings (a misspelt `mcpServers`, servers without it) name it; a
        // server's problems name the server.
        for diag in &mut diags[first..] {
            if diag.server.is_none() {
                diag.message = format!("{at}: {}", diag.message);
            }
        }
        found
    }

    /// Parses the `mcpServers` map of one document (a `.mcp.json`, a `--mcp-config` file,
    /// a `.claude.json` or one of its `projects` entries).
    pub fn parse_document(
        &self,
        doc: &Value,
        scope: ConfigScope,
        file: Option<&Path>,
        diags: &mut Vec<Diagnostic>,
    ) -> Vec<ServerConfig> {
        self.parse_document_pending(doc, scope, file, diags, false)
            .into_iter()
            .map(|pending| pending.server)
            .collect()
    }

    /// As [`parse_document`](Self::parse_document); with `defer`, each server's warnings
    /// for its unset variables are kept with it (see [`Pending`]) instead of pushed to
    /// `diags`.
    fn parse_document_pending(
        &self,
        doc: &Value,
        scope: ConfigScope,
        file: Option<&Path>,
        diags: &mut Vec<Diagnostic>,
        defer: bool,
    ) -> Vec<Pending> {
        let Some(object) = doc.as_object() else {
            diags.push(Diagnostic::error(
                None,
                file,
                format!(
                    "the configuration must be a JSON object with \"mcpServers\" (found {}); \
                     nothing is read from it",
                    tool_core::shown_setting(doc)
                ),
            ));
            return Vec::new();
        };
        let Some(servers) = object.get("mcpServers") else {
            // A near miss would otherwise load nothing without a word.
            if let Some(key) = object.keys().find(|k| {
                let k = k.to_ascii_lowercase().replace(['_', '-'], "");
                k == "mcpservers" || k == "servers"
            }) {
                diags.push(Diagnostic::warning(
                    None,
                    file,
                    format!("\"{key}\" is not read: the servers go under \"mcpServers\""),
                ));
            } else {
                // Server entries without the wrapper (`{"name": {"command": ...}}`).
                let bare: Vec<&str> = object
                    .iter()
                    .filter(|(_, v)| v.get("command").is_some() || v.get("url").is_some())
                    .map(|(k, _)| k.as_str())
                    .collect();
                if !bare.is_empty() {
                    diags.push(Diagnostic::warning(
                        None,
                        file,
                        format!(
                            "no \"mcpServers\": {} {}, not read; the servers go under \"mcpServers\" ({{\"mcpServers\": {{\"{}\": ...}}}})",
                            bare.iter().map(|k| format!("\"{k}\"")).collect::<Vec<_>>().join(", "),
                            if bare.len() == 1 { "looks like a server" } else { "look like servers" },
                            bare[0]
                        ),
                    ));
                }
            }
            return Vec::new();
        };
        let Some(servers) = servers.as_object() else {
            diags.push(Diagnostic::error(
                None,
                file,
                "\"mcpServers\" must be an object".into(),
            ));
            return Vec::new();
        };
        servers
            .iter()
            .filter_map(|(name, entry)| {
                let mut pending = self.parse_entry(name, entry, scope, file, diags)?;
                if !defer {
                    diags.append(&mut pending.unset);
                }
                Some(pending)
            })
            .collect()
    }

    /// One server entry, its problems pushed to `diags`, except the warnings for `${VAR}`s
    /// that are not set: those come back with the entry, to be given only if it is used
    /// ([`load`](Self::load) leaves out entries that are disabled, blocked or overridden
    /// by a higher scope, and their variables do not matter).
    fn parse_entry(
        &self,
        name: &str,
        entry: &Value,
        scope: ConfigScope,
        file: Option<&Path>,
        diags: &mut Vec<Diagnostic>,
    ) -> Option<Pending> {
        let err = |diags: &mut Vec<Diagnostic>, msg: String| {
            diags.push(Diagnostic {
                skips_server: true,
                ..Diagnostic::error(Some(name), file, msg)
            });
        };
        if RESERVED_SERVER_NAMES.contains(&name) {
            diags.push(Diagnostic {
                skips_server: true,
                ..Diagnostic::warning(
                    Some(name),
                    file,
                    "this name is reserved by Claude Code".into(),
                )
            });
            return None;
        }
        if name.is_empty() {
            err(diags, "the server name is empty".into());
            return None;
        }
        // Loaded, as Claude Code does: its tools' names are made from the normalised name.
        let normalised = crate::naming::normalize_name_for_mcp(name);
        // Its tools' names read as another server's: the warning below says which rules hold.
        let ambiguous =
            normalised.contains("__") || normalised.starts_with('_') || normalised.ends_with('_');
        if !is_valid_server_name(name) {
            let rules = if ambiguous {
                String::new()
            } else {
                format!(", and permission rules match it as `mcp__{normalised}`")
            };
            diags.push(Diagnostic::warning(
                Some(name),
                file,
                format!(
                    "server names should use only letters, digits, '-' and '_'; its tools are \
                     named `mcp__{normalised}__<tool>`{rules}"
                ),
            ));
        }
        if ambiguous {
            diags.push(Diagnostic::warning(
                Some(name),
                file,
                format!(
                    "this name (normalised: `{normalised}`) holds `__` (or starts or ends with \
                     `_`): its tools' names (`mcp__<server>__<tool>`) read as another server's \
                     and may collide with them; allow its tools with `mcp__{normalised}__*`; \
                     a deny or ask rule for `mcp__{normalised}` or for the server its name \
                     reads as covers them too. Rename the server."
                ),
            ));
        }
        let Some(obj) = entry.as_object() else {
            err(diags, "the entry must be an object".into());
            return None;
        };
        let mut missing: Vec<String> = Vec::new();
        let mut expand = |s: &str| expand_env(s, &*self.env, &mut missing);

        let kind = match obj.get("type") {
            None => None,
            Some(Value::String(t)) => Some(t.as_str()),
            Some(_) => {
                err(diags, "\"type\" must be a string".into());
                return None;
            }
        };
        let transport = match kind {
            None | Some("stdio") => {
                if kind.is_none() && obj.contains_key("url") {
                    err(
                        diags,
                        "the entry has a \"url\" but no \"type\" (a missing type means stdio); \
                         add \"type\": \"http\" or \"sse\""
                            .into(),
                    );
                    return None;
                }
                let Some(command) = obj.get("command").and_then(Value::as_str) else {
                    err(diags, "a stdio server needs a \"command\" string".into());
                    return None;
                };
                // Said here, with the file and the server, not as a failure to start it.
                if command.trim().is_empty() {
                    err(diags, "its \"command\" is empty".into());
                    return None;
                }
                let args = match string_list(obj.get("args")) {
                    Ok(args) => args,
                    Err(()) => {
                        err(diags, "\"args\" must be an array of strings".into());
                        return None;
                    }
                };
                let env = match string_map(obj.get("env")) {
                    Ok(env) => env,
                    Err(()) => {
                        err(diags, "\"env\" must be an object of strings".into());
                        return None;
                    }
                };
                TransportConfig::Stdio {
                    command: expand(command),
                    args: args.iter().map(|a| expand(a)).collect(),
                    env: env.into_iter().map(|(k, v)| (k, expand(&v))).collect(),
                }
            }
            Some(t @ ("http" | "streamable-http" | "sse" | "ws")) => {
                let Some(url) = obj.get("url").and_then(Value::as_str) else {
                    err(diags, format!("a \"{t}\" server needs a \"url\" string"));
                    return None;
                };
                let headers = match string_map(obj.get("headers")) {
                    Ok(h) => h,
                    Err(()) => {
                        err(diags, "\"headers\" must be an object of strings".into());
                        return None;
                    }
                };
                let url = expand(url);
                // A URL that cannot be one is said here, with what is wrong, rather than as
                // the HTTP client's "builder error" at connection time. One still holding an
                // unset `${VAR}` loads as Claude Code's does (the variable was warned about).
                if !url.contains("${")
                    && let Some(problem) = url_problem(&url, t)
                {
                    err(diags, problem);
                    return None;
                }
                let headers: BTreeMap<String, String> =
                    headers.into_iter().map(|(k, v)| (k, expand(&v))).collect();
                for unsupported in ["headersHelper", "oauth"] {
                    if obj.contains_key(unsupported) {
                        diags.push(Diagnostic::warning(
                            Some(name),
                            file,
                            format!("\"{unsupported}\" is not supported yet and is ignored"),
                        ));
                    }
                }
                match t {
                    "sse" => TransportConfig::Sse { url, headers },
                    "ws" => TransportConfig::Ws { url, headers },
                    _ => TransportConfig::Http { url, headers },
                }
            }
            Some(other) => {
                err(
                    diags,
                    format!("unknown \"type\": \"{other}\" (expected stdio, http, sse or ws)"),
                );
                return None;
            }
        };

        let timeout = match obj.get("timeout") {
            None | Some(Value::Null) => None,
            Some(v) => match v.as_f64() {
                Some(ms) if ms >= 1000.0 && ms.is_finite() => {
                    Some(Duration::from_millis(ms as u64))
                }
                Some(_) => {
                    diags.push(Diagnostic::warning(
                        Some(name),
                        file,
                        "\"timeout\" under 1000 ms is ignored".into(),
                    ));
                    None
                }
                None => {
                    diags.push(Diagnostic::warning(
                        Some(name),
                        file,
                        "\"timeout\" must be a number of milliseconds; it is ignored".into(),
                    ));
                    None
                }
            },
        };
        let always_load = match obj.get("alwaysLoad") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            // Said, as a wrongly typed `timeout` is: `"yes"` would otherwise read as false
            // without a word.
            Some(other) => {
                diags.push(Diagnostic::warning(
                    Some(name),
                    file,
                    format!(
                        "\"alwaysLoad\" must be true or false, not {}; it is ignored (the \
                         server's tools may be deferred)",
                        tool_core::shown_setting(other)
                    ),
                ));
                false
            }
        };

        missing.sort();
        missing.dedup();
        let unset = missing
            .into_iter()
            .map(|var| {
                Diagnostic::warning(
                    Some(name),
                    file,
                    format!(
                        "environment variable {var} is not set and has no default; \
                         \"${{{var}}}\" is kept as written"
                    ),
                )
            })
            .collect();
        Some(Pending {
            server: ServerConfig {
                name: name.to_owned(),
                transport,
                timeout,
                always_load,
                scope,
                source: file.map(Path::to_path_buf),
            },
            unset,
        })
    }
}

/// A warning for each server whose name normalises to that of a server before it (by name):
/// their tools' names share the prefix `mcp__<name>__`, so a tool name both offer is
/// offered for the first server only ([`McpManager::connect`](crate::McpManager::connect)
/// warns again, naming the tools left out), and server-level permission rules match both.
fn prefix_clashes(servers: &[ServerConfig]) -> Vec<Diagnostic> {
    let mut first: BTreeMap<String, &str> = BTreeMap::new();
    let mut out = Vec::new();
    for server in servers {
        let normalised = crate::naming::normalize_name_for_mcp(&server.name);
        match first
            .get(&normalised)
            .map(|earlier| tool_core::escape_hidden(earlier))
        {
            Some(earlier) => out.push(Diagnostic::warning(
                Some(&server.name),
                server.source.as_deref(),
                format!(
                    "its tools are named `mcp__{normalised}__<tool>`, like those of server \
                     \"{earlier}\": where both have a tool of the same name, only server \
                     \"{earlier}\"'s is offered, and permission rules for `mcp__{normalised}` \
                     match both servers. Rename one of them."
                ),
            )),
            None => {
                first.insert(normalised, &server.name);
            }
        }
    }
    out
}

/// `$CLAUDE_CONFIG_DIR/.claude.json` when the variable is set, else `$HOME/.claude.json`.
pub fn default_claude_json(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(dir) = env("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join(".claude.json"));
    }
    env("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".claude.json"))
}

/// Whether `name` is a well-formed server name: non-empty, only ASCII letters, digits, `-`,
/// `_`. Other non-empty names still load, with a warning (their tools are named from
/// [`normalize_name_for_mcp`](crate::naming::normalize_name_for_mcp)); an allowlist's
/// `serverName` must be well-formed.
pub fn is_valid_server_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Expands `${VAR}` and `${VAR:-default}` in `input`. An unset variable without a default is
/// kept as written and its name pushed to `missing`. Other `${...}` forms (POSIX operators
/// such as `${VAR%pattern}`) are left alone and not reported.
pub fn expand_env(
    input: &str,
    env: &dyn Fn(&str) -> Option<String>,
    missing: &mut Vec<String>,
) -> String {
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let body = &after[..end];
        let (var, default) = match body.find(":-") {
            Some(i) => (&body[..i], Some(&body[i + 2..])),
            None => (body, None),
        };
        if is_env_name(var) {
            match (env(var), default) {
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) => {
                    missing.push(var.to_owned());
                    out.push_str(&rest[start..start + 2 + end + 1]);
                }
            }
        } else {
            out.push_str(&rest[start..start + 2 + end + 1]);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Why `file`, a `.mcp.json` above the project, may be another user's doing (its servers
/// would start for every project below it): it, or the link that names it, belongs to
/// neither this process's user nor root; it is writable by its group or by every user; or
/// its directory is, without the sticky bit that keeps others from replacing it (a shared
/// tree such as `/srv/projects`, mode 2775). `None` when none holds (or it does not exist).
#[cfg(unix)]
fn foreign_file(file: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt as _;
    let ours = |uid: u32| uid == 0 || uid == tool_core::process::effective_uid();
    let entry = std::fs::symlink_metadata(file).ok()?;
    let meta = std::fs::metadata(file).ok()?;
    for (what, m) in [("the link naming it", &entry), ("it", &meta)] {
        if !ours(m.uid()) {
            return Some(format!("{what} belongs to user id {}", m.uid()));
        }
    }
    if meta.mode() & 0o022 != 0 {
        return Some("it is writable by users other than its owner".to_owned());
    }
    let dir = file.parent().and_then(|dir| std::fs::metadata(dir).ok())?;
    let sticky = dir.mode() & 0o1000 != 0;
    (dir.mode() & 0o022 != 0 && !sticky).then(|| {
        "its directory is writable by users other than its owner, who may have put it there"
            .to_owned()
    })
}

#[cfg(not(unix))]
fn foreign_file(_file: &Path) -> Option<String> {
    None
}

fn resolve(base: &Path, p: &str) -> PathBuf {
    let path = Path::new(p);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

/// What makes `url` unusable for a server of type `kind`, if anything: not a URL, or not
/// one of the schemes the transport speaks. The URL itself is not repeated (it may carry a
/// token); only its scheme is.
fn url_problem(url: &str, kind: &str) -> Option<String> {
    let schemes: &[&str] = if kind == "ws" {
        &["ws", "wss"]
    } else {
        &["http", "https"]
    };
    match reqwest::Url::parse(url) {
        Err(e) => Some(format!("its \"url\" is not a valid URL ({e})")),
        Ok(u) if !schemes.contains(&u.scheme()) => Some(format!(
            "its \"url\" has the scheme \"{}\"; a \"{kind}\" server needs {}",
            u.scheme(),
            schemes.join(" or ")
        )),
        Ok(_) => None,
    }
}

fn read_json(path: &Path, required: bool, diags: &mut Vec<Diagnostic>) -> Option<Value> {
    let text = match tool_core::read_config_text(path) {
        Ok((t, repaired)) => {
            if repaired {
                diags.push(Diagnostic::warning(
                    None,
                    Some(path),
                    tool_core::NOT_UTF8_NOTE.to_owned(),
                ));
            }
            t
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => return None,
        Err(e) => {
            diags.push(Diagnostic::error(
                None,
                Some(path),
                format!("cannot read: {e}"),
            ));
            return None;
        }
    };
    // A blank optional file (a tool that truncated `~/.claude.json`) holds no servers, as a
    // blank settings file is `{}`; a file the user named (`--mcp-config`) must hold some.
    if tool_core::without_bom(&text).trim().is_empty() {
        if required {
            diags.push(Diagnostic::error(
                None,
                Some(path),
                "the file is empty; it names no MCP servers".to_owned(),
            ));
        }
        return None;
    }
    // A byte order mark (Windows editors write one) is not JSON, and not part of the file's
    // content either.
    match tool_core::parse_config_json(&text) {
        Ok(v) => Some(v),
        Err(e) => {
            diags.push(Diagnostic::error(
                None,
                Some(path),
                format!("not valid JSON ({e}); its MCP servers are skipped"),
            ));
            None
        }
    }
}

fn string_list(v: Option<&Value>) -> Result<Vec<String>, ()> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map(str::to_owned).ok_or(()))
            .collect(),
        Some(_) => Err(()),
    }
}

fn string_map(v: Option<&Value>) -> Result<BTreeMap<String, String>, ()> {
    match v {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())).ok_or(()))
            .collect(),
        Some(_) => Err(()),
    }
}

/// Parses one `.mcp.json`-shaped document with the process environment; a convenience for
/// hosts that already hold the JSON.
pub fn parse_mcp_json(
    doc: &Value,
    scope: ConfigScope,
    project_dir: &Path,
) -> (Vec<ServerConfig>, Vec<Diagnostic>) {
    let loader = ConfigLoader::new(project_dir);
    let mut diags = Vec::new();
    let servers = loader.parse_document(doc, scope, None, &mut diags);
    (servers, diags)
}
