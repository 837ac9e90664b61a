//! [`ToolUseContext`]: everything a call may read or change about the session around it.
//!
//! The context is cheap to clone (one `Arc`). Plain settings (cwd, permission state, options)
//! are copied on write by the `with_*` methods, which is how a context modifier derives the
//! next context. Shared state (the file-state cache, app state, denial tracking,
//! content-replacement decisions) is shared by all clones on purpose.
//!
//! A context for another conversation is therefore not a clone: a sub-agent's clone would
//! count the parent's reads as its own ("File unchanged since the earlier Read"). Give it
//! its own read cache (`ctx.clone().with_file_state(ctx.file_state().deep_clone())` to start
//! from the parent's, or [`FileStateCache::default`] to start empty), or use
//! [`ToolUseContext::for_new_session`] for a separate session altogether.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio_util::sync::CancellationToken;

use crate::file_state::{FileStateCache, expand_path, normalize_lexically};
use crate::hook_events::{HookEventOutcome, HookEvents};
use crate::permission::ToolPermissionContext;
use crate::result::Message;
use crate::tool::Tool;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A function that returns a fresh tool list (after MCP servers connect, say).
pub type RefreshTools = Arc<dyn Fn() -> Vec<Arc<dyn Tool>> + Send + Sync>;

/// A configured MCP server as the context sees it: a name and a state, nothing of the
/// protocol (tool-core knows nothing about MCP).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpClientInfo {
    /// The server's name in the configuration.
    pub name: String,
    /// Where its connection is.
    pub state: McpClientState,
}

/// Where an MCP server's connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpClientState {
    /// Still connecting: its tools may appear shortly.
    Pending,
    /// Connected.
    Connected,
    /// Failed or shut down: its tools will not appear by waiting.
    Failed,
}

/// Session-wide options (Claude Code's `ToolUseContext.options`).
#[derive(Clone, Default)]
pub struct ToolOptions {
    /// The tools available to the model in this turn.
    pub tools: Arc<[Arc<dyn Tool>]>,
    /// The main loop's model name.
    pub model: String,
    /// The MCP servers of the session.
    pub mcp_clients: Arc<[McpClientInfo]>,
    /// The spending limit of the session, in US dollars.
    pub max_budget_usd: Option<f64>,
    /// Fetches the tool list as it is now (an MCP server's tools change with
    /// `notifications/tools/list_changed`): the agent loop calls it before each request of
    /// the main loop, not of a sub-agent, and offers what it returns.
    pub refresh_tools: Option<RefreshTools>,
    /// No user at a terminal: prompts are impossible.
    pub non_interactive: bool,
    /// The directory of the hooks' environment files: each SessionStart hook gets a file
    /// of its own in it as `CLAUDE_ENV_FILE` ([`hook_env_file_name`]), and every such file
    /// in it is sourced before each Bash command, in Claude Code's order
    /// ([`hook_env_files`]).
    pub session_env_dir: Option<std::path::PathBuf>,
    /// ToolSearch was not offered to the model in this turn (tool search is off for its
    /// request): a call of it the model makes anyway is answered as a call of a tool that
    /// does not exist. The tool stays in the list, for sub-agents whose own requests may
    /// offer it.
    pub tool_search_off: bool,
    /// Every Read returns the file's content: never Claude Code's "File unchanged since
    /// last read" stub, which points the model at an earlier result of the same
    /// conversation. For a host whose calls may come from several conversations or
    /// clients it cannot tell apart (an MCP server: a client keeps it across chats), where
    /// that earlier result may never have reached the model asking. Reads are still
    /// recorded in the read cache, so a later Edit or Write is let through as before.
    /// Default `false` (the stub, as in Claude Code): `toolwright agent` and `run`.
    pub reads_always_return_content: bool,
}

impl fmt::Debug for ToolOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolOptions")
            .field(
                "tools",
                &self
                    .tools
                    .iter()
                    .map(|t| t.name().to_owned())
                    .collect::<Vec<_>>(),
            )
            .field("model", &self.model)
            .field("mcp_clients", &self.mcp_clients)
            .field("max_budget_usd", &self.max_budget_usd)
            .field("refresh_tools", &self.refresh_tools.is_some())
            .field("non_interactive", &self.non_interactive)
            .field("session_env_dir", &self.session_env_dir)
            .field("tool_search_off", &self.tool_search_off)
            .field(
                "reads_always_return_content",
                &self.reads_always_return_content,
            )
            .finish()
    }
}

/// The events whose hooks each get a `CLAUDE_ENV_FILE` of their own, in the order their
/// files are sourced (Claude Code's).
const HOOK_ENV_EVENTS: [&str; 4] = ["setup", "sessionstart", "cwdchanged", "filechanged"];

/// The name of the `CLAUDE_ENV_FILE` of hook number `index` of `event` (its place among the
/// event's matching hooks, in configuration order, from 0) in
/// [`ToolOptions::session_env_dir`]: `sessionstart-hook-0.sh`, as Claude Code names them
/// (`getHookEnvFilePath`). Each hook has its own, so one that writes it with `>` erases
/// nothing another exported.
pub fn hook_env_file_name(event: &str, index: usize) -> String {
    format!("{}-hook-{index}.sh", event.to_ascii_lowercase())
}

/// The hooks' environment files in `dir` ([`hook_env_file_name`]), in the order they are
/// sourced: Setup's first, then SessionStart's, CwdChanged's and FileChanged's, each
/// event's by hook index, so that what a later hook exports wins whichever finished last,
/// as in Claude Code. Other names are left out; a directory that cannot be read has none.
pub fn hook_env_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(usize, u64, PathBuf)> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name();
            let (event, index) = name.to_str()?.strip_suffix(".sh")?.split_once("-hook-")?;
            let rank = HOOK_ENV_EVENTS.iter().position(|e| *e == event)?;
            // Digits only, as Claude Code's pattern (`\d+`): no sign, no spaces.
            if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Some((rank, index.parse().ok()?, entry.path()))
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, _, path)| path).collect()
}

/// A notice for the user (not the model).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    /// The text.
    pub text: String,
    /// Whether it needs attention soon.
    pub urgent: bool,
}

/// Receives [`Notification`]s.
pub type NotificationSink = Arc<dyn Fn(Notification) + Send + Sync>;

/// A type-keyed map of host state that tools may read and write (Claude Code's
/// `getAppState`/`setAppState`). Shared by all clones of a context.
#[derive(Clone, Default)]
pub struct AppState {
    map: Arc<Mutex<HashMap<TypeId, Box<dyn Any + Send + Sync>>>>,
}

impl fmt::Debug for AppState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppState")
            .field("entries", &lock(&self.map).len())
            .finish()
    }
}

impl AppState {
    /// A copy of the value of type `T`, if set.
    pub fn get<T: Clone + Send + Sync + 'static>(&self) -> Option<T> {
        lock(&self.map)
            .get(&TypeId::of::<T>())
            .and_then(|v| v.downcast_ref::<T>())
            .cloned()
    }

    /// Sets the value of type `T`, returning the previous one.
    pub fn set<T: Send + Sync + 'static>(&self, value: T) -> Option<T> {
        lock(&self.map)
            .insert(TypeId::of::<T>(), Box::new(value))
            .and_then(|old| old.downcast::<T>().ok().map(|b| *b))
    }

    /// Changes the value of type `T` in place (starting from `T::default()`), atomically.
    pub fn update<T: Default + Send + Sync + 'static, R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let mut map = lock(&self.map);
        let slot = map
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Box::new(T::default()));
        match slot.downcast_mut::<T>() {
            Some(value) => f(value),
            // The map is keyed by TypeId, so the downcast cannot fail; keep a safe path anyway.
            None => {
                let mut fresh = T::default();
                let out = f(&mut fresh);
                *slot = Box::new(fresh);
                out
            }
        }
    }
}

/// Consecutive and total denials, for the fall-back-to-prompt limits of auto mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DenialTracking {
    /// Denials since the last allow.
    pub consecutive: u32,
    /// Denials in the session.
    pub total: u32,
}

impl DenialTracking {
    /// Claude Code's limit on consecutive denials.
    pub const MAX_CONSECUTIVE: u32 = 3;
    /// Claude Code's limit on total denials.
    pub const MAX_TOTAL: u32 = 20;

    /// Records a denial; returns whether a limit is now reached.
    pub fn record_denial(&mut self) -> bool {
        self.consecutive += 1;
        self.total += 1;
        self.consecutive >= Self::MAX_CONSECUTIVE || self.total >= Self::MAX_TOTAL
    }

    /// Records an allow (resets the consecutive count).
    pub fn record_allow(&mut self) {
        self.consecutive = 0;
    }
}

