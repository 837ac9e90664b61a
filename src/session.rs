//! A session as the binary runs it: the settings of a directory (permissions and hooks, with
//! Claude Code's files and precedence), the tools of this build, and the pipeline that ties
//! them together.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tool_core::{RuleSource, Tool, ToolUseContext};
use tool_exec::{DenyAsks, Pipeline};
use tool_hooks::{HookRunner, SettingsPaths, load_hooks};
use tool_perms::PermissionEngine;
use tool_perms::settings::{SettingsSources, load_permissions};

/// The flags every subcommand that runs tools shares.
#[derive(Debug, Clone, clap::Args)]
pub struct SessionArgs {
    /// A settings file (or inline JSON), as Claude Code's `--settings`; repeatable.
    #[arg(long = "settings", value_name = "FILE|JSON", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub settings: Vec<String>,
    /// Permission mode: default (or manual), acceptEdits, plan, dontAsk, bypassPermissions or
    /// auto (no classifier here: as default).
    #[arg(long)]
    pub mode: Option<String>,
    /// The project directory (default: the current directory).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// An MCP configuration file (or JSON), as Claude Code's `--mcp-config`; repeatable.
    #[arg(long = "mcp-config", value_name = "FILE|JSON", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub mcp_config: Vec<String>,
    /// Use only the `--mcp-config` servers: not the user's, the project's `.mcp.json` or
    /// the local ones (Claude Code's `--strict-mcp-config`).
    #[arg(long = "strict-mcp-config")]
    pub strict_mcp_config: bool,
}

impl SessionArgs {
    /// The options these flags describe; `isolated` (the demo's bundled server) ignores user
    /// and managed settings and `CLAUDE_CODE_SIMPLE`, as the demo's own session does.
    pub fn options(&self, isolated: bool) -> SessionOptions {
        SessionOptions {
            cwd: self.cwd.clone().unwrap_or_else(|| PathBuf::from(".")),
            settings: self.settings.clone(),
            mode: self.mode.clone(),
            user_and_managed_settings: !isolated,
            trusted: None,
            mcp_config: self.mcp_config.clone(),
            strict_mcp_config: self.strict_mcp_config,
            connect_mcp_in_background: false,
            offer_tool_search: true,
            fires_scheduled_jobs: false,
            simple_mode_from_env: !isolated,
            offer_web_search: true,
        }
    }
}

/// Reads, once, each `--settings` (or `--mcp-config`) value that names a pipe or another
/// file that is not a regular one (`--settings <(...)`, `/dev/stdin`), and puts its text in
/// place of the name. Each value is read by several readers (the settings `env`, the
/// permissions, the hooks): a pipe read a second time is empty, and an empty settings file
/// would quietly grant what its deny rules and hooks were there to stop. A pipe whose text
/// is not a JSON object is refused with the value named. A value that names standard input
/// (`/dev/stdin`, `/dev/fd/0`, `/proc/self/fd/0`, or the file standard input is) is
/// remembered ([`standard_input_readers`]): a command whose own input is standard input
/// too refuses to start.
pub(crate) fn read_pipes_once(values: &mut [String], flag: &str) -> Result<(), String> {
    for value in values.iter_mut() {
        if tool_core::is_inline_json(value) {
            continue;
        }
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let resolved =
            tool_perms::settings::resolve_flag_settings(std::slice::from_ref(value), &cwd);
        let path = PathBuf::from(&resolved[0]);
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        let from_stdin = names_standard_input(&path);
        if from_stdin {
            STANDARD_INPUT_READERS
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(format!("{flag} {value}"));
        }
        if meta.is_file() || meta.is_dir() {
            continue;
        }
        // What the flag gives, and what would be lost if it gave nothing.
        let (what, lost) = if flag == "--mcp-config" {
            ("the MCP configuration", "its servers")
        } else {
            ("the settings", "their rules")
        };
        // Said of a value read from standard input: it may have been meant for the command.
        let stdin_note = if from_stdin {
            format!(
                ". It reads standard input: if that is also the command's input, give {what} another way (a file, inline JSON, <(...))"
            )
        } else {
            String::new()
        };
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("{flag} {value}: cannot be read: {e}{stdin_note}"))?;
        // Unlike a blank regular file (`{}`): a generator that failed gives nothing, and its
        // rules would be lost without a word.
        if text.trim().is_empty() {
            return Err(format!(
                "{flag} {value}: not a regular file, and it gave nothing (a pipe or device that gives no text is refused: a command that failed to write {what} would drop {lost} unseen; give '{{}}' for none){stdin_note}"
            ));
        }
        if !tool_core::is_inline_json(&text) {
            return Err(format!(
                "{flag} {value}: not a regular file, and what it gave is not a JSON object{stdin_note}"
            ));
        }
        *value = text;
    }
    Ok(())
}

/// The `--settings` and `--mcp-config` values (`--settings /dev/stdin`) that
/// [`read_pipes_once`] found naming standard input.
static STANDARD_INPUT_READERS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The flags and values that read standard input ([`read_pipes_once`]), as given: a command
/// that reads its own input there (`run -`) refuses to start when there is one, as the two
/// would share one stream.
pub(crate) fn standard_input_readers() -> Vec<String> {
    STANDARD_INPUT_READERS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

/// Whether `path` names the file this process's standard input is (`/dev/stdin`,
/// `/dev/fd/0`, `/proc/self/fd/0`, a FIFO or file also given by its name): the same device
/// and inode. False when standard input is closed or either cannot be looked at.
pub(crate) fn names_standard_input(path: &Path) -> bool {
    use std::os::fd::AsFd as _;
    use std::os::unix::fs::MetadataExt as _;
    let Ok(named) = std::fs::metadata(path) else {
        return false;
    };
    let stdin = std::io::stdin();
    let Ok(own) = stdin
        .as_fd()
        .try_clone_to_owned()
        .map(std::fs::File::from)
        .and_then(|f| f.metadata())
    else {
        return false;
    };
    named.dev() == own.dev() && named.ino() == own.ino()
}

/// What a session is opened with.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// The project directory.
    pub cwd: PathBuf,
    /// `--settings` values.
    pub settings: Vec<String>,
    /// A mode that overrides the settings' `defaultMode`.
    pub mode: Option<String>,
    /// Whether user (`~/.claude`) and managed settings apply.
    pub user_and_managed_settings: bool,
    /// Whether the project's own settings may grant (allow rules, hooks, `.mcp.json`
    /// servers): `None` reads the trust record (see [`crate::trust`]).
    pub trusted: Option<bool>,
    /// `--mcp-config` values.
    pub mcp_config: Vec<String>,
    /// `--strict-mcp-config`: only the `--mcp-config` servers.
    pub strict_mcp_config: bool,
    /// Open without waiting for the MCP servers: [`Session::mcp_connecting`] connects them
    /// (`serve`, which answers its clients meanwhile), and the host reads
    /// [`Session::current_tools`] once it is done (first connections are not announced
    /// through [`Session::tools_changed`]; later changes are). Otherwise [`Session::open`]
    /// waits for every server.
    pub connect_mcp_in_background: bool,
    /// Whether ToolSearch is among the tools: not where no model asks for deferred tools'
    /// schemas (`serve`: an MCP client lists every tool's schema itself; `run` with tool
    /// search off, as the agent loop would not offer it). The agent loop decides per
    /// request and keeps it.
    pub offer_tool_search: bool,
    /// Whether the host fires scheduled jobs: polls the session's
    /// `tools_builtin::cron::CronStore` (`due_jobs`) and runs each due job's prompt. Only
    /// then are the Cron tools (the `agent-triggers` family) among the tools
    /// ([`not_offered_because`]): elsewhere a job the model schedules would never fire,
    /// though CronCreate would tell it when it fires next. None of this binary's commands
    /// does (`agent` answers one prompt, `run` one response, `serve` a client's calls).
    pub fires_scheduled_jobs: bool,
    /// Whether `CLAUDE_CODE_SIMPLE` in the environment narrows the built-in tools to Bash,
    /// Read and Edit. Not for the demo, whose recorded turn calls the tools it was recorded
    /// with, whatever the environment.
    pub simple_mode_from_env: bool,
    /// Whether WebSearch is among the tools. Not for `serve`: it has no model to search
    /// with (the agent's `WebSearchBackendHook`), and a client would list a tool whose every
    /// call fails. `run` keeps it, so that a recorded call is answered with why it cannot
    /// search.
    pub offer_web_search: bool,
}

