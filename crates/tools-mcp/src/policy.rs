//! Which configured servers may start: the MCP controls of Claude Code's settings.
//!
//! An [`McpPolicy`] collects, from every settings level the host read:
//!
//! - `deniedMcpServers`: servers that never start, whatever their scope (managed ones too).
//!   Lists from every level are concatenated; a match wins over everything. A list that
//!   cannot be read (not an array, or an entry without a usable `serverName`,
//!   `serverCommand` or `serverUrl`) cannot say which servers it blocks, so it blocks every
//!   server until it is fixed: it fails closed, as a broken allowlist does.
//! - `allowedMcpServers`: when set at any level, only matching servers start. Lists from every
//!   level are concatenated, unless managed settings set `allowManagedMcpServersOnly`, which
//!   keeps the managed list only. An empty list allows nothing. The organisation's own
//!   servers need no allow entry: every `managedMcpServers` entry, and every
//!   `managed-mcp.json` entry that uses no `${VAR}`.
//! - `disabledMcpjsonServers`: project (`.mcp.json`) servers the user rejected, by name
//!   normalised on both sides as tool names are (`my_docs` rejects `my.docs`), as Claude
//!   Code compares them.
//! - `managedMcpServers` (managed settings only): remote servers provided to every user.
//!
//! Entries match by `serverName` (the configured label, exact), `serverCommand` (a stdio
//! server's command and arguments, exactly, in order) or `serverUrl` (a remote server's URL,
//! with `*` wildcards). A server's URL is read as a client connects to it (IDNA, case,
//! trailing dot, percent-escapes of plain characters), and so is the pattern's host; a
//! pattern without a port means the scheme's default port (`:*` any port), without a path
//! every path, without a query any query. For the allow check a stdio server must match a
//! `serverCommand` entry when the allowlist has any (as written, usable or not), and a
//! remote server a `serverUrl` entry when it has any; a `serverName` entry counts only
//! otherwise. `serverCommand` and `serverUrl` values are `${VAR}`-expanded on both sides:
//! the server's through the loader's environment, the entries' through the one the host
//! started with ([`McpPolicy::with_entry_env`]). An allow `serverUrl` whose `${VAR}` sits in
//! its scheme or host, or whose expansion adds a wildcard, is ignored.
//!
//! [`ConfigLoader::load`](crate::ConfigLoader::load) applies the policy; blocked servers are
//! reported as warnings that say which entry blocked them.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::config::{
    Diagnostic, EnvLookup, ServerConfig, TransportConfig, expand_env, is_valid_server_name,
};

/// One `allowedMcpServers`/`deniedMcpServers` entry, as written (before expansion).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerMatcher {
    /// `{"serverName": "github"}`: the configured name, exactly.
    Name(String),
    /// `{"serverCommand": ["npx", "-y", "pkg"]}`: a stdio server's command and arguments.
    Command(Vec<String>),
    /// `{"serverUrl": "https://*.example.com/*"}`: a remote server's URL.
    Url(String),
}

impl fmt::Display for ServerMatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (key, value) = match self {
            Self::Name(n) => ("serverName", Value::from(n.as_str())),
            Self::Command(c) => ("serverCommand", Value::from(c.clone())),
            Self::Url(u) => ("serverUrl", Value::from(u.as_str())),
        };
        // As written by someone else: control and invisible characters shown escaped.
        let value = tool_core::escape_hidden(&value.to_string());
        write!(f, "{{\"{key}\": {value}}}")
    }
}

/// The MCP server controls of a session's settings. See the [module docs](self).
#[derive(Clone, Default)]
pub struct McpPolicy {
    managed_allow: Option<AllowList>,
    other_allow: Option<AllowList>,
    managed_allow_only: bool,
    deny: Vec<ServerMatcher>,
    /// Where a `deniedMcpServers` list could not be read (`None`: a value without a file),
    /// in the order met: every server is blocked.
    deny_unreadable: Vec<Option<PathBuf>>,
    /// The `disabledMcpjsonServers` names, normalised ([`crate::normalize_name_for_mcp`]).
    disabled_project_servers: BTreeSet<String>,
    /// A `disabledMcpjsonServers` could not be read: which project servers the user
    /// rejected is not known, so every one is left out.
    disabled_project_servers_unreadable: bool,
    /// `managedMcpServers` entries with the file each came from.
    provided: BTreeMap<String, (Value, Option<PathBuf>)>,
    provided_rejected: Vec<Diagnostic>,
    entry_env: Option<EnvLookup>,
}