/// Per-tool_use decisions about replacing large results with a file reference, frozen once
/// made so that every later request sends byte-identical content (prompt-cache stability).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContentReplacementState {
    decisions: HashMap<String, Option<String>>,
}

impl ContentReplacementState {
    /// The frozen decision for `tool_use_id`: `Some(Some(text))` replaced, `Some(None)` kept.
    pub fn decision(&self, tool_use_id: &str) -> Option<Option<&str>> {
        self.decisions.get(tool_use_id).map(Option::as_deref)
    }

    /// Freezes the decision for `tool_use_id`; a decision already made is kept.
    pub fn freeze(&mut self, tool_use_id: &str, replacement: Option<String>) {
        self.decisions
            .entry(tool_use_id.to_owned())
            .or_insert(replacement);
    }
}

/// The agent a call runs in, when it is a sub-agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentInfo {
    /// The agent's id.
    pub id: String,
    /// The agent's type (`general-purpose`, ...).
    pub agent_type: String,
}

#[derive(Clone)]
struct Inner {
    options: ToolOptions,
    cwd: PathBuf,
    project_dir: PathBuf,
    /// The directory the session moved into from outside the other working directories (a
    /// worktree elsewhere: [`ToolUseContext::with_cwd`]), a working directory while the
    /// cwd stays inside it.
    entered_dir: Option<PathBuf>,
    working_directories: Vec<PathBuf>,
    home: Option<PathBuf>,
    /// `$CLAUDE_CONFIG_DIR`, when set: the user config dir in place of `~/.claude`.
    config_dir: Option<PathBuf>,
    permission: ToolPermissionContext,
    file_state: FileStateCache,
    cancel: CancellationToken,
    app_state: AppState,
    messages: Arc<[Message]>,
    notifications: Option<NotificationSink>,
    agent: Option<AgentInfo>,
    denials: Arc<Mutex<DenialTracking>>,
    content_replacement: Arc<Mutex<ContentReplacementState>>,
    tool_use_id: Option<String>,
    /// When this call got its id ([`ToolUseContext::call_order`]); 0: not in a call.
    call_order: u64,
    /// `call_order` was given for the next call ([`ToolUseContext::with_next_call_order`]),
    /// which keeps it when it gets its id.
    call_order_reserved: bool,
    session_id: String,
    prompt_id: Option<String>,
    results_dir: Option<PathBuf>,
    /// The hooks of events a tool raises itself ([`ToolUseContext::hook_events`]).
    hook_events: Option<Arc<dyn HookEvents>>,
}

/// The order calls get their tool_use id in: the executor starts calls in the order their
/// blocks came, so a smaller number is a call whose result comes first.
static NEXT_CALL_ORDER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// The root of the git repository (or worktree) holding `dir`: the nearest of `dir` and its
/// parents with a `.git` entry.
pub fn git_root(dir: &Path) -> Option<&Path> {
    dir.ancestors().find(|d| d.join(".git").exists())
}

/// The text of the regular file at `path` (symlinks followed), of at most `max` bytes when
/// given. Anything else is an error saying what it is, found without waiting and before a
/// byte is read: the file is opened with `O_NONBLOCK` (a FIFO opened for reading would
/// otherwise wait for a writer, for ever) and its type checked on the opened file, so a
/// FIFO or a device swapped in after a look at the path is never waited on either. A file
/// that is, or grows, larger than `max` while it is read is an error too.
pub fn read_regular_file(path: &Path, max: Option<u64>) -> std::io::Result<String> {
    use std::io::Read as _;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY,
    );
    let file = options.open(path)?;
    let meta = file.metadata()?;
    let kind = meta.file_type();
    if !kind.is_file() {
        return Err(std::io::Error::other(format!(
            "not a regular file (it is {})",
            file_kind(kind)
        )));
    }
    let too_large = |max| std::io::Error::other(format!("larger than {max} bytes"));
    if let Some(max) = max
        && meta.len() > max
    {
        return Err(too_large(max));
    }
    let mut text = String::new();
    file.take(max.map_or(u64::MAX, |max| max.saturating_add(1)))
        .read_to_string(&mut text)?;
    match max {
        Some(max) if text.len() as u64 > max => Err(too_large(max)),
        _ => Ok(text),
    }
}

/// What a file that is no regular file is, in words: "a directory", "a FIFO".
fn file_kind(kind: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if kind.is_fifo() {
            return "a FIFO";
        } else if kind.is_socket() {
            return "a socket";
        } else if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "something else"
    }
}

/// The text of the regular file `path` when it holds at most `max` bytes of UTF-8
/// ([`read_regular_file`]: a FIFO or a device is never waited on).
fn read_small_file(path: &Path, max: u64) -> std::io::Result<String> {
    read_regular_file(path, Some(max))
}

/// The root of the main working tree of the repository holding `dir`, as Claude Code's
/// `findCanonicalGitRoot` finds it to key a project's configuration: [`git_root`], or, in a
/// linked worktree (whose `.git` is a file `gitdir: <main>/.git/worktrees/<name>`), the main
/// checkout's root, so that a worktree shares its repository's local settings. Only a
/// worktree its repository lists, and whose record names this folder, counts: the named
/// directory is in that repository's `worktrees/`, its `commondir` leads back to it, and
/// its `gitdir` (git's back-link, relative to it when git wrote it so) names this folder's
/// `.git`, itself a regular file, not a symlink. The `.git` file is the folder's own (a
/// cloned project's, an unpacked archive's): one that names anything else, or another
/// folder's worktree, gives the folder's own root, as Claude Code checks it. A bare
/// repository's worktree keeps its own root.
pub fn canonical_git_root(dir: &Path) -> Option<PathBuf> {
    let root = git_root(dir)?;
    let own = || Some(root.to_path_buf());
    let dot_git = root.join(".git");
    // A symlink to a worktree's `.git` file would name that worktree's record as its own.
    match std::fs::symlink_metadata(&dot_git) {
        Ok(meta) if meta.is_file() => {}
        _ => return own(),
    }
    // A `.git` file is one line; anything longer is not one git wrote.
    let Ok(text) = read_small_file(&dot_git, 4096) else {
        return own();
    };
    let Some(gitdir) = text.lines().next().and_then(|l| l.strip_prefix("gitdir:")) else {
        return own();
    };
    let Ok(gitdir) = std::fs::canonicalize(root.join(gitdir.trim())) else {
        return own();
    };
    let Ok(common) = read_small_file(&gitdir.join("commondir"), 4096) else {
        return own();
    };
    let Ok(common) = std::fs::canonicalize(gitdir.join(common.trim())) else {
        return own();
    };
    let listed = gitdir.parent() == Some(common.join("worktrees").as_path());
    // The worktree git made for this admin directory is this folder: anyone can name a
    // worktree's admin directory (its name is the worktree's folder name), only git's
    // record says which folder it is.
    let Ok(back) = read_small_file(&gitdir.join("gitdir"), 4096) else {
        return own();
    };
    let here = std::fs::canonicalize(root).map(|root| root.join(".git"));
    let back = std::fs::canonicalize(gitdir.join(back.trim_end_matches(['\n', '\r'])));
    let ours = matches!((back, here), (Ok(back), Ok(here)) if back == here);
    match common.file_name() {
        Some(name) if listed && ours && name == ".git" => common.parent().map(Path::to_path_buf),
        _ => own(),
    }
}

/// Whether `dir` is inside one of `dirs` (or is one): as written (`.` and `..` collapsed),
/// or by real paths, links followed (a directory named through a link to one is inside it).
fn is_within(dir: &Path, dirs: &[PathBuf]) -> bool {
    let plain = normalize_lexically(dir);
    if dirs
        .iter()
        .any(|d| plain.starts_with(normalize_lexically(d)))
    {
        return true;
    }
    let Ok(real) = std::fs::canonicalize(dir) else {
        return false;
    };
    dirs.iter()
        .any(|d| std::fs::canonicalize(d).is_ok_and(|d| real.starts_with(d)))
}

/// The directories whose `.claude/<kind>` (skills, agents) belong to a session in `cwd`
/// whose project is `project_dir`, as Claude Code looks for them, nearest first: `cwd` and
/// its parents, stopping after the git repository's root (a folder above the repository,
/// such as a shared `/tmp`, has no say in it) and before the home directory (whose
/// `.claude` is the user's own, read as such). Inside the project, the root is the
/// project's repository's, not that of a repository nested in it (a submodule, a vendored
/// clone, a worktree under `.claude/worktrees`): the project's own `.claude` stays in view.
/// Outside any repository the walk stops at the project directory (the session's start),
/// or at `cwd` itself when the shell has left the project: a parent such as a shared `/tmp`
/// is never the project's.
pub fn project_dirs(cwd: &Path, project_dir: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let base = if cwd.starts_with(project_dir) {
        project_dir
    } else {
        cwd
    };
    let stop = git_root(base).unwrap_or(base);
    let mut dirs = Vec::new();
    for dir in cwd.ancestors() {
        if Some(dir) == home {
            break;
        }
        dirs.push(dir.to_path_buf());
        if dir == stop {
            break;
        }
    }
    dirs
}