impl SessionOptions {
    /// The settings files a session in `cwd` (canonical) reads, `--settings` resolved.
    fn settings_sources(&self, cwd: &std::path::Path, trusted: bool) -> SettingsSources {
        let mut sources = SettingsSources::standard_with_env(cwd, var_before_settings);
        if !self.user_and_managed_settings {
            sources.user_config_dir = None;
            sources.managed_dir = None;
        }
        sources.flag_settings = tool_perms::settings::resolve_flag_settings(&self.settings, cwd);
        sources.project_trusted = trusted;
        sources
    }

    /// Where the engine anchors rules and what it protects: the settings' roots, with each
    /// `--mcp-config` file among this session's settings files. Such a file names the MCP
    /// servers the next session starts, as a `--settings` file names hooks that run: writing
    /// it is a safety check (asked about even in bypass mode).
    fn protected_roots(
        &self,
        loaded: &tool_perms::settings::LoadedPermissions,
        cwd: &Path,
    ) -> tool_perms::PathRoots {
        let mut roots = loaded.roots.clone();
        roots.settings_files.extend(
            tool_perms::settings::resolve_flag_settings(&self.mcp_config, cwd)
                .into_iter()
                .filter(|arg| !tool_core::is_inline_json(arg))
                .map(PathBuf::from),
        );
        roots
    }

    /// Only the project's own settings, trusted, and the tools `CLAUDE_CODE_SIMPLE` would
    /// leave out still offered: what the demo uses for the project it created, so that
    /// nothing of the user's configuration changes what it shows.
    pub fn isolated(cwd: PathBuf) -> Self {
        Self {
            cwd,
            settings: Vec::new(),
            mode: None,
            user_and_managed_settings: false,
            trusted: Some(true),
            mcp_config: Vec::new(),
            strict_mcp_config: false,
            connect_mcp_in_background: false,
            offer_tool_search: true,
            fires_scheduled_jobs: false,
            simple_mode_from_env: false,
            offer_web_search: true,
        }
    }
}

/// `permissions` for a session nobody can answer (`why` says why), as
/// [`NoPrompts`](toolwright::agent::prompting::NoPrompts) makes them: EnterPlanMode is refused
/// unless one of `hooks`' PermissionRequest hooks names ExitPlanMode (which could then approve
/// leaving plan mode in the user's place).
pub fn no_prompts(
    permissions: Arc<dyn tool_exec::Permissions>,
    hooks: &HookRunner,
    why: &str,
) -> toolwright::agent::prompting::NoPrompts {
    let exit_plan_mode_answered = hooks.has_hooks_naming(
        "PermissionRequest",
        toolwright::agent::prompting::EXIT_PLAN_MODE,
    );
    toolwright::agent::prompting::NoPrompts::new(permissions, why)
        .with_exit_plan_mode_answered(exit_plan_mode_answered)
}

/// An open session.
pub struct Session {
    /// The context calls run in (tools, cwd, permission state, results directory).
    pub ctx: ToolUseContext,
    /// The pipeline with the session's permissions and hooks, for a host that asks nobody
    /// (`run`, `demo`): a call that would ask is refused (after PermissionRequest hooks),
    /// and so is EnterPlanMode unless such a hook names ExitPlanMode ([`no_prompts`]).
    pub pipeline: Arc<Pipeline>,
    /// The session's permission engine, for a host that builds its own pipeline around it
    /// (`toolwright serve` asks through the MCP client).
    pub permissions: Arc<dyn tool_exec::Permissions>,
    /// The session's hooks, likewise.
    pub hooks: Arc<dyn tool_exec::Hooks>,
    /// The runner behind [`hooks`](Self::hooks), for a host that asks which hooks are
    /// configured ([`HookRunner::has_hooks`]).
    pub hook_runner: HookRunner,
    /// What the hooks' `if` conditions are matched with; told of tools added later.
    pub rule_matcher: Arc<tool_exec::PermissionRuleMatcher>,
    /// Things the user should know (settings problems, ignored files).
    pub notices: Vec<String>,
    /// With [`SessionOptions::connect_mcp_in_background`]: the MCP servers' connections
    /// being made, for the host to run (dropping it abandons them); its output is what the
    /// user should know of them (servers that failed), as [`notices`](Self::notices) are.
    pub mcp_connecting: Option<McpConnecting>,
    /// The MCP servers' connections; dropping the session ends their processes.
    pub mcp: Option<tools_mcp::McpManager>,
    /// The session's tools as they are now, assembled as [`ctx`](Self::ctx)'s were at the
    /// start: the built-ins, then the MCP servers' current tools (their lists as re-read
    /// after `notifications/tools/list_changed` or a reconnection), minus those a tool-wide
    /// deny rule removes.
    pub current_tools: tool_core::RefreshTools,
    /// Marked changed whenever an MCP server's tool list changed: a host that outlives a
    /// turn (`serve`) reads [`current_tools`](Self::current_tools) again. Closed when the
    /// session has no MCP server.
    pub tools_changed: tokio::sync::watch::Receiver<()>,
    /// The transcript file hooks are given as `transcript_path` (in the session's
    /// directory); `agent` writes the conversation to it. Empty when the session has no
    /// directory ([`Session::open`]): hooks are then given an empty `transcript_path`, and
    /// a transcript at an empty path is written nowhere
    /// ([`crate::agent::transcript::Transcript::new`]).
    pub transcript_path: PathBuf,
    /// The session's directory, removed with the session when nothing was saved in it;
    /// `None` when it could not be created.
    _dir: Option<SessionDir>,
}

/// The MCP servers' connections being made ([`Session::mcp_connecting`]).
pub type McpConnecting = std::pin::Pin<Box<dyn std::future::Future<Output = Vec<String>> + Send>>;

/// The transcript's file name in the session's directory.
pub(crate) const TRANSCRIPT_FILE: &str = "transcript.jsonl";

/// Where the session's large tool results are saved, in its directory.
const RESULTS_DIR: &str = "tool-results";

/// Where the MCP servers' binary resources are saved, in the session's directory.
const MCP_RESOURCES_DIR: &str = "mcp-resources";

/// The directory of the hooks' environment files (each SessionStart hook's own
/// `CLAUDE_ENV_FILE`) `agent` creates in the session's directory.
pub(crate) const SESSION_ENV_DIR: &str = "session-env";

/// Removes the session's directory when the session ends with nothing saved in it (an
/// empty hooks' environment file or transcript, or an empty directory, does not count), so
/// such a session leaves nothing behind. While the session is open its directory is listed
/// for [`remove_session_dirs_before_exit`].
struct SessionDir(PathBuf);

/// The directories of the sessions open in this process ([`SessionDir`]).
static OPEN_SESSION_DIRS: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

impl SessionDir {
    fn new(dir: PathBuf) -> Self {
        open_session_dirs().push(dir.clone());
        Self(dir)
    }
}