impl fmt::Debug for McpPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpPolicy")
            .field("managed_allow", &self.managed_allow)
            .field("other_allow", &self.other_allow)
            .field("managed_allow_only", &self.managed_allow_only)
            .field("deny", &self.deny)
            .field("deny_unreadable", &self.deny_unreadable)
            .field("disabled_project_servers", &self.disabled_project_servers)
            .field(
                "disabled_project_servers_unreadable",
                &self.disabled_project_servers_unreadable,
            )
            .field("provided", &self.provided.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// An allowlist's entries, and which kinds of entry were written (valid or not): a list
/// that names a command or a URL binds stdio or remote servers to those, even when that
/// entry itself turned out unusable.
#[derive(Debug, Clone, Default)]
struct AllowList {
    entries: Vec<ServerMatcher>,
    has_command: bool,
    has_url: bool,
    /// For a deny list: it, or one of its entries, could not be read.
    unreadable: bool,
}

impl AllowList {
    fn extend(&mut self, other: &Self) {
        self.entries.extend(other.entries.iter().cloned());
        self.has_command |= other.has_command;
        self.has_url |= other.has_url;
    }
}

/// A `managedMcpServers` entry that passed the checks: its name, its JSON and its file.
pub(crate) type ProvidedEntry<'a> = (&'a str, &'a Value, Option<&'a Path>);

/// Why [`McpPolicy`] keeps a server from starting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blocked {
    /// It matches this `deniedMcpServers` entry.
    Denied(ServerMatcher),
    /// An allowlist is set and nothing in it matches.
    NotAllowed,
    /// A `deniedMcpServers` list (in this file; `None`: a value given without one) could not
    /// be read, so it cannot say which servers it blocks: it blocks them all.
    DenyListUnreadable(Option<PathBuf>),
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Denied(m) => write!(
                f,
                "blocked by policy: it matches the deniedMcpServers entry {m}; \
                 the server is not started"
            ),
            Self::NotAllowed => f.write_str(
                "blocked by policy: no allowedMcpServers entry matches it; \
                 the server is not started",
            ),
            Self::DenyListUnreadable(file) => {
                f.write_str("blocked by policy: the deniedMcpServers list")?;
                if let Some(file) = file {
                    write!(f, " of {}", file.display())?;
                }
                f.write_str(
                    " cannot be read, so it cannot say which servers it blocks and blocks \
                     every one until it is fixed; the server is not started",
                )
            }
        }
    }
}