/// Configuration text as JSON sees it: a leading UTF-8 byte order mark (PowerShell 5.1 and
/// some Windows editors write one) is not part of the content, as Claude Code reads its
/// settings and `.mcp.json`. Only the very first character: a BOM anywhere else is invalid
/// JSON.
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Parses configuration JSON (settings, `.mcp.json`, their inline forms) as Claude Code's
/// `JSON.parse` reads it: a leading byte order mark is skipped; a `\uD800`-style escape for
/// half a surrogate pair, which `JSON.parse` accepts and serde_json refuses, reads as
/// U+FFFD; and a number serde_json refuses as out of range reads as `JSON.parse` reads it:
/// one too large for a double (`1e400`, Infinity to `JSON.parse`) as the largest finite one
/// with its sign (`±1.7976931348623157e308`: still a number, larger than any other, where
/// `null`, what `JSON.stringify` writes for Infinity, would read as unset), one just below
/// the limit (`1.7976931348623158e308`, which serde_json does not round exactly) as the
/// double it is. Either would otherwise make the whole file unreadable, its deny rules with
/// it. Text without either is parsed once, as it is. The repairs keep the text's length and
/// lines, so an error is serde's own (its kind, line and column those of the text as
/// written).
pub fn parse_config_json(text: &str) -> serde_json::Result<serde_json::Value> {
    let text = without_bom(text);
    match serde_json::from_str(text) {
        Err(e) if e.is_syntax() => match json_parse_repairs(text) {
            Some(repaired) => repaired.parse(),
            None => Err(e),
        },
        parsed => parsed,
    }
}

/// What [`json_parse_repairs`] changed: the repaired text, of the original's length and
/// lines, and the numbers it wrote as a placeholder (`0` and spaces, in the number's place).
struct JsonRepairs {
    text: String,
    /// For each number written as a placeholder: its place among the text's numbers (in the
    /// order they are written, from 0) and the value it reads as.
    numbers: Vec<(usize, f64)>,
}

impl JsonRepairs {
    /// The repaired text parsed, each placeholder read as its number's value.
    fn parse(&self) -> serde_json::Result<serde_json::Value> {
        use serde::de::DeserializeSeed;
        let mut de = serde_json::Deserializer::from_str(&self.text);
        let seen = std::cell::Cell::new(0);
        let value = RepairedValue {
            numbers: &self.numbers,
            seen: &seen,
        }
        .deserialize(&mut de)?;
        de.end()?;
        Ok(value)
    }
}

/// Builds a [`serde_json::Value`] as serde_json does, counting the numbers it reads (serde
/// reads them in the order they are written) and reading those [`JsonRepairs::numbers`]
/// names as their values.
#[derive(Clone, Copy)]
struct RepairedValue<'a> {
    numbers: &'a [(usize, f64)],
    seen: &'a std::cell::Cell<usize>,
}

impl RepairedValue<'_> {
    fn number(self, read: serde_json::Value) -> serde_json::Value {
        let n = self.seen.get();
        self.seen.set(n + 1);
        match self.numbers.binary_search_by_key(&n, |&(at, _)| at) {
            Ok(i) => serde_json::Value::from(self.numbers[i].1),
            Err(_) => read,
        }
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for RepairedValue<'_> {
    type Value = serde_json::Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for RepairedValue<'_> {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(self.number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(self.number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(self.number(v.into()))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(serde_json::Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        // As serde_json's own: a key written twice keeps its last value.
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(self)?;
            object.insert(key, value);
        }
        Ok(serde_json::Value::Object(object))
    }
}

/// `text` with what `JSON.parse` reads and serde_json refuses written so serde_json reads it
/// (see [`parse_config_json`]), the text's length and lines kept: every `\u` escape for an
/// unpaired surrogate, inside a JSON string, as `\uFFFD`, and every number outside strings
/// that serde_json refuses and Rust reads (exactly, as `JSON.parse` does; one too large as
/// the largest finite double with its sign) as a placeholder, `0` and spaces, named in
/// [`JsonRepairs::numbers`] with its value; `None` when there is neither. Everything else,
/// a malformed escape or number included, is left for the parser to judge.
fn json_parse_repairs(text: &str) -> Option<JsonRepairs> {
    let hex_at = |i: usize| -> Option<u32> {
        let digits = text.get(i..i + 4)?;
        if digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            u32::from_str_radix(digits, 16).ok()
        } else {
            None
        }
    };
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut numbers = Vec::new();
    let (mut copied, mut i, mut in_string) = (0, 0, false);
    // How many numbers were seen so far (outside strings, in the order they are written).
    let mut seen = 0;
    let mut changed = false;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => in_string = !in_string,
            b'\\' if in_string => {
                if bytes.get(i + 1) != Some(&b'u') {
                    i += 2;
                    continue;
                }
                let Some(unit) = hex_at(i + 2) else {
                    i += 2;
                    continue;
                };
                let mut len = 6;
                let lone = match unit {
                    0xD800..=0xDBFF => {
                        let low = (text.get(i + 6..i + 8) == Some("\\u"))
                            .then(|| hex_at(i + 8))
                            .flatten();
                        if matches!(low, Some(0xDC00..=0xDFFF)) {
                            len = 12;
                            false
                        } else {
                            true
                        }
                    }
                    0xDC00..=0xDFFF => true,
                    _ => false,
                };
                if lone {
                    out.push_str(&text[copied..i]);
                    out.push_str("\\uFFFD");
                    copied = i + 6;
                    changed = true;
                }
                i += len;
                continue;
            }
            b'-' | b'0'..=b'9' if !in_string => {
                let end = i + bytes[i..]
                    .iter()
                    .position(|b| !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                    .unwrap_or(bytes.len() - i);
                let token = &text[i..end];
                // Rust reads a JSON number exactly, as JSON.parse does; one too large for a
                // double reads as an infinity.
                if is_json_number(token)
                    && serde_json::from_str::<serde_json::Number>(token).is_err()
                    && let Ok(n) = token.parse::<f64>()
                {
                    let n = n.clamp(-f64::MAX, f64::MAX);
                    out.push_str(&text[copied..i]);
                    out.push('0');
                    out.extend(std::iter::repeat_n(' ', token.len() - 1));
                    numbers.push((seen, n));
                    copied = end;
                    changed = true;
                }
                seen += 1;
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    if !changed {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(JsonRepairs { text: out, numbers })
}

/// Whether `token` is a number as JSON writes one: `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`.
fn is_json_number(token: &str) -> bool {
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    let rest = token.strip_prefix('-').unwrap_or(token);
    let int = digits(rest);
    if int == 0 || (int > 1 && rest.starts_with('0')) {
        return false;
    }
    let mut rest = &rest[int..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let n = digits(fraction);
        if n == 0 {
            return false;
        }
        rest = &fraction[n..];
    }
    if let Some(exponent) = rest.strip_prefix(['e', 'E']) {
        let exponent = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
        let n = digits(exponent);
        if n == 0 {
            return false;
        }
        rest = &exponent[n..];
    }
    rest.is_empty()
}

/// A configuration file's text (settings, `.mcp.json`) read as Claude Code reads it (Node's
/// `readFileSync(path, "utf8")`): bytes that are not UTF-8 become U+FFFD instead of making
/// the whole file unreadable, which would drop its deny rules and hooks with it. The flag
/// says whether any were replaced, for a warning. Only a regular file is read: a FIFO or a
/// device under a settings file's name (a repository may hold such a link) would hang the
/// command, take all its memory (`/dev/zero`) or its standard input. (`--settings <(…)` is
/// read before, once. No size is too large: `~/.claude.json` grows past 100 MB.) A file
/// that is not there is `NotFound`, but one that is a link to nothing, or that is below a
/// directory that is one, is an error naming where the link leads (through a chain of
/// links, the end that is missing): a configuration that was moved away must not be taken
/// for none, its deny rules dropped without a word. Nor is a file of `/proc` or `/sys`
/// read, though they pass as regular files: `/proc/kmsg` blocks for ever.
pub fn read_config_text(path: &std::path::Path) -> std::io::Result<(String, bool)> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(dangling_link_above(path).unwrap_or(e));
        }
        Err(e) => return Err(e),
    };
    if !meta.is_file() && !meta.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, a socket or a device): not read",
        ));
    }
    // The kernel's files pass as regular ones, and some block for ever (`/proc/kmsg`, to
    // root) or consume what they give.
    if let Ok(real) = std::fs::canonicalize(path)
        && (real.starts_with("/proc") || real.starts_with("/sys"))
    {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "a kernel file ({}), which may block or consume what it gives: not read",
                real.display()
            ),
        ));
    }
    let bytes = std::fs::read(path)?;
    match String::from_utf8(bytes) {
        Ok(text) => Ok((text, false)),
        Err(e) => Ok((String::from_utf8_lossy(e.as_bytes()).into_owned(), true)),
    }
}