impl Drop for SessionDir {
    fn drop(&mut self) {
        // Removed first, unlisted after: an exit on the spot in the middle (a second signal
        // while the run winds down) finds the directory still listed and removes it itself,
        // where it would otherwise exit with the removal half done (an empty directory left).
        remove_if_nothing_saved(&self.0);
        open_session_dirs().retain(|dir| *dir != self.0);
    }
}

fn open_session_dirs() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    OPEN_SESSION_DIRS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Removes `dir`, a session's directory, when nothing is saved in it: its empty hooks'
/// environment files and transcript go first, then every empty directory in it (the results
/// directory and the folders its savers make, `toolwright-hook-output`, …, left empty by a
/// save that failed on a full disk), deepest first, then its project record
/// ([`record_project`]) when no results directory is left for it to speak for, then `dir`
/// itself when that left it empty. A saved file, and every directory above it, stays, and
/// so does the record beside saved results. Links are not followed.
///
/// The record keeps `dir` from going at once with its last empty directory: a call still
/// finishing while the process exits may make the results directory again in between (it
/// makes no parent, so once `dir` is gone it makes nothing). That is swept again, a few
/// times; should a result be saved in it after the record went, the record is put back.
fn remove_if_nothing_saved(dir: &Path) {
    let env_files = tool_core::hook_env_files(&dir.join(SESSION_ENV_DIR));
    for file in env_files.iter().chain([&dir.join(TRANSCRIPT_FILE)]) {
        if std::fs::symlink_metadata(file).is_ok_and(|m| m.is_file() && m.len() == 0) {
            let _ = std::fs::remove_file(file);
        }
    }
    let results = dir.join(RESULTS_DIR);
    let record = dir.join(tool_perms::SESSION_PROJECT_FILE);
    let recorded = std::fs::symlink_metadata(&record)
        .is_ok_and(|m| m.is_file())
        .then(|| std::fs::read(&record).ok())
        .flatten();
    for _ in 0..REMOVAL_ATTEMPTS {
        remove_empty_dirs(dir, 0);
        if std::fs::symlink_metadata(dir).is_err() {
            return;
        }
        if std::fs::symlink_metadata(&results).is_ok() {
            // Saved results (or something else where they go) stay with their record; an
            // empty directory made again since the sweep goes with the next one.
            if holds_anything(&results) {
                break;
            }
            continue;
        }
        if recorded.is_some() {
            let _ = std::fs::remove_file(&record);
        }
        if std::fs::remove_dir(dir).is_ok() {
            return;
        }
        // Something else is kept (a transcript), unless the results directory came back.
        if std::fs::symlink_metadata(&results).is_err() {
            return;
        }
    }
    if let Some(bytes) = recorded
        && std::fs::symlink_metadata(&results).is_ok()
        && std::fs::symlink_metadata(&record).is_err()
    {
        let _ = write_record(dir, &bytes);
    }
}

/// How many times [`remove_if_nothing_saved`] sweeps a session's directory.
const REMOVAL_ATTEMPTS: usize = 4;

/// Whether `path` is anything but an empty directory (links are not followed).
fn holds_anything(path: &Path) -> bool {
    !std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
        || std::fs::read_dir(path).map_or(true, |mut entries| entries.next().is_some())
}

/// How deep [`remove_empty_dirs`] goes: deeper than any directory a session makes.
const EMPTY_DIR_DEPTH: usize = 16;

/// Removes the empty directories under `dir` (not through links), deepest first, then
/// `dir` when it is then empty.
fn remove_empty_dirs(dir: &Path, depth: usize) {
    if depth > EMPTY_DIR_DEPTH
        || !std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_dir())
    {
        return;
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                remove_empty_dirs(&entry.path(), depth + 1);
            }
        }
    }
    // Fails, as it should, when anything is left in it.
    let _ = std::fs::remove_dir(dir);
}