impl McpPolicy {
    /// Adds the MCP keys of one settings document. `managed` says whether it comes from
    /// managed (policy) settings: only those can set `allowManagedMcpServersOnly` and
    /// `managedMcpServers`. Give documents highest precedence first, as
    /// `tool_perms::settings::load_settings_files` returns them: a `managedMcpServers` entry
    /// a document already gave is kept (a later drop-in of `managed-settings.d` wins over
    /// an earlier one and over `managed-settings.json`). Problems name `file`.
    pub fn add_settings(
        &mut self,
        settings: &Value,
        managed: bool,
        file: Option<&Path>,
    ) -> Vec<Diagnostic> {
        let mut diags = Vec::new();
        if let Some(allow) = parse_list(settings, "allowedMcpServers", true, file, &mut diags) {
            let list = if managed {
                &mut self.managed_allow
            } else {
                &mut self.other_allow
            };
            list.get_or_insert_with(AllowList::default).extend(&allow);
        }
        if let Some(deny) = parse_list(settings, "deniedMcpServers", false, file, &mut diags) {
            if deny.unreadable {
                self.deny_unreadable.push(file.map(Path::to_path_buf));
            }
            self.deny.extend(deny.entries);
        }
        match settings.get("disabledMcpjsonServers") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for item in items {
                    match item.as_str() {
                        // Compared normalised, as Claude Code's `getProjectMcpServerStatus`
                        // does: `my_docs`, as tools and permission rules spell the server,
                        // disables `my.docs` too.
                        Some(name) => {
                            self.disabled_project_servers
                                .insert(crate::normalize_name_for_mcp(name));
                        }
                        None => diags.push(Diagnostic::warning(
                            None,
                            file,
                            format!(
                                "\"disabledMcpjsonServers\" holds {}, which is not a server \
                                 name; it is ignored",
                                tool_core::shown_setting(item)
                            ),
                        )),
                    }
                }
            }
            // The servers the user rejected are not known: none of the project's may run.
            Some(other) => {
                self.disabled_project_servers_unreadable = true;
                diags.push(Diagnostic::error(
                    None,
                    file,
                    format!(
                        "\"disabledMcpjsonServers\" must be an array of server names, not {}; \
                         it cannot say which project servers were rejected, so every project \
                         (.mcp.json) server is left out until it is fixed",
                        tool_core::shown_setting(other)
                    ),
                ));
            }
        }
        match settings.get("allowManagedMcpServersOnly") {
            None | Some(Value::Null) => {}
            Some(Value::Bool(on)) if managed => self.managed_allow_only |= on,
            Some(other) if managed => {
                // A mistyped switch must not open the allowlist to every user's additions.
                self.managed_allow_only = true;
                diags.push(Diagnostic::error(
                    None,
                    file,
                    format!(
                        "\"allowManagedMcpServersOnly\" must be true or false (got {other}); \
                         it is taken as true"
                    ),
                ));
            }
            Some(_) => diags.push(Diagnostic::warning(
                None,
                file,
                "\"allowManagedMcpServersOnly\" is read from managed settings only; it is ignored"
                    .into(),
            )),
        }
        match settings.get("managedMcpServers") {
            None | Some(Value::Null) => {}
            Some(_) if !managed => diags.push(Diagnostic::warning(
                None,
                file,
                "\"managedMcpServers\" is read from managed settings only; it is ignored".into(),
            )),
            Some(Value::Object(servers)) => {
                // Documents come highest precedence first: the first to name a server
                // keeps it, whole.
                for (name, entry) in servers {
                    let source = file.map(Path::to_path_buf);
                    self.provided
                        .entry(name.clone())
                        .or_insert_with(|| (entry.clone(), source));
                }
            }
            Some(_) => self.provided_rejected.push(Diagnostic::error(
                None,
                file,
                "\"managedMcpServers\" must be an object keyed by server name (the array form \
                 is Claude Desktop's); it is ignored"
                    .into(),
            )),
        }
        diags
    }

    /// The policy of a list of settings documents (`(managed, file, settings)`), highest
    /// precedence first (see [`add_settings`](Self::add_settings)).
    pub fn from_settings<'a>(
        documents: impl IntoIterator<Item = (bool, Option<&'a Path>, &'a Value)>,
    ) -> (Self, Vec<Diagnostic>) {
        let mut policy = Self::default();
        let mut diags = Vec::new();
        for (managed, file, settings) in documents {
            diags.extend(policy.add_settings(settings, managed, file));
        }
        (policy, diags)
    }

    /// The same policy expanding `${VAR}` in its `serverCommand` and `serverUrl` entries
    /// through `env` instead of the loader's environment: the environment the host started
    /// with, before settings files added theirs, so that a project's settings cannot change
    /// what an entry means. Servers' own values still expand through the loader's.
    pub fn with_entry_env(mut self, env: EnvLookup) -> Self {
        self.entry_env = Some(env);
        self
    }

    /// Whether `name` is listed in `disabledMcpjsonServers` (both normalised as tool names
    /// are, [`crate::normalize_name_for_mcp`]: `my_docs` there disables `my.docs`, as in
    /// Claude Code), or a `disabledMcpjsonServers` could not be read (then every project
    /// server is).
    pub fn is_project_server_disabled(&self, name: &str) -> bool {
        self.disabled_project_servers_unreadable
            || self
                .disabled_project_servers
                .contains(&crate::normalize_name_for_mcp(name))
    }

    /// Whether any allowlist or denylist is set (a policy with neither lets every server
    /// through).
    pub fn restricts(&self) -> bool {
        !self.deny.is_empty() || !self.deny_unreadable.is_empty() || self.allowlist().is_some()
    }

    /// The `managedMcpServers` entries, checked as Claude Code checks them: an `http`/`sse`
    /// type, an `https://` URL, no `command`/`args`/`env`/`headersHelper`, no `${VAR}`, no
    /// control or invisible characters. Entries that fail are reported and left out.
    pub(crate) fn provided_servers(&self) -> (Vec<ProvidedEntry<'_>>, Vec<Diagnostic>) {
        let mut diags = self.provided_rejected.clone();
        let mut kept = Vec::new();
        for (name, (entry, file)) in &self.provided {
            match check_provided(name, entry) {
                Ok(()) => kept.push((name.as_str(), entry, file.as_deref())),
                Err(why) => diags.push(Diagnostic {
                    skips_server: true,
                    ..Diagnostic::error(
                        Some(name),
                        file.as_deref(),
                        format!("managedMcpServers entry rejected: {why}"),
                    )
                }),
            }
        }
        (kept, diags)
    }

    fn allowlist(&self) -> Option<AllowList> {
        if self.managed_allow_only {
            return self.managed_allow.clone();
        }
        match (&self.managed_allow, &self.other_allow) {
            (None, None) => None,
            (a, b) => {
                let mut list = AllowList::default();
                a.iter().chain(b.iter()).for_each(|l| list.extend(l));
                Some(list)
            }
        }
    }

    /// The entries with `${VAR}` expanded through `env`, ready to check servers against.
    /// Allow entries an expansion could widen are dropped with a warning.
    pub(crate) fn resolve(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
        diags: &mut Vec<Diagnostic>,
    ) -> ResolvedPolicy {
        let env: &dyn Fn(&str) -> Option<String> = match &self.entry_env {
            Some(pinned) => &**pinned,
            None => env,
        };
        let allow = self.allowlist().map(|list| ResolvedAllowList {
            entries: list
                .entries
                .iter()
                .filter_map(|m| resolve_matcher(m, true, env, diags))
                .collect(),
            has_command: list.has_command,
            has_url: list.has_url,
        });
        let deny = self
            .deny
            .iter()
            .filter_map(|m| resolve_matcher(m, false, env, diags))
            .collect();
        ResolvedPolicy {
            allow,
            deny,
            deny_unreadable: self.deny_unreadable.first().cloned(),
        }
    }
}