/// The largest settings file (or trust record) [`read_config_text_settled`] reads: 16 MiB.
pub const MAX_SETTINGS_BYTES: u64 = 16 << 20;

/// A configuration file's text as [`read_config_text`] reads it, read again while it looks
/// caught in the middle of an in-place rewrite ([`config_text_looks_torn`]: blank, or no
/// valid JSON), as [`reread_while_torn`] does: a program that saves the file in place
/// (truncate, then write: Node's `fs.writeFileSync`, an editor's in-place save) leaves it
/// empty, then cut, for a moment, and a read then would take the file as `{}` or report it
/// invalid, dropping its deny rules for the whole session. What the last read gave is
/// returned: the settled text, or the blank or cut text of a file that really is so (which
/// the caller takes as blank or reports), or an error. A file replaced by an atomic rename
/// is never seen torn and is read once.
pub fn read_config_text_settled(path: &Path) -> std::io::Result<(String, bool)> {
    // A settings file is a few kilobytes: one far larger (a repository's, made to cost every
    // session its time and memory) is not read at all.
    if let Ok(meta) = std::fs::metadata(path)
        && meta.is_file()
        && meta.len() > MAX_SETTINGS_BYTES
    {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "{} bytes, more than the {} MiB a settings file may hold: not read",
                meta.len(),
                MAX_SETTINGS_BYTES >> 20
            ),
        ));
    }
    reread_while_torn(
        || (read_config_text(path), modified(path)),
        |read| {
            read.as_ref()
                .is_ok_and(|(text, _)| config_text_looks_torn(text))
        },
        |a, b| match (a, b) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        },
    )
}

/// Whether a configuration file's text looks like a file caught in the middle of an
/// in-place rewrite: blank (after a byte order mark), or no valid JSON as
/// [`parse_config_json`] reads it: JSON that ends early (truncate, then write), or new text
/// over the tail of the old (write, then truncate: the file tools' in-place rewrite of a
/// hard-linked or bind-mounted file). Such a text is worth reading again
/// ([`reread_while_torn`]) before it is taken as blank or reported invalid; a file that
/// really is invalid and left unchanged settles at the second read.
pub fn config_text_looks_torn(text: &str) -> bool {
    without_bom(text).trim().is_empty() || parse_config_json(text).is_err()
}

/// The pauses before each re-read of a configuration file that looks caught mid-rewrite
/// ([`reread_while_torn`]): five re-reads, 150 ms in all at most.
pub const TORN_REREAD_PAUSES: [std::time::Duration; 5] = [
    std::time::Duration::from_millis(10),
    std::time::Duration::from_millis(20),
    std::time::Duration::from_millis(30),
    std::time::Duration::from_millis(40),
    std::time::Duration::from_millis(50),
];

/// How long a file must have been left unchanged for two identical reads of it to settle it
/// ([`reread_while_torn`]): a writer stopped between its truncation and its writes (held
/// back on a busy machine) leaves the file as it is for a moment, but only for a moment.
pub const TORN_SETTLED_AFTER: std::time::Duration = std::time::Duration::from_millis(100);

/// Reads with `read` (what it gives, and when the file was last modified, if known) and
/// reads again after each of [`TORN_REREAD_PAUSES`] while what it gave `looks_torn`,
/// stopping at the first read that does not, or at two consecutive reads that are the
/// `same`, of a file with the same modification time that is at least
/// [`TORN_SETTLED_AFTER`] old (a file that really is blank or cut: a writer in the middle
/// of a rewrite changes the file, and does so within moments). Returns what the last read
/// gave. So a file caught mid-rewrite by an in-place writer is read once it is written,
/// while one that really looks torn costs one pause when it has not changed for a while,
/// and the whole window (150 ms) at most.
pub fn reread_while_torn<T>(
    mut read: impl FnMut() -> (T, Option<std::time::SystemTime>),
    looks_torn: impl Fn(&T) -> bool,
    same: impl Fn(&T, &T) -> bool,
) -> T {
    let (mut last, mut modified) = read();
    for pause in TORN_REREAD_PAUSES {
        if !looks_torn(&last) {
            break;
        }
        std::thread::sleep(pause);
        let (next, next_modified) = read();
        // A time in the future (another machine's clock) is not old.
        let old =
            next_modified.is_none_or(|t| t.elapsed().is_ok_and(|age| age >= TORN_SETTLED_AFTER));
        let settled = same(&last, &next) && modified == next_modified && old;
        (last, modified) = (next, next_modified);
        if settled {
            break;
        }
    }
    last
}

/// When the file at `path` was last modified, if that can be known.
fn modified(path: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// For a `path` that is not there: the error for the link to nothing that is the reason
/// (the path itself, or the nearest of its directories that is there as a name), if any.
fn dangling_link_above(path: &Path) -> Option<std::io::Error> {
    let there = path
        .ancestors()
        .take_while(|p| !p.as_os_str().is_empty())
        .find(|p| std::fs::symlink_metadata(p).is_ok())?;
    if !std::fs::symlink_metadata(there)
        .ok()?
        .file_type()
        .is_symlink()
        || std::fs::metadata(there).is_ok()
    {
        return None;
    }
    let target = std::fs::read_link(there).ok()?;
    // A link to a link: what does not exist is the end of the chain, not the next link.
    let leads = match missing_end_of_links(there) {
        Some((end, links)) if links > 1 => format!(
            "a chain of {links} links (the first to {}) ending at {}, which does not exist",
            target.display(),
            end.display()
        ),
        _ => format!("a link to {}, which does not exist", target.display()),
    };
    let message = if there == path {
        leads
    } else {
        format!("{} is {leads}", there.display())
    };
    Some(std::io::Error::other(message))
}

/// Where a chain of links starting at `link` ends (each link's target read from its link's
/// directory, followed while it is a link), with how many links it has; `None` past 40
/// links (the kernel's limit) or when a link cannot be read.
fn missing_end_of_links(link: &Path) -> Option<(PathBuf, usize)> {
    let mut at = link.to_path_buf();
    for links in 1..=40 {
        let target = std::fs::read_link(&at).ok()?;
        let next = match at.parent() {
            Some(dir) => dir.join(&target),
            None => target,
        };
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() => at = next,
            _ => return Some((next, links)),
        }
    }
    None
}

/// The warning for a configuration file [`read_config_text`] had to repair.
pub const NOT_UTF8_NOTE: &str = "not valid UTF-8: read with replacement characters (U+FFFD) in place of the bad bytes, as Claude Code reads it";

/// Whether a `--settings` or `--mcp-config` argument is inline JSON (it starts with `{`,
/// after a byte order mark and whitespace) rather than a file name.
pub fn is_inline_json(arg: &str) -> bool {
    without_bom(arg).trim_start().starts_with('{')
}

/// Where `.claude/settings.local.json` is for a session in `project_dir`: at the root of
/// its git repository (Claude Code keeps it there since 2.1.211, while
/// `.claude/settings.json` stays the project directory's), found as the trust record finds
/// it ([`git_root`]: the nearest directory up from `project_dir` with a `.git` directory, or
/// file in a worktree); outside a repository, the project directory's. The permissions and
/// the hooks read this one file.
pub fn local_settings_path(project_dir: &Path) -> PathBuf {
    git_root(project_dir)
        .unwrap_or(project_dir)
        .join(".claude/settings.local.json")
}

/// The directory of managed (policy) settings, where an administrator deploys
/// `managed-settings.json`, `managed-settings.d/` and `managed-mcp.json`, as Claude Code reads
/// it: `/etc/claude-code` on Linux, `/Library/Application Support/ClaudeCode` on macOS,
/// `C:\Program Files\ClaudeCode` on Windows. There is deliberately no environment override:
/// what an administrator enforces must not be switched off by the user it restricts.
pub fn managed_settings_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(if cfg!(target_os = "macos") {
        "/Library/Application Support/ClaudeCode"
    } else if cfg!(windows) {
        "C:\\Program Files\\ClaudeCode"
    } else {
        "/etc/claude-code"
    })
}