/// What the sessions' destructors would have done, for a command about to exit on the spot
/// (`std::process::exit`, which runs none: a second signal, the last resort after one,
/// output nobody reads): the directory of each session still open is removed when nothing
/// is saved in it, after the scratch files of this process's shell commands in it
/// (`toolwright-bash-PID-N-cwd`, where a command writes the directory it ended in), which
/// their own destructors remove once the command is over.
pub(crate) fn remove_session_dirs_before_exit() {
    let dirs = open_session_dirs().clone();
    let scratch = format!("toolwright-bash-{}-", std::process::id());
    for dir in dirs {
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for entry in entries.flatten() {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if name.starts_with(&scratch) && name.ends_with("-cwd") {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
        remove_if_nothing_saved(&dir);
    }
}

/// The variables the settings' `env` set in this process, with the values they had before
/// (see `main.rs`), so that MCP policy entries expand as the user's shell had them.
static ENV_BEFORE_SETTINGS: std::sync::OnceLock<
    std::collections::HashMap<String, Option<std::ffi::OsString>>,
> = std::sync::OnceLock::new();

/// The proxy variables of the settings other than the project's own ([`SettingsEnv`]).
static SETTINGS_PROXIES: std::sync::OnceLock<std::collections::HashMap<String, String>> =
    std::sync::OnceLock::new();

/// What the session says about the settings' `env` that `main` applied: the project's
/// variables it left out ([`env_withheld_notice`]), worked out from the same read.
static ENV_WITHHELD_NOTICE: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();

/// Records what applying `read` changes, before `main` sets its variables: the current
/// values of the variables it sets, and the notice of what it left out, which every
/// session of this process reports. Only the first call counts.
pub(crate) fn remember_env_before_settings(read: &SettingsEnv) {
    let before = read
        .env
        .iter()
        .map(|(k, _)| (k.clone(), std::env::var_os(k)))
        .collect();
    let _ = ENV_BEFORE_SETTINGS.set(before);
    let _ = SETTINGS_PROXIES.set(read.proxies.iter().cloned().collect());
    let _ = ENV_WITHHELD_NOTICE.set(env_withheld_notice(&read.withheld));
}

/// `name` as this process's environment had it before the settings' `env` was applied:
/// where the configuration lives (`HOME`, `CLAUDE_CONFIG_DIR`) is not something the
/// configuration itself can move.
pub(crate) fn var_before_settings(name: &str) -> Option<std::ffi::OsString> {
    match ENV_BEFORE_SETTINGS.get().and_then(|m| m.get(name)) {
        Some(before) => before.clone(),
        None => std::env::var_os(name),
    }
}

/// Proxy variable `name` (`HTTPS_PROXY`, ...) as the settings other than the project's own
/// (managed, user, `--settings`) set it, for the telemetry exporter, which looks there before
/// the environment this process started with ([`var_before_settings`]). A trusted
/// project's settings `env` sets the variable for the tools, but does not choose where
/// telemetry goes (docs/cli.md).
#[cfg(feature = "otlp")]
pub(crate) fn settings_proxy_var(name: &str) -> Option<&'static str> {
    SETTINGS_PROXIES
        .get()
        .and_then(|m| m.get(name))
        .map(String::as_str)
}

/// The environment this process started with: what settings files added is looked through.
fn env_before_settings() -> tools_mcp::EnvLookup {
    Arc::new(|name| var_before_settings(name).and_then(|v| v.into_string().ok()))
}

/// `dir` as the project directory of a session: resolved (symlinks followed), and a
/// directory. A file named by `--cwd` would leave the settings unread and the commands run
/// elsewhere.
pub(crate) fn project_dir(dir: &Path) -> Result<PathBuf, String> {
    let real = std::fs::canonicalize(dir)
        .map_err(|e| format!("cannot use {} as the project directory: {e}", dir.display()))?;
    if !real.is_dir() {
        return Err(format!(
            "cannot use {} as the project directory: it is not a directory",
            dir.display()
        ));
    }
    Ok(real)
}

/// The variables a project's own settings (`.claude/settings.json` and
/// `.claude/settings.local.json`) may not set, as Claude Code's settings reference has them
/// ("Variables Claude Code ignores in `env`": "Project and local settings can't set
/// variables that a checked-out repository shouldn't control"): those that choose where the
/// session keeps its own files (its directory with the saved results and the transcript,
/// the user configuration), `CLAUDE_CONFIG_DIR`, `CLAUDE_CODE_TMPDIR`, `HOME`, `TMPDIR`,
/// `TMP`, `TEMP` and the `XDG_*` family; those that export session content,
/// `OTEL_LOG_RAW_API_BODIES` (with every other `OTEL_LOG_*`) and the detailed beta tracing
/// pair; and the OpenTelemetry exporter variables that turn telemetry on, choose where it
/// goes or what it captures (the exporter selectors, the OTLP endpoints, headers,
/// protocols, certificates, client keys and `_INSECURE`, generic and per signal, and the
/// Prometheus exporter's host and port). A cloned repository would otherwise put saved
/// results with a command's secrets in its own working tree, or send tool details to an
/// endpoint of its choosing. The user's, managed and `--settings` files set them as any
/// other variable. A name ending in `*` stands for every name it begins; one with a `*`
/// inside, for every name that begins with what is before it and ends with what is after.
/// Of these, a project may still set the values that turn telemetry off
/// ([`turns_telemetry_off`]).
pub(crate) const PROJECT_ENV_WITHHELD: &[&str] = &[
    "CLAUDE_CONFIG_DIR",
    "CLAUDE_CODE_TMPDIR",
    "HOME",
    "TMPDIR",
    "TMP",
    "TEMP",
    "XDG_*",
    "OTEL_LOG_*",
    "ENABLE_BETA_TRACING_DETAILED",
    "BETA_TRACING_ENDPOINT",
    "CLAUDE_CODE_ENABLE_TELEMETRY",
    "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA",
    "ENABLE_ENHANCED_TELEMETRY_BETA",
    "OTEL_LOGS_EXPORTER",
    "OTEL_METRICS_EXPORTER",
    "OTEL_TRACES_EXPORTER",
    "OTEL_EXPORTER_OTLP_*ENDPOINT",
    "OTEL_EXPORTER_OTLP_*HEADERS",
    "OTEL_EXPORTER_OTLP_*PROTOCOL",
    "OTEL_EXPORTER_OTLP_*CERTIFICATE",
    "OTEL_EXPORTER_OTLP_*CLIENT_KEY",
    "OTEL_EXPORTER_OTLP_*INSECURE",
    "OTEL_EXPORTER_PROMETHEUS_HOST",
    "OTEL_EXPORTER_PROMETHEUS_PORT",
];

/// Whether `name` is one of [`PROJECT_ENV_WITHHELD`].
fn withheld_from_project(name: &str) -> bool {
    PROJECT_ENV_WITHHELD
        .iter()
        .any(|pattern| match pattern.split_once('*') {
            None => name == *pattern,
            Some((head, tail)) => {
                name.len() >= head.len() + tail.len()
                    && name.starts_with(head)
                    && name.ends_with(tail)
            }
        })
}

/// Whether `value` of `name` turns telemetry off, which a project's settings may still do
/// (Claude Code: "`none` for the three exporter selectors, and an off value such as `0` for
/// `OTEL_LOG_USER_PROMPTS`, `OTEL_LOG_TOOL_CONTENT`, and `OTEL_LOG_TOOL_DETAILS`"; here
/// `CLAUDE_CODE_ENABLE_TELEMETRY` too, the switch of it all; an off value is `0`, `false`,
/// `no` or `off`, in any case).
fn turns_telemetry_off(name: &str, value: &str) -> bool {
    let value = value.trim().to_ascii_lowercase();
    match name {
        "OTEL_LOGS_EXPORTER" | "OTEL_METRICS_EXPORTER" | "OTEL_TRACES_EXPORTER" => value == "none",
        "OTEL_LOG_USER_PROMPTS"
        | "OTEL_LOG_TOOL_CONTENT"
        | "OTEL_LOG_TOOL_DETAILS"
        | "CLAUDE_CODE_ENABLE_TELEMETRY" => {
            matches!(value.as_str(), "0" | "false" | "no" | "off")
        }
        _ => false,
    }
}

/// A settings `env` value as the environment gets it: a string as it is, anything else as
/// JSON (`3000`, `true`).
fn env_value_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text.clone(),
        serde_json::Value::Number(n) => js_number_text(n),
        other => other.to_string(),
    }
}

/// The settings' `env` of a session ([`settings_env`]), and what of the project's own files
/// was left out ([`PROJECT_ENV_WITHHELD`]).
pub(crate) struct SettingsEnv {
    /// The variables to set.
    pub(crate) env: Vec<(String, String)>,
    /// Each project or local settings file with variables left out: the file as shown, and
    /// the variables' names.
    withheld: Vec<(String, Vec<String>)>,
    /// The proxy variables ([`PROXY_VARS`]) the settings other than the project's own set
    /// (managed, user, `--settings`), for the telemetry exporter ([`settings_proxy_var`]).
    proxies: Vec<(String, String)>,
}

/// The variables that choose a proxy for HTTP clients (each in both cases).
const PROXY_VARS: &[&str] = &[
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
];

/// The `env` of the settings a session with `options` reads (managed, user, `--settings`,
/// and the project's own files when the folder is trusted; higher levels win per
/// variable), as Claude Code applies it to its own environment: for every tool, hook and
/// MCP server it starts and for `${VAR}` in `.mcp.json`. Non-string values are written as
/// JSON (`3000`, `true`). The project's own files set none of [`PROJECT_ENV_WITHHELD`]
/// (but a value that turns telemetry off): a lower level's value for such a variable (the
/// user's) applies as if the project's file did not name it, and opening the session says
/// which were left out ([`remember_env_before_settings`]). Unreadable settings give nothing
/// here; opening the session reports them.
pub(crate) fn settings_env(options: &SessionOptions) -> SettingsEnv {
    let Some(read) = applied_settings(options) else {
        return SettingsEnv {
            env: Vec::new(),
            withheld: Vec::new(),
            proxies: Vec::new(),
        };
    };
    let mut withheld = Vec::new();
    let files: Vec<_> = read
        .applied
        .iter()
        .cloned()
        .map(|mut file| {
            if !matches!(
                file.source,
                RuleSource::ProjectSettings | RuleSource::LocalSettings
            ) {
                return file;
            }
            let shown = file.path.as_deref().map_or_else(
                || {
                    file.origin
                        .clone()
                        .unwrap_or_else(|| "a project's settings".to_owned())
                },
                |p| tool_core::escape_hidden(&p.display().to_string()),
            );
            if let Some(env) = file
                .value
                .get_mut("env")
                .and_then(serde_json::Value::as_object_mut)
            {
                let names: Vec<String> = env
                    .iter()
                    .filter(|(k, v)| {
                        withheld_from_project(k) && !turns_telemetry_off(k, &env_value_text(v))
                    })
                    .map(|(k, _)| k.clone())
                    .collect();
                for name in &names {
                    env.remove(name);
                }
                if !names.is_empty() {
                    withheld.push((shown, names));
                }
            }
            file
        })
        .collect();
    let env = merged_env(&files, |k| {
        !k.is_empty() && !k.contains('=') && !k.contains('\0')
    });
    // The proxy the user, an administrator or the command line chose, which a project's
    // settings do not override for the telemetry export.
    let not_the_projects: Vec<_> = read
        .applied
        .iter()
        .filter(|file| {
            !matches!(
                file.source,
                RuleSource::ProjectSettings | RuleSource::LocalSettings
            )
        })
        .cloned()
        .collect();
    let proxies = merged_env(&not_the_projects, |k| PROXY_VARS.contains(&k));
    SettingsEnv {
        env,
        withheld,
        proxies,
    }
}