/// A policy with its entries expanded.
pub(crate) struct ResolvedPolicy {
    allow: Option<ResolvedAllowList>,
    deny: Vec<(ServerMatcher, Resolved)>,
    /// The first deny list that could not be read: it blocks every server.
    deny_unreadable: Option<Option<PathBuf>>,
}

struct ResolvedAllowList {
    entries: Vec<(ServerMatcher, Resolved)>,
    has_command: bool,
    has_url: bool,
}

enum Resolved {
    Name(String),
    Command(Vec<String>),
    Url(UrlPattern),
}

impl ResolvedPolicy {
    /// Whether `server` may start. `skip_allowlist` is for the organisation's own servers.
    pub(crate) fn check(&self, server: &ServerConfig, skip_allowlist: bool) -> Result<(), Blocked> {
        if let Some(file) = &self.deny_unreadable {
            return Err(Blocked::DenyListUnreadable(file.clone()));
        }
        if let Some((written, _)) = self.deny.iter().find(|(_, m)| matches(m, server)) {
            return Err(Blocked::Denied(written.clone()));
        }
        let Some(allow) = self.allow.as_ref().filter(|_| !skip_allowlist) else {
            return Ok(());
        };
        let stdio = matches!(server.transport, TransportConfig::Stdio { .. });
        // Decided by what the lists say, not by what survived expansion: dropping an entry
        // never lets names count again.
        let strict_kind = if stdio {
            allow.has_command
        } else {
            allow.has_url
        };
        let allowed = allow.entries.iter().any(|(_, m)| match m {
            Resolved::Name(_) if strict_kind => false,
            m => matches(m, server),
        });
        if allowed {
            Ok(())
        } else {
            Err(Blocked::NotAllowed)
        }
    }
}

fn matches(m: &Resolved, server: &ServerConfig) -> bool {
    match (m, &server.transport) {
        (Resolved::Name(name), _) => *name == server.name,
        (Resolved::Command(argv), TransportConfig::Stdio { command, args, .. }) => {
            argv.len() == args.len() + 1
                && argv[0] == *command
                && argv[1..].iter().zip(args).all(|(a, b)| a == b)
        }
        (
            Resolved::Url(pattern),
            TransportConfig::Http { url, .. }
            | TransportConfig::Sse { url, .. }
            | TransportConfig::Ws { url, .. },
        ) => pattern.matches(url),
        _ => false,
    }
}