/// The `*.json` drop-ins of `managed_dir/managed-settings.d`, in name order (they merge
/// after `managed-settings.json`, the last one winning), and the errors met reading the
/// directory. As Claude Code's loader reads them, a drop-in is a file or a symbolic link
/// whose name ends in `.json` and does not start with `.`: a hidden one (a policy an
/// administrator parked as `.10-old.json`, an editor's lock link `.#10-policy.json`) and a
/// directory named `x.json` are skipped without a word. A link is kept whatever it leads to
/// (reading one that leads nowhere is the caller's error to report). A missing directory has
/// none and no error; one that cannot be read (or an entry that cannot) gives its error,
/// which the caller must report: the administrator's policy would otherwise be dropped
/// without a word.
pub fn managed_drop_ins(managed_dir: &Path) -> (Vec<PathBuf>, Vec<std::io::Error>) {
    let dir = managed_dir.join("managed-settings.d");
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (Vec::new(), Vec::new()),
        Err(e) => return (Vec::new(), vec![e]),
    };
    let (mut paths, mut errors) = (Vec::new(), Vec::new());
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        let path = entry.path();
        let name = entry.file_name();
        if name.as_encoded_bytes().starts_with(b".") || path.extension().is_none_or(|e| e != "json")
        {
            continue;
        }
        // The entry's own type: a link is not followed here.
        match entry.file_type() {
            Ok(kind) if kind.is_file() || kind.is_symlink() => paths.push(path),
            Ok(_) => {}
            Err(e) => errors.push(e),
        }
    }
    paths.sort();
    (paths, errors)
}

/// Whether an environment variable's value turns a switch on, as Claude Code reads them
/// (`isEnvTruthy`): `1`, `true`, `yes` or `on`, in any case, surrounding space ignored.
/// Anything else (`0`, `false`, `off`, an empty string, a typo) leaves it off.
pub fn env_truthy(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

/// The context of a tool call. See the [module docs](self).
#[derive(Clone)]
pub struct ToolUseContext {
    inner: Arc<Inner>,
}

impl fmt::Debug for ToolUseContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = &self.inner;
        f.debug_struct("ToolUseContext")
            .field("cwd", &i.cwd)
            .field("entered_dir", &i.entered_dir)
            .field("working_directories", &i.working_directories)
            .field("mode", &i.permission.mode)
            .field("tool_use_id", &i.tool_use_id)
            .field("session_id", &i.session_id)
            .field("agent", &i.agent)
            .field("cancelled", &i.cancel.is_cancelled())
            .field("options", &i.options)
            .finish_non_exhaustive()
    }
}