/// The `env` of `files` merged (higher levels win per variable), as the environment gets
/// it: the variables whose name `keep` admits, values with a NUL byte left out.
fn merged_env(
    files: &[tool_perms::settings::SettingsFile],
    keep: impl Fn(&str) -> bool,
) -> Vec<(String, String)> {
    tool_perms::settings::merge_settings(files)["env"]
        .as_object()
        .map(|env| {
            env.iter()
                .filter(|(k, _)| keep(k))
                .map(|(k, v)| (k.clone(), env_value_text(v)))
                .filter(|(_, v)| !v.contains('\0'))
                .collect()
        })
        .unwrap_or_default()
}

/// What the session says when the project's own settings named variables of
/// [`PROJECT_ENV_WITHHELD`] that were not applied: the variables and their files, never
/// their values. `None` when none was left out.
fn env_withheld_notice(withheld: &[(String, Vec<String>)]) -> Option<String> {
    if withheld.is_empty() {
        return None;
    }
    let named: Vec<String> = withheld
        .iter()
        .map(|(file, names)| {
            // A key is the project's text: shown with its control characters escaped.
            let names: Vec<String> = names.iter().map(|n| tool_core::escape_hidden(n)).collect();
            format!("{} (in {file})", names.join(", "))
        })
        .collect();
    Some(format!(
        "the project's own settings `env` may not set where this session keeps its files or \
         where telemetry goes and what it carries (as in Claude Code), so these were not \
         applied: {}; set them in the shell, the user or managed settings, or --settings",
        named.join("; ")
    ))
}

/// The settings files a session reads ([`applied_settings`]).
struct AppliedSettings {
    /// Those it applies, highest level first
    /// ([`load_settings_files`](tool_perms::settings::load_settings_files)): managed,
    /// `--settings`, the project's local and shared files when the folder is trusted, user.
    applied: Vec<tool_perms::settings::SettingsFile>,
    /// Those it applies, merged: managed, user, `--settings`, and the project's own files
    /// when the folder is trusted; higher levels win.
    merged: serde_json::Value,
    /// The project's own files left out, the folder not being trusted.
    untrusted: Vec<tool_perms::settings::SettingsFile>,
    /// Every file read.
    all: Vec<tool_perms::settings::SettingsFile>,
}

/// The settings files a session with `options` reads, and what it applies of them. `None`
/// when the project directory cannot be resolved; unreadable settings give nothing here,
/// opening the session reports them.
fn applied_settings(options: &SessionOptions) -> Option<AppliedSettings> {
    use tool_core::RuleSource;
    let cwd = std::fs::canonicalize(&options.cwd).ok()?;
    let trusted = options
        .trusted
        .unwrap_or_else(|| crate::trust::is_trusted(&cwd));
    let sources = options.settings_sources(&cwd, trusted);
    let (all, _) = tool_perms::settings::load_settings_files(&sources);
    let (applied, untrusted): (Vec<_>, Vec<_>) = all.iter().cloned().partition(|f| {
        trusted
            || !matches!(
                f.source,
                RuleSource::ProjectSettings | RuleSource::LocalSettings
            )
    });
    Some(AppliedSettings {
        merged: tool_perms::settings::merge_settings(&applied),
        applied,
        untrusted,
        all,
    })
}

/// What the settings say of the model `agent` talks to ([`agent_settings`]).
#[derive(Debug, Default)]
pub(crate) struct AgentSettings {
    /// The settings' `model` (the highest level's), when it is a string that is not blank.
    pub model: Option<String>,
    /// What is said of those settings: a `model` that is not a string, an untrusted
    /// folder's `model` not applied, an `apiKeyHelper` (not run here), each once.
    pub notices: Vec<String>,
}

/// The settings' `model` of a session with `options`, as Claude Code reads it (it chooses
/// the model when neither `--model` nor `ANTHROPIC_MODEL` does), and what to say of the
/// keys `agent` reads or does not: an untrusted folder's own `model` is not applied (its
/// files may only restrict), and `apiKeyHelper`, which this tool layer does not run, is
/// said to be ignored.
pub(crate) fn agent_settings(options: &SessionOptions) -> AgentSettings {
    let Some(read) = applied_settings(options) else {
        return AgentSettings::default();
    };
    let mut said = AgentSettings::default();
    match &read.merged["model"] {
        serde_json::Value::Null => {}
        serde_json::Value::String(model) if model.trim().is_empty() => {}
        serde_json::Value::String(model) => said.model = Some(model.clone()),
        other => said.notices.push(format!(
            "the settings' `model` must be a string (a model name or an alias such as `sonnet`), not {}; ignored",
            tool_core::shown_setting(other)
        )),
    }
    if said.model.is_none()
        && let Some(file) = read
            .untrusted
            .iter()
            .find(|f| f.value.get("model").is_some_and(|m| !m.is_null()))
    {
        said.notices.push(format!(
            "the `model` of {} was not applied: this folder is not trusted, so its own settings may only restrict",
            file.path
                .as_deref()
                .map_or_else(String::new, |p| tool_core::escape_hidden(
                    &p.display().to_string()
                ))
        ));
    }
    if read
        .all
        .iter()
        .any(|f| f.value.get("apiKeyHelper").is_some_and(|h| !h.is_null()))
    {
        said.notices.push(
            "the settings' `apiKeyHelper` is ignored: this tool layer does not run it; the API key comes from ANTHROPIC_API_KEY"
                .to_owned(),
        );
    }
    said
}

/// A number as JavaScript's `String()` writes it, as Claude Code sets a settings `env` value:
/// `1e3` and `3000.0` are `1000` and `3000` (a timeout in milliseconds must read as one),
/// an exponent past 1e21 or below 1e-6 is written `1e+21`, `1e-7`.
fn js_number_text(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    let Some(f) = n.as_f64() else {
        return n.to_string();
    };
    let magnitude = f.abs();
    if magnitude >= 1e21 || (magnitude < 1e-6 && f != 0.0) {
        let text = format!("{f:e}");
        match text.split_once('e') {
            Some((mantissa, exp)) if !exp.starts_with('-') => format!("{mantissa}e+{exp}"),
            _ => text,
        }
    } else if f == 0.0 {
        // `-0` too.
        "0".to_owned()
    } else if f.fract() == 0.0 {
        format!("{f:.0}")
    } else {
        f.to_string()
    }
}

/// The registry's family of tools that schedule jobs for the host to fire (CronCreate,
/// CronList, CronDelete).
const SCHEDULING_FAMILY: tool_registry::Gate = tool_registry::Gate::Feature("agent-triggers");

/// Why a session opened with `options` leaves out the built-in tool `name` of this build,
/// which its gates and rules would let in; `None` when it offers it. The Cron tools are left
/// out unless the host fires scheduled jobs ([`SessionOptions::fires_scheduled_jobs`]):
/// CronCreate would say "Next fire: ..." of a job nothing ever fires.
pub fn not_offered_because(name: &str, options: &SessionOptions) -> Option<&'static str> {
    let scheduling = tool_registry::BUILTIN_TOOLS
        .iter()
        .any(|entry| entry.name == name && entry.gate == SCHEDULING_FAMILY);
    (scheduling && !options.fires_scheduled_jobs).then_some(
        "the jobs they schedule would never fire: no command of this binary polls for due \
         jobs (`CronStore::due_jobs`); a host that fires them can offer these tools",
    )
}