fn resolve_matcher(
    m: &ServerMatcher,
    allow: bool,
    env: &dyn Fn(&str) -> Option<String>,
    diags: &mut Vec<Diagnostic>,
) -> Option<(ServerMatcher, Resolved)> {
    let list = if allow {
        "allowedMcpServers"
    } else {
        "deniedMcpServers"
    };
    let mut missing = Vec::new();
    let resolved = match m {
        ServerMatcher::Name(n) => Resolved::Name(n.clone()),
        ServerMatcher::Command(argv) => Resolved::Command(
            argv.iter()
                .map(|a| expand_env(a, env, &mut missing))
                .collect(),
        ),
        ServerMatcher::Url(raw) if !raw.contains("://") => {
            // Without a scheme nothing would ever match: an allow entry is dropped, a deny
            // entry blocks under every scheme.
            if allow {
                diags.push(Diagnostic::warning(
                    None,
                    None,
                    format!(
                        "{list} entry {m} is ignored: a serverUrl needs a scheme, such as \
                         https:// (or *://)"
                    ),
                ));
                return None;
            }
            let expanded = expand_env(raw, env, &mut missing);
            Resolved::Url(UrlPattern::parse(&format!("*://{expanded}")))
        }
        ServerMatcher::Url(raw) => {
            let expanded = expand_env(raw, env, &mut missing);
            let head = url_head(raw);
            if allow
                && (head.contains("${")
                    || expanded.matches('*').count() != raw.matches('*').count())
            {
                diags.push(Diagnostic::warning(
                    None,
                    None,
                    format!(
                        "{list} entry {m} is ignored: a ${{VAR}} in its scheme or host, or one \
                         that adds a wildcard, could widen what it allows; write it literally"
                    ),
                ));
                return None;
            }
            Resolved::Url(UrlPattern::parse(&expanded))
        }
    };
    for var in missing {
        diags.push(Diagnostic::warning(
            None,
            None,
            format!("{list} entry {m}: environment variable {var} is not set and has no default"),
        ));
    }
    Some((m.clone(), resolved))
}

/// `scheme://authority` of a URL as written (what comes before its path).
fn url_head(url: &str) -> &str {
    let start = url.find("://").map_or(0, |i| i + 3);
    let end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    &url[..end]
}

/// A `serverUrl` pattern, split and normalised like the URLs it is matched against.
#[derive(Debug)]
struct UrlPattern {
    scheme: String,
    host: String,
    /// `None`: the server must use its scheme's default port.
    port: Option<String>,
    /// `None`: the pattern has no path and matches every path.
    path: Option<String>,
    /// `None`: the query is not compared.
    query: Option<String>,
}

/// The parts of a server's URL a pattern is compared with.
struct UrlParts {
    scheme: String,
    host: String,
    /// The port, explicit or the scheme's default (`None` when the scheme has none).
    port: Option<u16>,
    path: String,
    query: Option<String>,
}

impl UrlPattern {
    fn parse(pattern: &str) -> Self {
        let pattern = pattern.trim();
        let (scheme, after) = pattern.split_once("://").unwrap_or(("", pattern));
        let end = after.find(['/', '?', '#']).unwrap_or(after.len());
        let (authority, rest) = after.split_at(end);
        let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let (host, port) = split_port(authority);
        let rest = rest.split('#').next().unwrap_or_default();
        let (path, query) = match rest.split_once('?') {
            Some((path, query)) => (path, Some(query.to_owned())),
            None => (rest, None),
        };
        Self {
            scheme: scheme.to_ascii_lowercase(),
            host: normalize_host_pattern(host),
            port: port.map(str::to_owned),
            path: (!path.is_empty()).then(|| decode_unreserved(path)),
            query,
        }
    }

    fn matches(&self, url: &str) -> bool {
        let Some(url) = server_url(url) else {
            return false;
        };
        let port_matches = match (&self.port, url.port) {
            // No port in the pattern: the scheme's default port only.
            (None, port) => port == default_port(&url.scheme),
            (Some(pattern), Some(port)) => wildcard_match(pattern, &port.to_string()),
            (Some(pattern), None) => pattern == "*",
        };
        wildcard_match(&self.scheme, &url.scheme)
            && wildcard_match(&self.host, &url.host)
            && port_matches
            && self
                .path
                .as_deref()
                .is_none_or(|p| wildcard_match(p, &url.path))
            && self.query.as_deref().is_none_or(|q| {
                url.query
                    .as_deref()
                    .is_some_and(|actual| wildcard_match(q, actual))
            })
    }
}