impl ToolUseContext {
    /// A context for a session working in `cwd`, with no tools, default permissions, a fresh
    /// cache and a fresh cancellation token. `HOME` is read once here for `~` expansion, and
    /// `CLAUDE_CONFIG_DIR` for the user config dir.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let config_dir = std::env::var_os("CLAUDE_CONFIG_DIR")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from);
        let cwd = cwd.into();
        Self {
            inner: Arc::new(Inner {
                options: ToolOptions::default(),
                project_dir: cwd.clone(),
                cwd,
                entered_dir: None,
                working_directories: Vec::new(),
                home,
                config_dir,
                permission: ToolPermissionContext::default(),
                file_state: FileStateCache::default(),
                cancel: CancellationToken::new(),
                app_state: AppState::default(),
                messages: Arc::from(Vec::new()),
                notifications: None,
                agent: None,
                denials: Arc::default(),
                content_replacement: Arc::default(),
                tool_use_id: None,
                call_order: 0,
                call_order_reserved: false,
                session_id: String::new(),
                prompt_id: None,
                results_dir: None,
                hook_events: None,
            }),
        }
    }

    fn edit(mut self, f: impl FnOnce(&mut Inner)) -> Self {
        f(Arc::make_mut(&mut self.inner));
        self
    }

    // ----- reading -----

    /// Session options.
    pub fn options(&self) -> &ToolOptions {
        &self.inner.options
    }

    /// The tools of this turn.
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        &self.inner.options.tools
    }

    /// The current working directory.
    pub fn cwd(&self) -> &Path {
        &self.inner.cwd
    }

    /// The directory commands run in: the cwd, or, when it no longer exists (an earlier
    /// command removed it) or no longer leads inside the working directories (a directory on
    /// its way was replaced by a link to somewhere else: [`cwd_outside`](Self::cwd_outside)),
    /// the first working directory that exists, else the nearest existing ancestor of the
    /// cwd. Bash runs there, and the permission checks resolve a command's relative paths
    /// against it, so both agree on what a path names.
    pub fn effective_cwd(&self) -> std::borrow::Cow<'_, Path> {
        let cwd = self.cwd();
        if cwd.is_dir() && self.cwd_outside().is_none() {
            return std::borrow::Cow::Borrowed(cwd);
        }
        let fallback = self
            .working_directories()
            .into_iter()
            .find(|d| d.is_dir())
            .or_else(|| {
                cwd.ancestors()
                    .skip(1)
                    .find(|d| d.is_dir())
                    .map(Path::to_path_buf)
            })
            .unwrap_or_else(|| PathBuf::from("/"));
        std::borrow::Cow::Owned(fallback)
    }

    /// Where the cwd really is (its links followed) when that is outside every working
    /// directory (their links followed too): a directory the session moved into was
    /// replaced by a link that leads elsewhere. `None` while it leads inside, when it is a
    /// working directory itself, and when it no longer exists.
    pub fn cwd_outside(&self) -> Option<PathBuf> {
        let cwd = self.cwd();
        let dirs = self.working_directories();
        if dirs.iter().any(|d| d == cwd) {
            return None;
        }
        let real = std::fs::canonicalize(cwd).ok()?;
        let inside = dirs.iter().any(|d| {
            real.starts_with(d) || std::fs::canonicalize(d).is_ok_and(|d| real.starts_with(d))
        });
        (!inside).then_some(real)
    }

    /// The project directory: the cwd the context was made with, which a later
    /// [`with_cwd`](Self::with_cwd) (a Bash `cd`, a worktree) does not change. Claude Code's
    /// original cwd.
    pub fn project_dir(&self) -> &Path {
        &self.inner.project_dir
    }

    /// The working directories: the directory the session entered from outside the others,
    /// while it is in it (a worktree elsewhere: see [`with_cwd`](Self::with_cwd)), the
    /// [project directory](Self::project_dir), then the additional ones from the permission
    /// context and from [`with_working_directories`](Self::with_working_directories). The
    /// cwd itself is none (Claude Code's are its original cwd and the additional
    /// directories): a `cd` within them widens nothing, and a directory the session is in
    /// that a link replaced later does not carry them where the link leads.
    pub fn working_directories(&self) -> Vec<PathBuf> {
        let mut dirs = Vec::new();
        for d in self
            .inner
            .entered_dir
            .iter()
            .chain(std::iter::once(&self.inner.project_dir))
            .chain(&self.inner.working_directories)
            .chain(&self.inner.permission.additional_working_directories)
        {
            if !dirs.contains(d) {
                dirs.push(d.clone());
            }
        }
        dirs
    }

    /// The user's home directory, for `~` expansion.
    pub fn home(&self) -> Option<&Path> {
        self.inner.home.as_deref()
    }

    /// Resolves a path from the model the way every tool must before use: see
    /// [`expand_path`].
    pub fn resolve_path(&self, raw: &str) -> PathBuf {
        expand_path(raw, &self.inner.cwd, self.inner.home.as_deref())
    }

    /// The permission state.
    pub fn permission(&self) -> &ToolPermissionContext {
        &self.inner.permission
    }

    /// The read cache.
    pub fn file_state(&self) -> &FileStateCache {
        &self.inner.file_state
    }

    /// The cancellation token of this call (or turn).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.inner.cancel
    }

    /// Whether this call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// A context whose token is a child of this one's: cancelling the parent cancels it,
    /// cancelling it leaves the parent alone (a sibling group).
    pub fn child(&self) -> Self {
        let token = self.inner.cancel.child_token();
        self.clone().with_cancellation(token)
    }

    /// Host state shared by the session.
    pub fn app_state(&self) -> &AppState {
        &self.inner.app_state
    }

    /// The conversation so far.
    pub fn messages(&self) -> &[Message] {
        &self.inner.messages
    }

    /// Sends a notification to the user, if the host listens.
    pub fn notify(&self, notification: Notification) {
        if let Some(sink) = &self.inner.notifications {
            sink(notification);
        }
    }

    /// The sub-agent this call runs in, if any.
    pub fn agent(&self) -> Option<&AgentInfo> {
        self.inner.agent.as_ref()
    }

    /// The denial counters (shared).
    pub fn denials(&self) -> DenialTracking {
        *lock(&self.inner.denials)
    }

    /// Updates the denial counters (shared).
    pub fn update_denials<R>(&self, f: impl FnOnce(&mut DenialTracking) -> R) -> R {
        f(&mut lock(&self.inner.denials))
    }

    /// Reads or updates the content-replacement decisions (shared).
    pub fn content_replacement<R>(&self, f: impl FnOnce(&mut ContentReplacementState) -> R) -> R {
        f(&mut lock(&self.inner.content_replacement))
    }

    /// The id of the tool_use being run, inside a call.
    pub fn tool_use_id(&self) -> Option<&str> {
        self.inner.tool_use_id.as_deref()
    }

    /// Inside a call, when it got its id ([`with_tool_use_id`](Self::with_tool_use_id)),
    /// process-wide: calls start in the order their blocks came, so a call with a smaller
    /// number has its result earlier in the conversation. A Read uses it to refer only to
    /// an earlier result ("File unchanged since last read"), never to one of a call that
    /// started after it and merely finished first.
    pub fn call_order(&self) -> Option<u64> {
        (self.inner.call_order != 0).then_some(self.inner.call_order)
    }

    /// The session id.
    pub fn session_id(&self) -> &str {
        &self.inner.session_id
    }

    /// The file the model writes its plan to in plan mode (Claude Code's plan file):
    /// `plans/<session id>.md` in the user config dir (`$CLAUDE_CONFIG_DIR`, else
    /// `~/.claude`). The one file plan mode lets Write and Edit change; ExitPlanMode shows
    /// the user what it holds. `None` without a config dir or home, or a session id that
    /// is no file name.
    pub fn plan_file(&self) -> Option<PathBuf> {
        let id = self.session_id();
        if id.is_empty()
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return None;
        }
        let config = self
            .inner
            .config_dir
            .clone()
            .or_else(|| self.home().map(|h| h.join(".claude")))?;
        Some(normalize_lexically(
            &config.join("plans").join(format!("{id}.md")),
        ))
    }

    /// The id of the user prompt being worked on (hooks get it as `prompt_id`); `None`
    /// before the first prompt, or where there are no prompts.
    pub fn prompt_id(&self) -> Option<&str> {
        self.inner.prompt_id.as_deref()
    }

    /// Where large results are written, if persistence is on.
    pub fn results_dir(&self) -> Option<&Path> {
        self.inner.results_dir.as_deref()
    }

    /// The hooks of events a tool raises itself (TaskCreated, TaskCompleted), if the host
    /// gave any ([`with_hook_events`](Self::with_hook_events)): the pipeline puts its own in
    /// every call's context. `None`: no such hooks run.
    pub fn hook_events(&self) -> Option<&Arc<dyn HookEvents>> {
        self.inner.hook_events.as_ref()
    }

    /// Runs the hooks of `event` with `fields` through [`hook_events`](Self::hook_events),
    /// under this context's cancellation; without any, an empty outcome (nothing blocks).
    pub async fn run_hook_event(
        &self,
        event: &'static str,
        fields: serde_json::Map<String, serde_json::Value>,
    ) -> HookEventOutcome {
        match &self.inner.hook_events {
            Some(hooks) => hooks.run(event, fields, self).await,
            None => HookEventOutcome::default(),
        }
    }

    // ----- deriving -----

    /// With session options.
    pub fn with_options(self, options: ToolOptions) -> Self {
        self.edit(|i| i.options = options)
    }

    /// With a tool list.
    pub fn with_tools(self, tools: impl Into<Arc<[Arc<dyn Tool>]>>) -> Self {
        let tools = tools.into();
        self.edit(|i| i.options.tools = tools)
    }

    /// With a new working directory. A move inside the working directories (a Bash `cd`,
    /// ExitWorktree back to the project) adds none. A move outside them (EnterWorktree into
    /// a worktree elsewhere) makes the new directory one, for as long as the session stays
    /// inside it: a later move inside it (`cd sub`) keeps it, one elsewhere ends it. Inside
    /// is judged on the paths as written and on their real paths.
    pub fn with_cwd(self, cwd: impl Into<PathBuf>) -> Self {
        let cwd = cwd.into();
        self.edit(|i| {
            let entered = i.entered_dir.take();
            i.entered_dir = match entered {
                Some(dir) if is_within(&cwd, std::slice::from_ref(&dir)) => Some(dir),
                _ => {
                    let others: Vec<PathBuf> = std::iter::once(&i.project_dir)
                        .chain(&i.working_directories)
                        .chain(&i.permission.additional_working_directories)
                        .cloned()
                        .collect();
                    (!is_within(&cwd, &others)).then(|| cwd.clone())
                }
            };
            i.cwd = cwd;
        })
    }

    /// With additional working directories.
    pub fn with_working_directories(self, dirs: Vec<PathBuf>) -> Self {
        self.edit(|i| i.working_directories = dirs)
    }

    /// With a home directory for `~` expansion (`None`: `~` is not expanded).
    pub fn with_home(self, home: Option<PathBuf>) -> Self {
        self.edit(|i| i.home = home)
    }

    /// The user config dir given in place of `~/.claude` (`$CLAUDE_CONFIG_DIR`), if any.
    pub fn config_dir(&self) -> Option<&Path> {
        self.inner.config_dir.as_deref()
    }

    /// With a user config dir in place of `~/.claude` (`$CLAUDE_CONFIG_DIR`; `None`: the
    /// home's `.claude`).
    pub fn with_config_dir(self, dir: Option<PathBuf>) -> Self {
        self.edit(|i| i.config_dir = dir)
    }

    /// With a permission state.
    pub fn with_permission(self, permission: ToolPermissionContext) -> Self {
        self.edit(|i| i.permission = permission)
    }

    /// A context for another session of the same host (a second client of a server): the
    /// same options, tools, directories, permission state and results directory, with
    /// session state of its own: an empty read cache, new app state (background tasks,
    /// task and todo lists, interpreters), new denial counters and content-replacement
    /// decisions, no conversation, and `session_id`.
    pub fn for_new_session(&self, session_id: impl Into<String>) -> Self {
        let session_id = session_id.into();
        self.clone().edit(|i| {
            i.file_state = FileStateCache::default();
            i.app_state = AppState::default();
            i.denials = Arc::default();
            i.content_replacement = Arc::default();
            i.messages = Arc::from(Vec::new());
            i.tool_use_id = None;
            i.session_id = session_id;
            i.prompt_id = None;
        })
    }

    /// With a (shared) read cache.
    pub fn with_file_state(self, cache: FileStateCache) -> Self {
        self.edit(|i| i.file_state = cache)
    }

    /// With a cancellation token.
    pub fn with_cancellation(self, token: CancellationToken) -> Self {
        self.edit(|i| i.cancel = token)
    }

    /// With the conversation so far.
    pub fn with_messages(self, messages: impl Into<Arc<[Message]>>) -> Self {
        let messages = messages.into();
        self.edit(|i| i.messages = messages)
    }

    /// With a notification sink.
    pub fn with_notifications(self, sink: NotificationSink) -> Self {
        self.edit(|i| i.notifications = Some(sink))
    }

    /// Inside a sub-agent.
    pub fn with_agent(self, agent: AgentInfo) -> Self {
        self.edit(|i| i.agent = Some(agent))
    }

    /// For the call with this tool_use id; the call gets its [`call_order`](Self::call_order)
    /// unless it has one ([`with_next_call_order`](Self::with_next_call_order)).
    pub fn with_tool_use_id(self, id: impl Into<String>) -> Self {
        let id = id.into();
        let order = if self.inner.call_order_reserved {
            self.inner.call_order
        } else {
            NEXT_CALL_ORDER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        };
        self.edit(|i| {
            i.tool_use_id = Some(id);
            i.call_order = order;
            i.call_order_reserved = false;
        })
    }

    /// With the next [`call_order`](Self::call_order): for a host that starts calls in
    /// their blocks' order and runs each on a task of its own, which may begin later than
    /// one started after it. Given before the task is spawned, the order is the start order;
    /// [`with_tool_use_id`](Self::with_tool_use_id) then keeps it.
    pub fn with_next_call_order(self) -> Self {
        let order = NEXT_CALL_ORDER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.edit(|i| {
            i.call_order = order;
            i.call_order_reserved = true;
        })
    }

    /// With a session id.
    pub fn with_session_id(self, id: impl Into<String>) -> Self {
        let id = id.into();
        self.edit(|i| i.session_id = id)
    }

    /// With the id of the user prompt being worked on.
    pub fn with_prompt_id(self, id: impl Into<String>) -> Self {
        let id = id.into();
        self.edit(|i| i.prompt_id = Some(id))
    }

    /// With a directory for persisted large results (and the output of a session's shell
    /// commands and background tasks). Tools make it on first use, readable by this user
    /// only, inside its parent, which must exist ([`create_private_dir`](crate::create_private_dir)):
    /// while it cannot be made, large results are cut instead of saved.
    pub fn with_results_dir(self, dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        self.edit(|i| i.results_dir = Some(dir))
    }

    /// With the hooks of events tools raise themselves (see
    /// [`hook_events`](Self::hook_events)), in place of any given before.
    pub fn with_hook_events(self, hooks: Arc<dyn HookEvents>) -> Self {
        self.edit(|i| i.hook_events = Some(hooks))
    }

    /// Without hooks of events tools raise: such events run nothing.
    pub fn without_hook_events(self) -> Self {
        self.edit(|i| i.hook_events = None)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn env_truthy_reads_as_claude_code() {
        for on in ["1", "true", "TRUE", " yes ", "On"] {
            assert!(super::env_truthy(on), "{on}");
        }
        for off in [
            "", "0", "false", "FALSE", "no", "off", "Off", "2", "enabled",
        ] {
            assert!(!super::env_truthy(off), "{off}");
        }
    }

    use super::*;

    /// The hooks' environment files are taken by Claude Code's names only, and sourced by
    /// event, then by hook index as a number (`-10` after `-2`).
    #[test]
    fn hook_env_files_come_in_event_then_index_order() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "sessionstart-hook-10.sh",
            "cwdchanged-hook-0.sh",
            "sessionstart-hook-2.sh",
            "setup-hook-1.sh",
            "sessionstart-hook-+1.sh",
            "stop-hook-0.sh",
            "sessionstart-hook-.sh",
            "sessionstart-hook-3.sh.bak",
        ] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let names: Vec<String> = hook_env_files(dir.path())
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "setup-hook-1.sh",
                "sessionstart-hook-2.sh",
                "sessionstart-hook-10.sh",
                "cwdchanged-hook-0.sh"
            ]
        );
        assert_eq!(
            hook_env_file_name("SessionStart", 3),
            "sessionstart-hook-3.sh"
        );
        assert!(hook_env_files(&dir.path().join("missing")).is_empty());
    }

    /// A settings file larger than 16 MiB is not read (a sparse 1 GiB file a repository
    /// ships cost every session a minute and gigabytes before it was found invalid); one of
    /// ordinary size is. Found by review.
    #[test]
    fn a_settings_file_past_the_limit_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("settings.json");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_SETTINGS_BYTES + 1)
            .unwrap();
        let e = read_config_text_settled(&big).unwrap_err();
        assert!(
            e.to_string()
                .contains("more than the 16 MiB a settings file may hold"),
            "{e}"
        );
        let small = dir.path().join("small.json");
        std::fs::write(&small, "{}").unwrap();
        assert_eq!(read_config_text_settled(&small).unwrap().0, "{}");
    }
    use crate::permission::PermissionMode;

    /// Node's `JSON.parse` takes half a surrogate pair; a settings file holding one keeps
    /// its rules here too, with U+FFFD for the half. Pairs, escaped backslashes and text
    /// outside strings are left as they are, and broken JSON stays broken.
    #[test]
    fn config_json_reads_lone_surrogates_as_json_parse_does() {
        let parsed = |t: &str| super::parse_config_json(t).map_err(|e| e.to_string());
        let value = parsed(
            "\u{feff}{\"deny\": [\"Read(./a\\ud800b)\", \"Read(./\\udfff)\", \"x\\ud83d\\ude00\", \"\\\\ud800\", \"\\ud800\\u0041\", \"\\ud800\\ud800\\udc00\"]}",
        )
        .unwrap();
        assert_eq!(
            value["deny"],
            serde_json::json!([
                "Read(./a\u{fffd}b)",
                "Read(./\u{fffd})",
                "x\u{1f600}",
                "\\ud800",
                "\u{fffd}A",
                "\u{fffd}\u{10000}"
            ])
        );
        // The common path: one parse, same result as serde_json's.
        assert_eq!(parsed("{\"a\": 1}").unwrap(), serde_json::json!({"a": 1}));
        // Still JSON: a surrogate outside a string or a broken file is an error, and the
        // error names the real problem, where it is in the text as written.
        let err = parsed("{\"a\": \"\\ud800\"").unwrap_err();
        assert!(
            err.contains("EOF while parsing an object at line 1 column 14"),
            "{err}"
        );
        let err = parsed("{\"a\": \\ud800}").unwrap_err();
        assert!(err.contains("expected value"), "{err}");
        let err = parsed("{\"a\": \"\\ud800\\x\"}").unwrap_err();
        assert!(err.contains("invalid escape at line 1 column 15"), "{err}");
    }

    /// Found by review: `1e400` anywhere in a settings file made the whole file invalid JSON
    /// (serde_json: "number out of range"), deny rules included, where `JSON.parse` reads it
    /// as Infinity. It reads as the largest finite number with its sign; a number that
    /// rounds to zero, text in strings and broken JSON are left as they were, and a later
    /// error is still said where it is in the text as written.
    #[test]
    fn config_json_reads_numbers_out_of_range_as_json_parse_does() {
        let parsed = |t: &str| super::parse_config_json(t).map_err(|e| e.to_string());
        let value = parsed(
            "{\"a\": [1e400, -1E+400, 1.5e309, 1e-400, \"1e400\", \"\\\"1e400\"], \"deny\": [\"Bash(rm:*)\"],\n\"b\": \"\\ud800\", \"c\": -2e308}",
        )
        .unwrap();
        assert_eq!(
            value["a"],
            serde_json::json!([f64::MAX, -f64::MAX, f64::MAX, 0.0, "1e400", "\"1e400"])
        );
        assert_eq!(value["deny"], serde_json::json!(["Bash(rm:*)"]));
        assert_eq!(value["b"], serde_json::json!("\u{fffd}"));
        assert_eq!(value["c"], serde_json::json!(-f64::MAX));
        // A huge integer too (serde_json reads one past u64 as a float).
        let digits = format!("[{}]", "9".repeat(400));
        assert_eq!(parsed(&digits).unwrap(), serde_json::json!([f64::MAX]));
        // Broken JSON after the number: its error is said where it is in the text.
        // (The same text with a number of the same length in range says where.)
        for broken in [
            "{\"a\": 1e400, \"b\": 1,}",
            "{\"a\": 1e400, \"b\": \"\\ud800\",\n \"c\": 1e401 1}",
        ] {
            let err = parsed(broken).unwrap_err();
            let expected = parsed(&broken.replace("1e40", "1000")).unwrap_err();
            assert!(expected.contains(" at line "), "{expected}");
            assert_eq!(err, expected);
        }
        // An out-of-range number that is malformed besides stays an error.
        assert!(parsed("[1e400.5]").is_err());
    }

    /// Found by review: a number just below the overflow limit (`1.7976931348623158e308`,
    /// `1.797693134862315799e308`), which serde_json refuses as out of range and `JSON.parse`
    /// reads as the largest double, made the whole file unreadable: it reads as that double,
    /// with its sign, as every number serde_json refuses and Rust reads exactly does.
    #[test]
    fn config_json_reads_numbers_just_below_the_limit_as_json_parse_does() {
        for n in ["1.7976931348623158e308", "1.797693134862315799e308"] {
            let text = format!("{{\"a\": [{n}, -{n}], \"deny\": [\"Bash(rm:*)\"]}}");
            let value = super::parse_config_json(&text).unwrap_or_else(|e| panic!("{n}: {e}"));
            assert_eq!(value["a"], serde_json::json!([f64::MAX, -f64::MAX]), "{n}");
            assert_eq!(value["deny"], serde_json::json!(["Bash(rm:*)"]));
        }
    }

    /// Found by review: an error after a rewritten number longer than the largest double
    /// (400 nines) was said at the wrong column, and an error after any rewritten number was
    /// no longer a syntax error and had no line (`Error::custom`). It is serde's own error,
    /// its kind, line and column those of the text as written.
    #[test]
    fn config_json_errors_after_a_rewritten_number_keep_their_place_and_kind() {
        let long = format!("{{\"deny\":[\"Bash(rm:*)\"],\"x\":{},}}", "9".repeat(400));
        let short = "{\"a\": 1e400, \"b\": 1,}\n".to_owned();
        let two_lines = "[1,\n -1e400, 2,]".to_owned();
        for text in [long, short, two_lines] {
            let err = super::parse_config_json(&text).unwrap_err();
            // The trailing comma's error is said at the closing bracket.
            let at = text.rfind([']', '}']).unwrap();
            let line = text[..at].matches('\n').count() + 1;
            let column = at - text[..at].rfind('\n').map_or(0, |n| n + 1) + 1;
            assert!(err.is_syntax(), "{text}: {err}");
            assert_eq!((err.line(), err.column()), (line, column), "{err}");
            assert!(err.to_string().contains("trailing comma"), "{err}");
        }
    }

    /// Found by review: a configuration file that is a link to nothing counted as no file
    /// (its deny rules dropped without a word). It is an error naming where the link leads,
    /// and so is a missing file below a directory that is such a link; a file that is not
    /// there is still `NotFound`.
    #[test]
    fn a_dangling_link_is_no_missing_file() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("settings.json");
        std::os::unix::fs::symlink(dir.path().join("gone.json"), &link).unwrap();
        let err = super::read_config_text(&link).unwrap_err();
        assert_ne!(err.kind(), std::io::ErrorKind::NotFound);
        let said = err.to_string();
        assert!(
            said.contains("a link to")
                && said.contains("gone.json")
                && said.contains("which does not exist"),
            "{said}"
        );
        let dir_link = dir.path().join(".claude");
        std::os::unix::fs::symlink(dir.path().join("nothing"), &dir_link).unwrap();
        let err = super::read_config_text(&dir_link.join("settings.json")).unwrap_err();
        assert_ne!(err.kind(), std::io::ErrorKind::NotFound);
        let said = err.to_string();
        assert!(
            said.contains(&dir_link.display().to_string())
                && said.contains("is a link to")
                && said.contains("nothing"),
            "{said}"
        );
        let err = super::read_config_text(&dir.path().join("none/settings.json")).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
        let err = super::read_config_text(&dir.path().join("settings.local.json")).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    }

    /// Found by review: a settings file linked to `/proc/kmsg` hung every command run as
    /// root (the kernel's files pass as regular files). A link into `/proc` or `/sys` is
    /// refused, with the file it leads to named; nothing of it is read.
    #[test]
    fn a_link_to_a_kernel_file_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        for target in ["/proc/self/status", "/sys/kernel/uevent_seqnum"] {
            if !std::path::Path::new(target).exists() {
                continue;
            }
            let link = dir.path().join("settings.json");
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(target, &link).unwrap();
            let err = super::read_config_text(&link).unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{target}");
            let said = err.to_string();
            assert!(said.contains("a kernel file (/"), "{said}");
            assert!(said.contains("not read"), "{said}");
        }
    }

    /// Found by review: a link to a link to nothing was said to be "a link to l2, which does
    /// not exist", though `l2` exists. The error names the missing end of the chain (relative
    /// targets read from their link's directory), for a file and for a directory above it.
    #[test]
    fn a_chain_of_links_names_its_missing_end() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nonexistent/x");
        std::os::unix::fs::symlink("l2", dir.path().join("settings.json")).unwrap();
        std::os::unix::fs::symlink("sub/l3", dir.path().join("l2")).unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::os::unix::fs::symlink(&missing, dir.path().join("sub/l3")).unwrap();
        let err = super::read_config_text(&dir.path().join("settings.json")).unwrap_err();
        assert_ne!(err.kind(), std::io::ErrorKind::NotFound);
        let said = err.to_string();
        assert!(
            said.contains(&format!("{}, which does not exist", missing.display())),
            "{said}"
        );
        assert!(!said.contains("l2, which does not exist"), "{said}");
        // A directory reached through the chain.
        std::os::unix::fs::symlink("settings.json", dir.path().join(".claude")).unwrap();
        let err = super::read_config_text(&dir.path().join(".claude/settings.json")).unwrap_err();
        let said = err.to_string();
        assert!(
            said.contains(&format!("{}, which does not exist", missing.display()))
                && said.contains(".claude"),
            "{said}"
        );
    }

    #[test]
    fn with_methods_copy_on_write_and_share_state() {
        let base = ToolUseContext::new("/a");
        let derived = base
            .clone()
            .with_cwd("/b")
            .with_permission(ToolPermissionContext {
                mode: PermissionMode::Plan,
                ..Default::default()
            });
        assert_eq!(base.cwd(), Path::new("/a"));
        assert_eq!(derived.cwd(), Path::new("/b"));
        assert_eq!(base.permission().mode, PermissionMode::Default);
        // Shared state is shared.
        derived.app_state().set(7u32);
        assert_eq!(base.app_state().get::<u32>(), Some(7));
        derived.update_denials(|d| d.record_denial());
        assert_eq!(base.denials().consecutive, 1);
    }

    #[test]
    fn child_cancellation_is_one_way() {
        let parent = ToolUseContext::new("/");
        let child = parent.child();
        child.cancellation().cancel();
        assert!(!parent.is_cancelled());
        let child2 = parent.child();
        parent.cancellation().cancel();
        assert!(child2.is_cancelled());
    }

    #[test]
    fn app_state_update_and_denial_limits() {
        let state = AppState::default();
        state.update::<Vec<u8>, _>(|v| v.push(1));
        state.update::<Vec<u8>, _>(|v| v.push(2));
        assert_eq!(state.get::<Vec<u8>>(), Some(vec![1, 2]));
        let mut d = DenialTracking::default();
        assert!(!d.record_denial());
        assert!(!d.record_denial());
        assert!(d.record_denial());
        d.record_allow();
        assert_eq!(
            d,
            DenialTracking {
                consecutive: 0,
                total: 3
            }
        );
    }

    #[test]
    fn working_directories_dedupe() {
        let ctx = ToolUseContext::new("/w")
            .with_working_directories(vec!["/x".into(), "/w".into()])
            .with_permission(ToolPermissionContext {
                additional_working_directories: vec!["/x".into(), "/y".into()],
                ..Default::default()
            });
        assert_eq!(
            ctx.working_directories(),
            vec![PathBuf::from("/w"), "/x".into(), "/y".into()]
        );
    }

    #[test]
    fn content_replacement_freezes_first_decision() {
        let ctx = ToolUseContext::new("/");
        ctx.content_replacement(|s| s.freeze("t1", Some("preview".into())));
        ctx.content_replacement(|s| s.freeze("t1", None));
        assert_eq!(
            ctx.content_replacement(|s| s.decision("t1").map(|d| d.map(str::to_owned))),
            Some(Some("preview".into()))
        );
    }

    /// A `commondir` that is swapped between a regular file and a FIFO while the
    /// worktree's files are read (a folder's own `.git` can name a directory of its own) is
    /// never opened to wait for a writer: the type is checked on the opened file. Found by
    /// review 39: the type was checked first and the path opened after, so a FIFO swapped
    /// in between was opened, and the session waited for ever. The swap runs all through
    /// many reads, so the old order is caught in it every time.
    #[test]
    fn a_fifo_swapped_in_while_reading_a_worktree_is_never_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let folder = base.join("folder");
        let admin = base.join("admin");
        std::fs::create_dir(&folder).unwrap();
        std::fs::create_dir(&admin).unwrap();
        std::fs::write(folder.join(".git"), "gitdir: ../admin\n").unwrap();
        let regular = base.join("regular");
        std::fs::write(&regular, "../repo/.git\n").unwrap();
        let fifo = base.join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let swapper = {
            let stop = Arc::clone(&stop);
            let (regular, fifo, admin) = (regular.clone(), fifo.clone(), admin.clone());
            std::thread::spawn(move || {
                let link = admin.join("link");
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    for target in [&regular, &fifo] {
                        let _ = std::fs::remove_file(&link);
                        std::os::unix::fs::symlink(target, &link).unwrap();
                        std::fs::rename(&link, admin.join("commondir")).unwrap();
                    }
                }
            })
        };
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            for _ in 0..20_000 {
                assert_eq!(canonical_git_root(&folder), Some(folder.clone()));
            }
            let _ = done_tx.send(());
        });
        let finished = done_rx.recv_timeout(std::time::Duration::from_secs(30));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        swapper.join().unwrap();
        match finished {
            Ok(()) => reader.join().unwrap(),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                std::panic::resume_unwind(reader.join().unwrap_err());
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                // Lets the reader that waits on the FIFO go (a writer comes and goes).
                use std::os::unix::fs::OpenOptionsExt as _;
                drop(
                    std::fs::OpenOptions::new()
                        .write(true)
                        .custom_flags(nix::libc::O_NONBLOCK)
                        .open(&fifo),
                );
                let _ = reader.join();
                panic!("a read waited on a FIFO swapped in");
            }
        }
    }
}