/// The built-in tools a session opened with `options` offers before its rules: those of
/// this build its environment gates open (`CLAUDE_CODE_SIMPLE` included where
/// [`SessionOptions::simple_mode_from_env`]), ToolSearch only when `offer_tool_search`,
/// WebSearch only when `offer_web_search`, none that [`not_offered_because`] leaves out, and none that
/// `removed` names (a session's tool-wide deny rules: [`builtin_tools`]). The one place
/// that decides it, for the session, `run`'s answers to calls that never started and
/// `permissions check`.
pub fn offered_builtin_tools(
    options: &SessionOptions,
    removed: impl Fn(&dyn Tool) -> bool,
) -> Vec<Arc<dyn Tool>> {
    let filter = if options.simple_mode_from_env {
        tool_registry::ToolFilter::from_env()
    } else {
        tool_registry::ToolFilter::default()
    };
    tool_registry::tools(filter, |t| {
        (!options.offer_tool_search && t.name() == "ToolSearch")
            || (!options.offer_web_search && t.name() == "WebSearch")
            || not_offered_because(t.name(), options).is_some()
            || removed(t)
    })
}

/// The built-in tools of a session: those it offers ([`offered_builtin_tools`]) minus those
/// a tool-wide deny rule removes.
fn builtin_tools(engine: &PermissionEngine, options: &SessionOptions) -> Vec<Arc<dyn Tool>> {
    offered_builtin_tools(options, |t| engine.is_blanket_denied(t))
}

/// The tools [`session_builtin_tools`] lists, and what it says of the settings.
pub(crate) type ToolsAndNotices = (Vec<Arc<dyn Tool>>, Vec<String>);

/// The built-in tools a session opened with `options` would have ([`builtin_tools`]), without
/// opening it (no MCP server is started, no session directory made), with what such a
/// session would say of its settings (their problems, the rules', the MCP servers' and the
/// hooks', and what an untrusted folder's files set that was not applied): what
/// `toolwright tools` lists and says. An error stops the command, as it stops a session.
pub(crate) fn session_builtin_tools(options: &SessionOptions) -> Result<ToolsAndNotices, String> {
    let setup = SessionSettings::read(options)?;
    let mut notices = setup.notices.clone();
    notices.extend(setup.late_notices());
    Ok((builtin_tools(&setup.engine, options), notices))
}

/// What a session reads before it starts anything (no MCP server, no session directory): its
/// settings, permission engine, hooks and MCP server configurations, with what the user
/// should know of them. `toolwright tools` reads it too, to say what `run` would say.
struct SessionSettings {
    /// The project directory, canonical.
    cwd: PathBuf,
    /// The permission state, the `--mode` flag applied; prompts off.
    permission: tool_core::ToolPermissionContext,
    /// The engine over it.
    engine: Arc<PermissionEngine>,
    /// The hooks.
    hooks: tool_hooks::LoadedHooks,
    /// The MCP servers the policy lets through.
    servers: Vec<tools_mcp::ServerConfig>,
    /// The problems found so far: the settings', the rules', the MCP policy's and
    /// configuration's.
    notices: Vec<String>,
    /// What an untrusted folder's own files set that was not applied (`its env`, `its
    /// .mcp.json servers`), for [`late_notices`](Self::late_notices).
    ignored: Vec<String>,
    /// The settings files the permissions reported as unreadable or invalid: the hooks'
    /// loader, which reads them too, does not say it again.
    reported: Vec<PathBuf>,
}

impl SessionSettings {
    /// Reads what a session with `options` reads. An error is a problem of what the command
    /// line gave (`--settings`, `--mode`, `--mcp-config`) that stops the command.
    fn read(options: &SessionOptions) -> Result<Self, String> {
        let cwd = project_dir(&options.cwd)?;
        let mode = options
            .mode
            .as_deref()
            .map(tool_perms::settings::parse_mode)
            .transpose()?;
        let mut notices = Vec::new();
        let trusted = options
            .trusted
            .unwrap_or_else(|| crate::trust::is_trusted(&cwd));

        let sources = options.settings_sources(&cwd, trusted);
        let mut hook_paths = SettingsPaths::discover(&cwd);
        // The same files as the permissions: found through the environment before the
        // settings' `env`.
        hook_paths.user_config_dir = sources.user_config_dir.clone();
        if !options.user_and_managed_settings {
            hook_paths.managed_dir = None;
        }
        hook_paths.flag_settings = sources.flag_settings.clone();
        hook_paths.project_trusted = trusted;

        let loaded = load_permissions(&sources);
        // What `--settings` gave is bad input when it is broken: running on without its
        // rules (a deny the user meant to add) would fail open.
        let fatal = loaded.command_line_errors();
        if !fatal.is_empty() {
            return Err(format!("bad --settings:\n  {}", fatal.join("\n  ")));
        }
        // So is an MCP server list it gave that cannot be read (a `deniedMcpServers` that is
        // not an array of entries): the server it was to deny would start.
        let (mcp_policy, policy_problems) = mcp_policy(&loaded)?;
        // Before anything is started or created (the MCP servers, the session's directory),
        // so a refusal leaves nothing behind.
        let hooks = load_hooks(&hook_paths);
        // A hook `--settings` defines that cannot be read is bad input, as a broken rule is:
        // running on without it (a PreToolUse guard) would fail open. Not so what is not run
        // by design, as docs/hooks.md says ([`tool_hooks::DiagnosticKind::NotRun`]). The
        // command stops: the problems are worded as such (no "…; group skipped").
        let broken_hooks = hooks.command_line_errors();
        if !broken_hooks.is_empty() {
            return Err(format!("bad --settings:\n  {}", broken_hooks.join("\n  ")));
        }
        // Under a `--mode`, no word about the mode the settings would have chosen.
        notices.extend(loaded.diagnostics_under_mode(mode).map(ToString::to_string));
        let mut ignored: Vec<String> = Vec::new();
        if !loaded.untrusted_ignored_keys.is_empty() {
            ignored.push(format!(
                "its {}",
                crate::trust::and_list(&loaded.untrusted_ignored_keys)
            ));
        }
        let mut permission = loaded.context.clone();
        loaded.apply_mode_flag(&mut permission, mode)?;
        // By default nobody is asked: a call that would ask is denied with the reason. `serve`
        // (elicitation to the client) and `agent` (on a terminal) turn prompts back on.
        permission.avoid_prompts = true;
        let (engine, rule_problems) =
            PermissionEngine::new_lenient(&permission, options.protected_roots(&loaded, &cwd));
        let engine = Arc::new(engine);
        // The settings loader already reported the rules it found malformed, with their file:
        // each problem is said once (a set look-up per problem: a repository's file may hold
        // tens of thousands of malformed rules).
        notices.extend(
            rule_problems
                .iter()
                .filter(|p| !loaded.rules_reported.contains(&(p.source, p.rule.clone())))
                .map(ToString::to_string),
        );

        // MCP servers: `--mcp-config`, the user's and local scopes, and the project's
        // `.mcp.json` only when the folder is trusted; managed ones; then what the settings'
        // allow and deny lists let through.
        notices.extend(policy_problems);
        // Files named relative to where the command runs, as `--settings` files are.
        let mcp_config = tool_perms::settings::resolve_flag_settings(&options.mcp_config, &cwd);
        let mut loader = tools_mcp::ConfigLoader::new(&cwd)
            .with_mcp_config(mcp_config)
            .with_project_trusted(trusted)
            .with_policy(mcp_policy.with_entry_env(env_before_settings()));
        loader.strict = options.strict_mcp_config;
        // `.claude.json` where the environment before the settings' `env` puts it; the
        // servers' `${VAR}`s still expand with the settings' `env`.
        loader.claude_json = tools_mcp::default_claude_json(&*env_before_settings());
        // The depth this process was started at as an MCP server, from the environment
        // before the settings' `env` (which must not be able to reset it).
        loader.mcp_depth = tools_mcp::mcp_depth(&*env_before_settings());
        if !options.user_and_managed_settings {
            loader.claude_json = None;
            loader.managed_dir = None;
        }
        if let Some(refused) = loader.dynamic_config_refused() {
            return Err(refused);
        }
        // What `--mcp-config` gave is bad input when it cannot be used, as a broken
        // `--settings` is: running on without its servers would answer every call to them
        // with "No such tool".
        let unusable = loader.mcp_config_errors();
        if !unusable.is_empty() {
            return Err(format!("bad --mcp-config:\n  {}", unusable.join("\n  ")));
        }
        let (servers, mcp_problems) = loader.load();
        notices.extend(mcp_problems.iter().map(ToString::to_string));
        if !loader.untrusted_project_servers().is_empty() {
            ignored.push("its .mcp.json servers".to_owned());
        }
        // Both loaders read the same files: a file the permissions already reported as
        // unreadable or invalid is not reported a second time (the hooks' problems inside a
        // file, which carry a location, are theirs alone).
        let reported = loaded
            .diagnostics
            .iter()
            .filter(|d| d.severity == tool_perms::settings::Severity::Error)
            .filter_map(|d| d.file.clone())
            .collect();
        Ok(Self {
            cwd,
            permission,
            engine,
            hooks,
            servers,
            notices,
            ignored,
            reported,
        })
    }