/// A server's URL as a client connects to it, parsed by the WHATWG rules (percent-decoded,
/// IDNA-mapped, lower-cased host without a trailing dot), so that spelling a host
/// differently cannot dodge a deny entry. `None` when it does not parse: such a server
/// cannot be connected to, and matches no entry.
fn server_url(url: &str) -> Option<UrlParts> {
    let parsed = reqwest::Url::parse(url.trim()).ok()?;
    let host = parsed.host_str()?;
    Some(UrlParts {
        scheme: parsed.scheme().to_owned(),
        host: host.strip_suffix('.').unwrap_or(host).to_owned(),
        port: parsed.port_or_known_default(),
        path: decode_unreserved(parsed.path()),
        query: parsed.query().map(str::to_owned),
    })
}

/// `host[:port]` split at the last `:` outside an IPv6 literal's brackets.
fn split_port(authority: &str) -> (&str, Option<&str>) {
    match authority.rfind(':') {
        Some(i) if !authority[i..].contains(']') => (&authority[..i], Some(&authority[i + 1..])),
        _ => (authority, None),
    }
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "https" | "wss" => Some(443),
        "http" | "ws" => Some(80),
        _ => None,
    }
}

/// A pattern's host normalised as a URL's host would be (IDNA, lower case, no trailing
/// dot), its `*`s kept.
fn normalize_host_pattern(host: &str) -> String {
    const STAR: &str = "xstarx0";
    let host = host.strip_suffix('.').unwrap_or(host);
    let probe = format!("http://{}/", host.replace('*', STAR));
    match reqwest::Url::parse(&probe)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
    {
        Some(h) if !host.contains(STAR) => h.replace(STAR, "*"),
        _ => host.to_lowercase(),
    }
}