    /// What is said after the MCP servers' problems: the hooks' problems, and the notice
    /// naming what an untrusted folder's own files set that was not applied.
    fn late_notices(&self) -> Vec<String> {
        let mut notices: Vec<String> = self
            .hooks
            .diagnostics
            .iter()
            .filter(|d| {
                !(d.location.is_empty()
                    && d.path
                        .as_deref()
                        .is_some_and(|p| self.reported.iter().any(|r| r == p)))
            })
            .map(ToString::to_string)
            .collect();
        let mut ignored = self.ignored.clone();
        if !self.hooks.untrusted_ignored.is_empty() {
            ignored.insert(ignored.len().min(1), "its hooks".to_owned());
        }
        if !ignored.is_empty() {
            notices.push(crate::trust::untrusted_notice(&self.cwd, &ignored));
        }
        notices
    }
}

/// The MCP server policy of the settings `loaded` read (their `allowedMcpServers`,
/// `deniedMcpServers`, ...), with its problems as notices. A list given on the command line
/// (an inline `--settings` value or a `--settings` file) that cannot be read is an error
/// naming it, which stops the command: a `deniedMcpServers` that is not an array of entries
/// would otherwise block every server, unlike what the command was given for.
fn mcp_policy(
    loaded: &tool_perms::settings::LoadedPermissions,
) -> Result<(tools_mcp::McpPolicy, Vec<String>), String> {
    let mut policy = tools_mcp::McpPolicy::default();
    let mut notices = Vec::new();
    let mut fatal = Vec::new();
    for f in &loaded.files {
        let managed = f.source == RuleSource::PolicySettings;
        // A value without a file is named by its flag (`--settings`, `--settings #2`).
        let named = |said: String| match (&f.path, &f.origin) {
            (Some(_), _) => said,
            (None, origin) => format!("{}: {said}", origin.as_deref().unwrap_or("--settings")),
        };
        for problem in policy.add_settings(&f.value, managed, f.path.as_deref()) {
            let command_line = f.source == RuleSource::FlagSettings || f.path.is_none();
            if command_line && problem.severity == tools_mcp::Severity::Error {
                fatal.push(named(problem.stopping_the_command()));
            } else {
                notices.push(named(problem.to_string()));
            }
        }
    }
    if fatal.is_empty() {
        Ok((policy, notices))
    } else {
        Err(format!("bad --settings:\n  {}", fatal.join("\n  ")))
    }
}

/// What the user is told when the session's directory cannot be created (`error`): what
/// works differently without it.
fn no_session_dir_notice(error: &std::io::Error) -> String {
    format!(
        "cannot create the session's temporary directory in {} (TMPDIR names the directory \
         to use): {error}. Going on without it: large tool results cannot be saved to disk \
         (they are cut to their head and tail), hooks are given no transcript \
         (`transcript_path` is empty) and no CLAUDE_ENV_FILE, and Bash, background tasks, \
         long hook output and binary MCP resources fall back to directories of their own in \
         that temporary directory (a Bash command that cannot create its scratch file there \
         fails, saying so)",
        std::env::temp_dir().display()
    )
}

/// Records `project` (the session's working directory, absolute and resolved) in the
/// session's directory `dir` ([`tool_perms::SESSION_PROJECT_FILE`]): the bytes of the path,
/// in a file only its owner can read or write, written whole or not at all (a temporary
/// file renamed into place). A later session reads this session's saved results without
/// asking only when it is of the project recorded here.
fn record_project(dir: &Path, project: &Path) -> std::io::Result<()> {
    write_record(dir, project.as_os_str().as_encoded_bytes())
}

/// Writes `bytes` as the project record in the session's directory `dir`
/// ([`record_project`]).
fn write_record(dir: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let name = std::ffi::OsStr::new(tool_perms::SESSION_PROJECT_FILE);
    let mut file = tool_core::temp_file::TempFile::create(dir, name, 0o600)?;
    // Exactly owner-only, whatever the umask.
    file.file()
        .set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_synced(bytes)?;
    file.rename_to(&dir.join(name))?;
    let _ = tool_core::temp_file::sync_dir(dir);
    Ok(())
}

fn session_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{:x}-{:x}", nanos, std::process::id())
}

impl Session {
    /// Ends the MCP servers' connections as a host that is done with them should: a stdio
    /// server gets its stdin closed and time to exit on its own (to save its state) before
    /// it is signalled ([`tools_mcp::McpManager::shutdown`]). Dropping the session instead
    /// kills them at once, which is for exits in a hurry (a signal).
    pub async fn close_mcp(&self) {
        if let Some(mcp) = &self.mcp {
            mcp.shutdown().await;
        }
    }

    /// Keeps what depends on the session's tools current: whenever an MCP server's tool
    /// list changes (`notifications/tools/list_changed`, a reconnection), `tools` (the
    /// session's [`current_tools`](Self::current_tools), or those with a host's own tools
    /// added) is read again and handed to the hooks' `if` matcher and to `also`. A change
    /// that came while the servers were connecting counts too. Ends when the session's MCP
    /// servers are gone (at once when it has none), or when the returned guard is dropped.
    pub fn follow_tool_changes(
        &self,
        tools: tool_core::RefreshTools,
        also: impl Fn(Vec<Arc<dyn Tool>>) + Send + 'static,
    ) -> AbortOnDrop {
        AbortOnDrop(tokio::spawn(self.tool_changes(tools, also)))
    }

    /// [`follow_tool_changes`](Self::follow_tool_changes) as a future, for a host that runs
    /// it after something else (`serve`: after the MCP servers' first connections).
    pub fn tool_changes(
        &self,
        tools: tool_core::RefreshTools,
        also: impl Fn(Vec<Arc<dyn Tool>>) + Send + 'static,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut changed = self.tools_changed.clone();
        let matcher = Arc::clone(&self.rule_matcher);
        async move {
            while changed.changed().await.is_ok() {
                let tools = tools();
                matcher.set_tools(tools.clone());
                also(tools);
            }
        }
    }

    /// Opens a session: reads the settings, builds the permission engine, the hook runner and
    /// the tool list, and makes the session's private directory in TMPDIR. When that
    /// directory cannot be made (TMPDIR full, read-only, failing), the session opens without
    /// one and [`notices`](Self::notices) says what that changes; a TMPDIR that names no
    /// directory is an error.
    pub async fn open(options: &SessionOptions) -> Result<Self, String> {
        let mut setup = SessionSettings::read(options)?;
        let mut notices = std::mem::take(&mut setup.notices);
        // What of the project's own settings `env` was not applied (`settings_env`, which
        // `main` set in the environment before anything started).
        notices.extend(ENV_WITHHELD_NOTICE.get().cloned().flatten());
        // A concurrency cap that is no number (`TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY=abc`),
        // or one past what the open-file limit holds: said here, where the user sees it; the
        // executors read the same variables (the settings' `env` is in the environment by
        // now) and the same limit.
        notices.extend(tool_exec::ExecutorConfig::from_env_with_warnings().1);
        let servers = std::mem::take(&mut setup.servers);
        let (cwd, permission) = (setup.cwd.clone(), setup.permission.clone());
        let engine = Arc::clone(&setup.engine);
        let session = session_id();
        // The session's own directory: private (0700) and unguessable, so no other user of
        // the machine can read what tools wrote there or plant files in it. It holds the
        // persisted tool results, MCP binary resources and the hooks' environment file, and
        // is kept after the session (a later `toolwright run` of the same project may Read a
        // saved result; the directory records the project: [`record_project`]).
        // When it cannot be created in TMPDIR (full, read-only), the session goes on without
        // one, told; a TMPDIR that is no directory stops it.
        let session_dir = match tempfile::Builder::new()
            .prefix(&format!("toolwright-{session}-"))
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir()
        {
            Ok(dir) => Some(dir.keep()),
            // TMPDIR naming no directory is a mistake to fix, as a `--cwd` naming none is,
            // before anything runs; a directory that cannot take another (full, read-only,
            // failing) is a fault the session survives.
            Err(e) if !std::env::temp_dir().is_dir() => {
                return Err(format!(
                    "cannot create the session's temporary directory in {} \
                     (TMPDIR names the directory to use): {e}",
                    std::env::temp_dir().display()
                ));
            }
            Err(e) => {
                notices.push(no_session_dir_notice(&e));
                None
            }
        };
        // Which project the session is of, for a later session's reads of its saved results:
        // only a session of the same project reads them without asking (the permission
        // engine's results-directory exemption). Without the record, a later session asks.
        if let Some(dir) = &session_dir
            && let Err(e) = record_project(dir, &cwd)
        {
            notices.push(format!(
                "cannot record the project in the session's directory {}: {e}; a later \
                 session of this project will ask before reading this session's saved results",
                dir.display()
            ));
        }
        // Removed (when nothing is saved in it) if the session is abandoned before it is
        // open, too: a signal while the MCP servers connect drops this future.
        let dir_guard = session_dir.clone().map(SessionDir::new);
        let options_in_background = options.connect_mcp_in_background;
        let (tools_changed_tx, tools_changed) = tokio::sync::watch::channel(());
        let mut mcp_connecting: Option<McpConnecting> = None;
        let mcp = if servers.is_empty() {
            None
        } else {
            let mut options = tools_mcp::McpOptions::from_env(&cwd);
            options.mcp_depth = tools_mcp::mcp_depth(&*env_before_settings());
            // Without a session directory, the MCP client's own private one in TMPDIR.
            options.blob_dir = session_dir.as_ref().map(|d| d.join(MCP_RESOURCES_DIR));
            options.additional_directories = permission.additional_working_directories.clone();
            options.on_tools_changed = Some(Arc::new(move |_server: &str| {
                tools_changed_tx.send_replace(());
            }));
            if options_in_background {
                let (manager, early, connecting) =
                    tools_mcp::McpManager::connect_in_background(servers, options);
                notices.extend(early.iter().map(ToString::to_string));
                mcp_connecting = Some(Box::pin(async move {
                    connecting.await.iter().map(ToString::to_string).collect()
                }));
                Some(manager)
            } else {
                let (manager, problems) = tools_mcp::McpManager::connect(servers, options).await;
                notices.extend(problems.iter().map(ToString::to_string));
                Some(manager)
            }
        };
        let builtins = builtin_tools(&engine, options);
        let current_tools: tool_core::RefreshTools = {
            let mcp_tools = mcp.as_ref().map(tools_mcp::McpManager::refresh_tools_hook);
            let engine = Arc::clone(&engine);
            Arc::new(move || {
                let mcp_tools: Vec<Arc<dyn Tool>> = mcp_tools
                    .as_ref()
                    .map(|tools| {
                        tools()
                            .into_iter()
                            .filter(|t| !engine.is_blanket_denied(t.as_ref()))
                            .collect()
                    })
                    .unwrap_or_default();
                tool_registry::assemble_tool_pool(builtins.clone(), mcp_tools)
            })
        };
        let tools = current_tools();

        notices.extend(setup.late_notices());
        let hooks = setup.hooks;
        // There from the start (empty until `agent` writes to it), so a hook that reads it
        // finds a file in every session that has a directory.
        let transcript_path = session_dir
            .as_ref()
            .map(|d| d.join(TRANSCRIPT_FILE))
            .unwrap_or_default();
        if session_dir.is_some() {
            let _ = std::os::unix::fs::OpenOptionsExt::mode(
                std::fs::OpenOptions::new().create(true).append(true),
                0o600,
            )
            .open(&transcript_path);
        }
        let rule_matcher = Arc::new(tool_exec::PermissionRuleMatcher::for_tools(
            tools.clone(),
            cwd.clone(),
        ));
        let mut runner = HookRunner::new(hooks.config)
            .with_project_dir(&cwd)
            .with_rule_matcher(Arc::clone(&rule_matcher) as Arc<dyn tool_hooks::RuleMatcher>);
        if session_dir.is_some() {
            runner = runner.with_transcript_path(&transcript_path);
        }
        let mut ctx = ToolUseContext::new(&cwd)
            .with_tools(tools)
            .with_permission(permission)
            .with_session_id(session);
        // Without one, a large result is cut to its head and tail in memory.
        if let Some(dir) = &session_dir {
            ctx = ctx.with_results_dir(dir.join(RESULTS_DIR));
        }
        // Grep and Glob apply its deny rules to the files they walk.
        ctx.app_state()
            .set(tool_perms::SessionEngine(Arc::clone(&engine)));
        let permissions: Arc<dyn tool_exec::Permissions> = engine;
        let hook_runner = runner.clone();
        let hooks: Arc<dyn tool_exec::Hooks> = Arc::new(runner);
        // Nobody is asked here (`run`, `demo`): EnterPlanMode is refused unless a
        // PermissionRequest hook can approve ExitPlanMode, as the non-interactive agent
        // refuses it; other asks keep the engine's refusal.
        let run_permissions = Arc::new(
            no_prompts(
                permissions.clone(),
                &hook_runner,
                "`toolwright run` and `demo` prompt for nothing",
            )
            .keeping_inner_refusals(),
        );
        let pipeline = Pipeline::new(run_permissions, Arc::new(DenyAsks), hooks.clone());
        Ok(Self {
            ctx,
            pipeline: Arc::new(pipeline),
            permissions,
            hooks,
            hook_runner,
            rule_matcher,
            notices,
            mcp_connecting,
            mcp,
            current_tools,
            tools_changed,
            transcript_path,
            _dir: dir_guard,
        })
    }
}

/// Ends a task when dropped.
pub(crate) struct AbortOnDrop(pub(crate) tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::js_number_text;

    /// Found by review: `1e3` became `1000.0`, which no timeout reads as milliseconds.
    #[test]
    fn numbers_are_written_as_javascript_writes_them() {
        for (json, text) in [
            ("1e3", "1000"),
            ("3000.0", "3000"),
            ("-0.0", "0"),
            ("12", "12"),
            ("-7", "-7"),
            ("0.5", "0.5"),
            ("1e21", "1e+21"),
            ("1.5e300", "1.5e+300"),
            ("1e-7", "1e-7"),
            ("18446744073709551615", "18446744073709551615"),
        ] {
            let n: serde_json::Number = serde_json::from_str(json).unwrap();
            assert_eq!(js_number_text(&n), text, "{json}");
        }
    }
}