/// Decodes `%XX` escapes of unreserved characters (letters, digits, `-._~`), which mean
/// the same as the character itself; every other escape stays.
fn decode_unreserved(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = String::with_capacity(path.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = path.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
            && (byte.is_ascii_alphanumeric() || b"-._~".contains(&byte))
        {
            out.push(char::from(byte));
            i += 3;
            continue;
        }
        let ch = path[i..].chars().next().unwrap_or_default();
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// `*` matches any run of characters (also none); every other character only itself.
fn wildcard_match(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let middle: Vec<&str> = parts.collect();
    let Some((last, middle)) = middle.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

fn parse_list(
    settings: &Value,
    key: &str,
    allow: bool,
    file: Option<&Path>,
    diags: &mut Vec<Diagnostic>,
) -> Option<AllowList> {
    let value = settings.get(key)?;
    if value.is_null() {
        return None;
    }
    let Some(items) = value.as_array() else {
        // A broken allowlist allows nothing; a broken denylist cannot say what to block, so
        // it blocks everything.
        let consequence = if allow {
            "no server is allowed until it is fixed"
        } else {
            DENY_LIST_UNREADABLE
        };
        diags.push(Diagnostic::error(
            None,
            file,
            format!(
                "\"{key}\" must be an array of entries, not {}; {consequence}",
                tool_core::shown_setting(value)
            ),
        ));
        return Some(AllowList {
            unreadable: !allow,
            ..AllowList::default()
        });
    };
    let mut list = AllowList::default();
    for item in items {
        let present: Vec<&str> = ["serverName", "serverCommand", "serverUrl"]
            .into_iter()
            .filter(|k| item.get(*k).is_some())
            .collect();
        list.has_command |= present.contains(&"serverCommand");
        list.has_url |= present.contains(&"serverUrl");
        let valid: Vec<ServerMatcher> = present
            .iter()
            .filter_map(|k| parse_matcher(item, k, allow))
            .collect();
        if present.len() == 1 && valid.len() == 1 {
            list.entries.extend(valid);
        } else if !allow && (present.is_empty() || valid.len() < present.len()) {
            // What such an entry was to block is not known: the list blocks everything.
            list.unreadable = true;
            diags.push(Diagnostic::error(
                None,
                file,
                format!(
                    "\"{key}\" entry {} cannot be read: it needs serverName (a non-empty \
                     string), serverCommand (a non-empty array of strings) or serverUrl (a \
                     non-empty string); {DENY_LIST_UNREADABLE}",
                    shown_entry(item)
                ),
            ));
        } else if present.len() > 1 && !allow {
            // Blocking by each key blocks at least what was meant.
            diags.push(Diagnostic::warning(
                None,
                file,
                format!(
                    "\"{key}\" entry {} has several keys; each one blocks on its own",
                    shown_entry(item)
                ),
            ));
            list.entries.extend(valid);
        } else {
            let why = if present.len() > 1 {
                "give one of serverName, serverCommand or serverUrl per entry".to_owned()
            } else {
                format!(
                    "it needs one of serverName{}, serverCommand (a non-empty array of strings) \
                     or serverUrl",
                    if allow {
                        " (letters, digits, '-' and '_')"
                    } else {
                        ""
                    }
                )
            };
            diags.push(Diagnostic::warning(
                None,
                file,
                format!("\"{key}\" entry {} is ignored: {why}", shown_entry(item)),
            ));
        }
    }
    Some(list)
}

/// What is said of a deny list that cannot be read ([`Blocked::DenyListUnreadable`]).
const DENY_LIST_UNREADABLE: &str = "no MCP server starts until it is fixed (a deny list that cannot be read cannot say which servers it blocks)";

/// An entry as a diagnostic quotes it: its JSON, with control and invisible characters
/// escaped (`\u{200b}`), at most 200 characters.
fn shown_entry(item: &Value) -> String {
    let text = tool_core::escape_hidden(&item.to_string());
    match text.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// The entry's `key`, when its value is well-formed.
fn parse_matcher(item: &Value, key: &str, allow: bool) -> Option<ServerMatcher> {
    let value = item.get(key)?;
    match key {
        "serverName" => {
            let name = value.as_str()?;
            let valid = if allow {
                is_valid_server_name(name)
            } else {
                !name.is_empty()
            };
            valid.then(|| ServerMatcher::Name(name.to_owned()))
        }
        "serverCommand" => {
            let argv: Vec<String> = value
                .as_array()?
                .iter()
                .map(|a| a.as_str().map(str::to_owned))
                .collect::<Option<_>>()?;
            (!argv.is_empty()).then_some(ServerMatcher::Command(argv))
        }
        _ => {
            let url = value.as_str()?;
            (!url.trim().is_empty()).then(|| ServerMatcher::Url(url.to_owned()))
        }
    }
}

fn check_provided(name: &str, entry: &Value) -> Result<(), String> {
    if !is_valid_server_name(name) {
        return Err("the name may use only letters, digits, '-' and '_'".into());
    }
    let Some(obj) = entry.as_object() else {
        return Err("the entry must be an object".into());
    };
    match obj.get("type").and_then(Value::as_str) {
        Some("http" | "streamable-http" | "sse") => {}
        _ => return Err("\"type\" must be \"http\" or \"sse\"".into()),
    }
    if let Some(key) = ["command", "args", "env", "headersHelper"]
        .into_iter()
        .find(|k| obj.contains_key(*k))
    {
        return Err(format!(
            "\"{key}\" is not allowed: managed settings never name a program to run"
        ));
    }
    match obj.get("url").and_then(Value::as_str) {
        Some(url)
            if url
                .get(..8)
                .is_some_and(|s| s.eq_ignore_ascii_case("https://")) => {}
        _ => return Err("\"url\" must be an https:// URL".into()),
    }
    let mut problem = None;
    visit_strings(entry, &mut |s| {
        if problem.is_some() {
            return;
        }
        if s.contains("${") {
            problem = Some("${VAR} is not expanded here; write literal values".to_owned());
        } else if s.chars().any(tool_core::is_hidden_char) {
            problem = Some("a key or value contains a control or invisible character".to_owned());
        }
    });
    problem.map_or(Ok(()), Err)
}

/// Calls `f` with every string in `value`, object keys included, recursively.
pub(crate) fn visit_strings(value: &Value, f: &mut dyn FnMut(&str)) {
    match value {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter().for_each(|v| visit_strings(v, f)),
        Value::Object(map) => {
            for (k, v) in map {
                f(k);
                visit_strings(v, f);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards() {
        assert!(wildcard_match("*", ""));
        assert!(wildcard_match("a*c", "abbbc"));
        assert!(wildcard_match("a*c", "ac"));
        assert!(!wildcard_match("a*c", "a"));
        assert!(wildcard_match("a*ca", "aca"));
        assert!(!wildcard_match("a*a", "a"));
        assert!(wildcard_match("*.example.com", "x.y.example.com"));
        assert!(!wildcard_match("*.example.com", "example.com"));
        assert!(wildcard_match("/*", "/"));
        assert!(!wildcard_match("abc", "abcd"));
    }

    /// Found by review: a `deniedMcpServers` that is not an array, or holds an entry that
    /// names nothing (`{"servername": "x"}`), was "ignored" and the server it was to deny
    /// started. Such a list cannot say what it blocks, so it blocks every server (the
    /// organisation's too), with an error that says so; a readable list still blocks only
    /// what it names.
    #[test]
    fn a_deny_list_that_cannot_be_read_blocks_every_server() {
        let file = Path::new("/etc/settings.json");
        let servers = [
            ServerConfig::stdio("x", "node", ["x.js"]),
            ServerConfig::stdio("y", "node", ["y.js"]),
        ];
        for denied in [
            serde_json::json!({"serverName": "x"}),
            serde_json::json!([{"servername": "x"}]),
            serde_json::json!("x"),
            serde_json::json!([{"serverName": "x"}, {"serverName": ""}]),
            serde_json::json!([{"serverName": "x", "serverCommand": []}]),
        ] {
            let settings = serde_json::json!({"deniedMcpServers": denied});
            let (policy, diags) = McpPolicy::from_settings([(false, Some(file), &settings)]);
            assert!(policy.restricts(), "{denied}");
            assert_eq!(diags.len(), 1, "{denied}: {diags:?}");
            assert_eq!(
                diags[0].severity,
                crate::config::Severity::Error,
                "{denied}"
            );
            assert!(
                diags[0]
                    .message
                    .contains("no MCP server starts until it is fixed"),
                "{}",
                diags[0].message
            );
            let rules = policy.resolve(&|_| None, &mut Vec::new());
            for server in &servers {
                for exempt in [false, true] {
                    let blocked = rules.check(server, exempt).unwrap_err();
                    assert_eq!(
                        blocked,
                        Blocked::DenyListUnreadable(Some(file.to_path_buf())),
                        "{denied}"
                    );
                    assert!(
                        blocked.to_string().contains("/etc/settings.json"),
                        "{blocked}"
                    );
                }
            }
        }
        let settings = serde_json::json!({"deniedMcpServers": [{"serverName": "x"}]});
        let (policy, diags) = McpPolicy::from_settings([(false, Some(file), &settings)]);
        assert!(diags.is_empty(), "{diags:?}");
        let rules = policy.resolve(&|_| None, &mut Vec::new());
        assert!(rules.check(&servers[0], false).is_err());
        assert_eq!(rules.check(&servers[1], false), Ok(()));
    }

    /// An entry with an invisible character is quoted with it escaped.
    #[test]
    fn entries_are_quoted_with_invisible_characters_escaped() {
        let settings = serde_json::json!({"deniedMcpServers": [{"serverNam\u{200b}e": "x"}]});
        let (_, diags) = McpPolicy::from_settings([(false, None, &settings)]);
        assert!(
            diags[0].message.contains("serverNam\\u{200b}e"),
            "{}",
            diags[0].message
        );
        assert!(!diags[0].message.contains('\u{200b}'));
        let m = ServerMatcher::Name("gh\u{202e}x".into());
        assert_eq!(m.to_string(), "{\"serverName\": \"gh\\u{202e}x\"}");
    }

    #[test]
    fn url_patterns_follow_claude_codes_examples() {
        let p = |s| UrlPattern::parse(s);
        assert!(p("https://mcp.example.com/*").matches("https://mcp.example.com/api"));
        assert!(p("https://mcp.example.com").matches("https://mcp.example.com/any/path"));
        assert!(p("https://*.example.com/*").matches("https://api.internal.example.com/mcp"));
        assert!(!p("https://*.example.com/*").matches("https://example.org/mcp"));
        assert!(p("http://localhost:*/*").matches("http://localhost:8080/mcp"));
        assert!(p("*://mcp.example.com/*").matches("http://mcp.example.com/mcp"));
        assert!(p("https://Mcp.Example.com/*").matches("https://mcp.example.com./api"));
        assert!(!p("https://mcp.example.com/API").matches("https://mcp.example.com/api"));
        // Spelling the host differently does not dodge a pattern.
        assert!(p("https://evil.com/*").matches("https://%65vil.COM:443/x"));
        assert!(p("https://evil.com/*").matches("https://user@evil.com/x"));
        assert!(!p("https://evil.com/*").matches("https://evil.com.other.net/x"));
        assert!(!p("https://*.example.com/*").matches("https://x.example.com@evil.com/"));
    }
}
