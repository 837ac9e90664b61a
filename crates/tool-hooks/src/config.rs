//! The `hooks` section of Claude Code settings: parsing, merging across levels, and the
//! `disableAllHooks` / `allowManagedHooksOnly` switches.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use tool_core::RuleSource;

use crate::http::{UrlRefusal, url_problem, url_refusal};
use crate::matcher::{Matcher, if_rule_problem, if_tool_name_problem, stray_whitespace_warning};
use crate::native::{NativeHook, NativeHookError};
use crate::output::{HookOutput, HookSpecificOutput, PermissionRequestDecision};

/// Every hook event name Claude Code knows (`HOOK_EVENTS`, 2.1.333).
pub const HOOK_EVENTS: &[&str] = &[
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Notification",
    "UserPromptSubmit",
    "UserPromptExpansion",
    "SessionStart",
    "SessionEnd",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "PreModelSwitch",
    "PostModelSwitch",
    "PermissionRequest",
    "PermissionDenied",
    "Setup",
    "TeammateIdle",
    "TaskCreated",
    "TaskCompleted",
    "Elicitation",
    "ElicitationResult",
    "ConfigChange",
    "WorktreeCreate",
    "WorktreeRemove",
    "InstructionsLoaded",
    "CwdChanged",
    "FileChanged",
    "DirectoryAdded",
    "MessageDisplay",
    "PreSkillShellCommand",
];

/// Events whose hooks see a tool call (the `if` condition applies only to these).
pub const TOOL_EVENTS: &[&str] = &[
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "PermissionDenied",
];

/// Events that take no matcher (a `matcher` given there is ignored).
pub const NO_MATCHER_EVENTS: &[&str] = &[
    "UserPromptSubmit",
    "PostToolBatch",
    "Stop",
    "TeammateIdle",
    "TaskCreated",
    "TaskCompleted",
    "WorktreeCreate",
    "WorktreeRemove",
    "MessageDisplay",
    "CwdChanged",
];

/// The default hard timeout of command and http hooks.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The default timeout of a handler of `event` when it sets none (Claude Code's per-event
/// exceptions: UserPromptSubmit 30 s, MessageDisplay 10 s, else 600 s).
pub fn default_timeout(event: &str) -> Duration {
    match event {
        "UserPromptSubmit" => Duration::from_secs(30),
        "MessageDisplay" => Duration::from_secs(10),
        _ => DEFAULT_TIMEOUT,
    }
}

/// What to do when a hook fails (non-0/2 exit, timeout, cannot start, invalid JSON).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OnFailure {
    /// A non-blocking error; the action proceeds (the default).
    #[default]
    Continue,
    /// Treat the failure like exit code 2 (a blocking error).
    Block,
}

/// A `command` handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandHandler {
    /// The command: a shell command line (shell form) or a program (exec form).
    pub command: String,
    /// Exec form: arguments passed to `command` directly, no shell.
    pub args: Option<Vec<String>>,
    /// `bash` or `powershell`; shell form uses `sh -c` when absent.
    pub shell: Option<String>,
    /// `async: true`, or `asyncRewake: true` (which implies it): run detached, no blocking
    /// effect, output delivered later.
    pub is_async: bool,
    /// `asyncRewake: true`: run in the background like `async`; only an exit code 2 tells
    /// the model something (its stderr, else stdout), with the next model request.
    pub async_rewake: bool,
}

impl CommandHandler {
    /// The shell that runs the command and the flags put before it: `sh -c` when `shell` is
    /// absent, `bash -c` for `bash`, PowerShell (`pwsh`) started as Claude Code starts it,
    /// without the user's profile (whose output would come before the hook's JSON) and
    /// never waiting for input; `None` in exec form (`args`), which starts `command`
    /// itself. Running and de-duplicating both use it, so two handlers are one hook only
    /// when the same program would run them.
    pub(crate) fn shell_invocation(&self) -> Option<(&'static str, &'static [&'static str])> {
        if self.args.is_some() {
            return None;
        }
        Some(match self.shell.as_deref() {
            Some("bash") => (bash(), &["-c"]),
            Some("powershell") => ("pwsh", &["-NoProfile", "-NonInteractive", "-Command"]),
            _ => (installed(&["/bin/sh", "/usr/bin/sh"], "sh"), &["-c"]),
        })
    }
}

/// bash as Bash commands find it ([`tool_core::process::find_shell`]: in `PATH`, else at its
/// usual path), found once.
fn bash() -> &'static str {
    static BASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BASH.get_or_init(|| {
        tool_core::process::find_shell("bash", &["/bin/bash", "/usr/bin/bash"])
            .and_then(|p| p.into_os_string().into_string().ok())
            .unwrap_or_else(|| "bash".to_owned())
    })
}

/// The first of `paths` that exists, else `name` (looked up in `PATH`). A shell is started by
/// its path, as Claude Code's `/bin/sh` is: a `PATH` without `/bin` (which a settings `env`
/// may set) must not keep a hook from running, and a PreToolUse hook that cannot start does
/// not block.
fn installed(paths: &[&'static str], name: &'static str) -> &'static str {
    paths
        .iter()
        .copied()
        .find(|p| std::path::Path::new(p).exists())
        .unwrap_or(name)
}

/// An `http` handler (parsed and reported; see the crate docs for its status).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpHandler {
    /// The URL the hook input is POSTed to.
    pub url: String,
    /// Extra request headers; `$VAR`/`${VAR}` expand only for `allowed_env_vars`.
    pub headers: BTreeMap<String, String>,
    /// Environment variables that may be expanded in headers.
    pub allowed_env_vars: Vec<String>,
}

/// The kind of a handler.
#[derive(Clone)]
pub enum HandlerKind {
    /// A process: shell form or exec form.
    Command(CommandHandler),
    /// An HTTP POST.
    Http(HttpHandler),
    /// An in-process Rust hook.
    Native(Arc<dyn NativeHook>),
}

impl fmt::Debug for HandlerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Command(c) => f.debug_tuple("Command").field(c).finish(),
            Self::Http(h) => f.debug_tuple("Http").field(h).finish(),
            Self::Native(n) => f.debug_tuple("Native").field(&n.name()).finish(),
        }
    }
}

/// One hook handler with its common fields and where it was configured.
#[derive(Debug, Clone)]
pub struct HookHandler {
    /// What runs.
    pub kind: HandlerKind,
    /// The `if` condition: one permission rule (tool events only).
    pub if_condition: Option<String>,
    /// The handler's own timeout; the event default applies when absent.
    pub timeout: Option<Duration>,
    /// `statusMessage`, shown while the hook runs.
    pub status_message: Option<String>,
    /// `onFailure`.
    pub on_failure: OnFailure,
    /// The settings level it came from (`Session` for hooks added in code).
    pub source: RuleSource,
    /// The settings file it came from, if any.
    pub path: Option<PathBuf>,
    /// Identity for de-duplication: identical handlers from several files run once.
    pub(crate) dedupe_key: String,
    /// An `if` was given that is no string (`if_condition` is then `None`): on tool events
    /// the hook runs for every call its matcher selects, as an `if` matched by failing open
    /// (it may refuse the call, never approve it); on other events it never runs.
    pub(crate) if_unreadable: bool,
    /// Where its `if` is configured (`FILE (hooks.PreToolUse[0].hooks[1].if)`), for what is
    /// said about it when a call comes; `None` for a hook added in code.
    pub(crate) if_place: Option<String>,
}

impl HookHandler {
    /// The name used in messages: the command line, the URL (its query and user info, where
    /// credentials sit, redacted), or the native hook's name.
    pub fn display_name(&self) -> String {
        match &self.kind {
            HandlerKind::Command(c) => match &c.args {
                Some(args) if !args.is_empty() => format!("{} {}", c.command, args.join(" ")),
                _ => c.command.clone(),
            },
            HandlerKind::Http(h) => tool_core::redact_url(&h.url),
            HandlerKind::Native(n) => n.name().to_owned(),
        }
    }

    /// A native (in-process) handler for [`HooksConfig::add_native`].
    pub fn native(hook: Arc<dyn NativeHook>) -> Self {
        let dedupe_key = format!("native:{:p}", Arc::as_ptr(&hook));
        Self {
            kind: HandlerKind::Native(hook),
            if_condition: None,
            timeout: None,
            status_message: None,
            on_failure: OnFailure::Continue,
            source: RuleSource::Session,
            path: None,
            dedupe_key,
            if_unreadable: false,
            if_place: None,
        }
    }

    /// The same handler with an `if` condition.
    pub fn with_if(mut self, rule: impl Into<String>) -> Self {
        self.if_condition = Some(rule.into());
        self
    }

    /// The same handler with a timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

/// One matcher group: a matcher and the handlers it selects.
#[derive(Debug, Clone)]
pub struct MatcherGroup {
    /// The matcher as written (`None` when absent).
    pub pattern: Option<String>,
    /// The parsed matcher.
    pub matcher: Matcher,
    /// The handlers, in configuration order.
    pub hooks: Vec<HookHandler>,
}

/// What a [`Diagnostic`] reports: a configuration that is wrong, or one that is read but
/// deliberately not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiagnosticKind {
    /// The configuration is wrong (not JSON, a value of the wrong type, an unknown event or
    /// hook type, a bad matcher): the part is skipped.
    Invalid,
    /// Read as written and, by design, not run: a handler type this tool layer does not run
    /// (`prompt`, `agent`, `mcp_tool`), an http hook whose URL the `allowedHttpHookUrls`
    /// policy keeps out, an `if` condition that is no valid permission rule (the handler is
    /// kept and never runs, as in Claude Code), a setting only managed settings may give.
    NotRun,
    /// Read and used, but probably not as meant: a matcher with a tab or a line break at its
    /// start or end (the message says what it matches). Nothing is skipped.
    Warning,
}

/// A problem found in a settings file's hooks configuration. The offending part is skipped
/// and reported here, never silently dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Whether the configuration is wrong or deliberately not run.
    pub kind: DiagnosticKind,
    /// The settings level.
    pub source: Option<RuleSource>,
    /// The file, if known.
    pub path: Option<PathBuf>,
    /// Where in the file (`hooks.PreToolUse[0].hooks[1]`).
    pub location: String,
    /// What is wrong, then (for most) what the loader did about it.
    pub message: String,
    /// The end of `message` the loader added to say what it did about the problem
    /// (`; group skipped: ...`), recorded when added, so that
    /// [`Diagnostic::stopping_the_command`] cuts that and nothing quoted from the settings;
    /// empty when there is none.
    pub(crate) tail: String,
}

/// What the loader adds after a problem to say what it did about it, as loading goes on
/// (recorded as the diagnostic's tail, which [`Diagnostic::stopping_the_command`] cuts).
const GROUP_SKIPPED: &str = "; group skipped";
const HANDLER_SKIPPED: &str = "; handler skipped";
const SKIPPED: &str = "; skipped";
const IGNORED: &str = "; ignored";
/// The tail of a wrong-typed `allowedHttpHookUrls` in a load that goes on.
const EMPTY_URL_LIST: &str = "; read as an empty list: no http hook runs";
/// The tail of a wrong-typed `httpHookAllowedEnvVars` in a load that goes on.
const EMPTY_ENV_LIST: &str =
    "; read as an empty list: no environment variable is expanded in http hook headers";
/// The tail of an `if` that matches no call (no valid permission rule, or a tool name no
/// tool has): its hook never runs.
const NEVER_RUNS: &str = "; the hook never runs";

/// Events whose hooks guard a call (they can refuse it): a handler or group of theirs that
/// cannot be run as written refuses the calls it would see instead of being dropped.
const GUARD_EVENTS: &[&str] = &["PreToolUse", "PermissionRequest"];

impl Diagnostic {
    /// A diagnostic of `kind` at `location` of the settings file `path` (of level
    /// `source`): `problem`, then `tail`, what the loader did about it (empty for none).
    pub(crate) fn new(
        kind: DiagnosticKind,
        source: Option<RuleSource>,
        path: Option<PathBuf>,
        location: impl Into<String>,
        problem: impl Into<String>,
        tail: impl Into<String>,
    ) -> Self {
        let tail = tail.into();
        let mut message = problem.into();
        message.push_str(&tail);
        Self {
            kind,
            source,
            path,
            location: location.into(),
            message,
            tail,
        }
    }

    /// The diagnostic as an error that stops the command (a hook `--settings` gives that
    /// cannot be read): what is wrong and where, without the `; group skipped`,
    /// `; handler skipped`, `; skipped`, `; ignored`, `; read as ...` or `; the hook never
    /// runs` of a load that goes on without that part (or reads it another way). Only the
    /// tail the loader added is cut: a value quoted from the settings that reads like one
    /// (`"x; skipped"`) is kept whole.
    pub fn stopping_the_command(&self) -> String {
        let message = match self.message.strip_suffix(self.tail.as_str()) {
            Some(problem) if !self.tail.is_empty() => problem,
            _ => self.message.as_str(),
        };
        format!("{}: {message}", self.place())
    }

    /// Whether it says that a hook never runs because its `if` matches no call (a rule that
    /// is no valid permission rule, a tool name no tool has).
    pub(crate) fn never_runs(&self) -> bool {
        self.tail == NEVER_RUNS
    }

    /// Where the problem is: the file (or the inline value) and the JSON location, their
    /// hidden characters escaped ([`tool_core::escape_hidden`]: an event name or a file
    /// name holding a line break prints no line of its own).
    fn place(&self) -> String {
        place(self.path.as_ref(), self.source, &self.location)
    }
}

/// Where a diagnostic's problem is (see [`Diagnostic::place`]).
fn place(path: Option<&PathBuf>, source: Option<RuleSource>, location: &str) -> String {
    let mut place = match (path, source) {
        (Some(p), _) => tool_core::escape_hidden(&p.display().to_string()),
        // Inline JSON given on the command line is named by its flag.
        (None, Some(RuleSource::FlagSettings)) => "--settings".to_owned(),
        (None, Some(s)) => match serde_json::to_value(s) {
            Ok(Value::String(name)) => format!("inline {name} value"),
            _ => format!("inline {s:?} value"),
        },
        (None, None) => "settings".to_owned(),
    };
    if !location.is_empty() {
        place.push_str(&format!(" ({})", tool_core::escape_hidden(location)));
    }
    place
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.place(), self.message)
    }
}

/// One settings file's JSON and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsFile {
    /// The settings level.
    pub source: RuleSource,
    /// The file, if it was read from disk.
    pub path: Option<PathBuf>,
    /// The whole settings JSON (only `hooks`, `disableAllHooks`, `allowManagedHooksOnly`
    /// are read here).
    pub value: Value,
}

/// The merged hooks configuration of a session.
///
/// Configuration order (used for de-duplication and for the deterministic order in which
/// hook results are combined) is: user, project, local, `--settings`, managed, then hooks
/// added in code; within a file, the order written.
#[derive(Debug, Clone, Default)]
pub struct HooksConfig {
    events: BTreeMap<String, Vec<MatcherGroup>>,
    /// Whether `disableAllHooks` turned off the settings hooks it may turn off.
    pub disabled_all: bool,
    /// Whether managed `allowManagedHooksOnly` restricted hooks to managed ones.
    pub managed_only: bool,
}

fn rank(source: RuleSource) -> u8 {
    match source {
        RuleSource::UserSettings => 0,
        RuleSource::ProjectSettings => 1,
        RuleSource::LocalSettings => 2,
        RuleSource::FlagSettings => 3,
        RuleSource::PolicySettings => 4,
        _ => 5,
    }
}

/// The largest hook `timeout` taken, in seconds.
const MAX_TIMEOUT_SECS: f64 = 1.0e9;

fn parse_timeout(v: &Value) -> Result<Duration, String> {
    let secs = v.as_f64().ok_or_else(|| {
        format!(
            "`timeout` must be a number of seconds, got {}",
            tool_core::shown_setting(v)
        )
    })?;
    if !(secs.is_finite() && secs > 0.0) {
        return Err(format!(
            "`timeout` must be a positive number of seconds, got {}",
            tool_core::shown_setting(v)
        ));
    }
    if secs > MAX_TIMEOUT_SECS {
        return Err(format!(
            "`timeout` is too large ({} seconds; at most {MAX_TIMEOUT_SECS:.0}, about 31 years)",
            tool_core::shown_setting(v)
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

fn opt_string(obj: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!(
            "`{key}` must be a string, got {}",
            tool_core::shown_setting(other)
        )),
    }
}

/// A JSON text with object keys sorted at every level (whatever map order serde_json uses).
fn canonical(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let parts: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{}:{}", Value::String((*k).clone()), canonical(v)))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

/// Hook types Claude Code knows that this tool layer does not run (they need a model).
const UNSUPPORTED_TYPES: &[&str] = &["prompt", "agent", "mcp_tool"];

/// A wrongly typed handler field that has a safe reading: the field and what the warning
/// says (the problem, then how the field was read).
struct FieldNote {
    field: &'static str,
    problem: String,
    tail: String,
}

/// Why a handler is not configured as written.
enum Unread {
    /// A handler type this tool layer does not run, by design (the problem says so): skipped,
    /// except as a guard (PreToolUse, PermissionRequest), which refuses what it would see.
    Unsupported(String),
    /// It cannot be run as written: what is wrong (what it would run, or how, is unknown).
    Invalid(String),
}

/// Reads one handler. A wrongly typed field with a safe reading (`statusMessage`,
/// `timeout`, `async`, `asyncRewake`, `onFailure`, `if`) is read that way and noted; any
/// other problem leaves the handler unread.
fn parse_handler(
    value: &Value,
    event: &str,
    source: RuleSource,
    path: Option<&PathBuf>,
) -> Result<(HookHandler, Vec<FieldNote>), Unread> {
    let obj = value.as_object().ok_or_else(|| {
        Unread::Invalid(format!(
            "a hook handler must be an object, got {}",
            tool_core::shown_setting(value)
        ))
    })?;
    let mut notes = Vec::new();
    let kind = handler_kind(obj, &mut notes)?;
    let (if_condition, if_unreadable) = match obj.get("if") {
        None | Some(Value::Null) => (None, false),
        Some(Value::String(rule)) => (Some(rule.clone()), false),
        Some(other) => {
            let problem = format!(
                "`if` must be a string (one permission rule), got {}",
                tool_core::shown_setting(other)
            );
            if !TOOL_EVENTS.contains(&event) {
                // `if` keeps a hook off every other event: it would never run.
                return Err(Unread::Invalid(problem));
            }
            notes.push(FieldNote {
                field: "if",
                problem,
                tail: format!(
                    "{IGNORED}: the hook runs for every call its matcher selects, and may refuse one but never approve it"
                ),
            });
            (None, true)
        }
    };
    let timeout = match obj.get("timeout") {
        None | Some(Value::Null) => None,
        Some(v) => match parse_timeout(v) {
            Ok(timeout) => Some(timeout),
            Err(problem) => {
                notes.push(FieldNote {
                    field: "timeout",
                    problem,
                    tail: format!(
                        "{IGNORED}: the hook runs with the default timeout ({} s)",
                        default_timeout(event).as_secs()
                    ),
                });
                None
            }
        },
    };
    let on_failure = match obj.get("onFailure") {
        None | Some(Value::Null) => OnFailure::Continue,
        Some(Value::String(s)) if s == "continue" => OnFailure::Continue,
        Some(Value::String(s)) if s == "block" => OnFailure::Block,
        // The stricter of the two: a guard that fails refuses the call.
        Some(other) => {
            notes.push(FieldNote {
                field: "onFailure",
                problem: format!(
                    "`onFailure` must be \"continue\" or \"block\", got {}",
                    tool_core::shown_setting(other)
                ),
                tail: "; read as \"block\": a failure of the hook blocks, as exit code 2 does"
                    .to_owned(),
            });
            OnFailure::Block
        }
    };
    let status_message = match opt_string(obj, "statusMessage") {
        Ok(message) => message,
        Err(problem) => {
            notes.push(FieldNote {
                field: "statusMessage",
                problem,
                tail: format!("{IGNORED}: the hook runs without a status message"),
            });
            None
        }
    };
    // Identity, as Claude Code's: what runs and when (the shell, the command or URL, the
    // `if`), not how (timeout, status message, async): the same script in user and project
    // settings runs once, with the settings of the later file. The shell is the program
    // that would run the command (`sh` when `shell` is absent, as execution has it; none in
    // exec form): Claude Code defaults both to bash, but here `"shell": "bash"` runs bash
    // and no `shell` runs sh, so the two are different hooks. An `if` that cannot be read
    // is part of it too, as given: such a hook runs where one without `if` would not.
    let condition = match (&if_condition, if_unreadable) {
        (Some(rule), _) => rule.clone(),
        (None, true) => format!(
            "\u{0}unreadable:{}",
            obj.get("if").map(canonical).unwrap_or_default()
        ),
        (None, false) => String::new(),
    };
    let dedupe_key = match &kind {
        HandlerKind::Command(c) => canonical(&serde_json::json!([
            "command",
            c.shell_invocation().map(|(program, _)| program),
            c.command,
            c.args,
            condition
        ])),
        HandlerKind::Http(h) => canonical(&serde_json::json!(["http", h.url, condition])),
        HandlerKind::Native(hook) => format!("native:{:p}", Arc::as_ptr(hook)),
    };
    Ok((
        HookHandler {
            kind,
            if_condition,
            timeout,
            status_message,
            on_failure,
            source,
            path: path.cloned(),
            dedupe_key,
            if_unreadable,
            if_place: None,
        },
        notes,
    ))
}

/// What a handler runs: its `type` and the fields that say what runs (`command`, `args`,
/// `shell`; `url`, `headers`, `allowedEnvVars`), which must be as documented, and how
/// (`async`, `asyncRewake`: one that is no boolean is read as false, so the hook's answer
/// counts, and noted).
fn handler_kind(
    obj: &Map<String, Value>,
    notes: &mut Vec<FieldNote>,
) -> Result<HandlerKind, Unread> {
    let ty = match obj.get("type") {
        Some(Value::String(s)) => s.as_str(),
        None => "command",
        Some(other) => {
            return Err(Unread::Invalid(format!(
                "`type` must be a string, got {}",
                tool_core::shown_setting(other)
            )));
        }
    };
    match ty {
        "command" => command_kind(obj, notes).map_err(Unread::Invalid),
        "http" => http_kind(obj).map_err(Unread::Invalid),
        _ if UNSUPPORTED_TYPES.contains(&ty) => Err(Unread::Unsupported(format!(
            "hook type {ty:?} is not supported by Toolwright's tool layer (a guard is run \
             here only as a `command` or `http` hook)"
        ))),
        other => Err(Unread::Invalid(format!("unknown hook type {other:?}"))),
    }
}

fn command_kind(
    obj: &Map<String, Value>,
    notes: &mut Vec<FieldNote>,
) -> Result<HandlerKind, String> {
    let command = opt_string(obj, "command")?
        .filter(|c| !c.trim().is_empty())
        .ok_or("a command hook needs a non-empty `command` string")?;
    let args = match obj.get("args") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .map(|a| {
                    a.as_str().map(str::to_owned).ok_or_else(|| {
                        format!(
                            "`args` must hold strings, got {}",
                            tool_core::shown_setting(a)
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Some(other) => {
            return Err(format!(
                "`args` must be an array of strings, got {}",
                tool_core::shown_setting(other)
            ));
        }
    };
    let shell = opt_string(obj, "shell")?;
    if let Some(s) = &shell
        && s != "bash"
        && s != "powershell"
    {
        return Err(format!(
            "`shell` must be \"bash\" or \"powershell\", got {}",
            tool_core::shown_setting(&Value::String(s.clone()))
        ));
    }
    let mut flag = |key: &'static str| match obj.get(key) {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            notes.push(FieldNote {
                field: key,
                problem: format!(
                    "`{key}` must be a boolean, got {}",
                    tool_core::shown_setting(other)
                ),
                tail: "; read as false: the hook runs in the foreground and its answer counts"
                    .to_owned(),
            });
            false
        }
    };
    // "asyncRewake: If true, runs in background and wakes Claude on exit code 2.
    // Implies async."
    let async_rewake = flag("asyncRewake");
    let is_async = flag("async") || async_rewake;
    Ok(HandlerKind::Command(CommandHandler {
        command,
        args,
        shell,
        is_async,
        async_rewake,
    }))
}

fn http_kind(obj: &Map<String, Value>) -> Result<HandlerKind, String> {
    let url = opt_string(obj, "url")?.ok_or("an http hook needs a `url` string")?;
    // Checked here, not when a call comes: a guard whose request cannot even be built
    // refuses the calls it would see, as any guard that cannot be run as written.
    if let Some(problem) = url_problem(&url) {
        return Err(problem);
    }
    let headers = match obj.get("headers") {
        None | Some(Value::Null) => BTreeMap::new(),
        Some(Value::Object(h)) => h
            .iter()
            .map(|(k, v)| {
                v.as_str()
                    .map(|s| (k.clone(), s.to_owned()))
                    .ok_or_else(|| format!("header {k:?} must be a string"))
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(format!(
                "`headers` must be an object, got {}",
                tool_core::shown_setting(other)
            ));
        }
    };
    let allowed_env_vars = match obj.get("allowedEnvVars") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        Some(other) => {
            return Err(format!(
                "`allowedEnvVars` must be an array, got {}",
                tool_core::shown_setting(other)
            ));
        }
    };
    Ok(HandlerKind::Http(HttpHandler {
        url,
        headers,
        allowed_env_vars,
    }))
}

/// Whether a handler says it runs in the background (`async` or `asyncRewake` is `true`):
/// such a hook decides nothing, so one that cannot be read refuses nothing either.
fn declared_async(value: &Value) -> bool {
    ["async", "asyncRewake"]
        .iter()
        .any(|key| value.get(key) == Some(&Value::Bool(true)))
}

/// A PreToolUse or PermissionRequest hook (or matcher group) that cannot be run as written,
/// kept in its place: it refuses every call it would have seen, saying why (a blocking
/// error on PreToolUse, a deny on PermissionRequest), as a guard that cannot be started
/// does. Dropping it would let through what it was there to stop.
struct Unrunnable {
    /// Where it is configured (`FILE (hooks.PreToolUse[0].hooks[1])`).
    name: String,
    /// What is wrong with it.
    problem: String,
}

#[async_trait::async_trait]
impl NativeHook for Unrunnable {
    fn name(&self) -> &str {
        &self.name
    }

    async fn run(
        &self,
        input: &Value,
        _ctx: &tool_core::ToolUseContext,
    ) -> Result<HookOutput, NativeHookError> {
        let why = format!(
            "[{}]: cannot be read, so the call is refused (the hook may have refused it): {}",
            self.name, self.problem
        );
        if input.get("hook_event_name").and_then(Value::as_str) == Some("PermissionRequest") {
            let tool = input
                .get("tool_name")
                .and_then(Value::as_str)
                .unwrap_or("this tool");
            let mut hso = HookSpecificOutput::for_event("PermissionRequest");
            hso.decision = Some(PermissionRequestDecision::Deny {
                message: Some(format!("Permission to use {tool} denied: {why}")),
                interrupt: None,
            });
            return Ok(HookOutput {
                hook_specific_output: Some(hso),
                ..HookOutput::default()
            });
        }
        Err(NativeHookError::Blocking(why))
    }
}

/// The handler standing for an [`Unrunnable`] hook configured at `place`; `value` is what
/// was configured (its `if`, when that is a rule, still limits the calls it refuses).
fn unrunnable(
    value: Option<&Value>,
    place: String,
    problem: String,
    source: RuleSource,
    path: Option<&PathBuf>,
) -> HookHandler {
    let mut handler = HookHandler::native(Arc::new(Unrunnable {
        name: place,
        problem,
    }));
    match value.and_then(|v| v.get("if")) {
        None | Some(Value::Null) => {}
        Some(Value::String(rule)) => handler.if_condition = Some(rule.clone()),
        Some(_) => handler.if_unreadable = true,
    }
    handler.source = source;
    handler.path = path.cloned();
    handler
}

/// Reads one settings file's `hooks` into a configuration ([`HooksConfig::from_settings`]),
/// reporting each problem with what was done about it.
struct FileLoader<'a> {
    file: &'a SettingsFile,
    /// Why no hook of this file runs (`disableAllHooks`, `allowManagedHooksOnly`), when none
    /// does: then nothing of it is configured, what cannot be run refuses nothing, and the
    /// warnings say why instead.
    off: Option<&'static str>,
    url_allow: Option<&'a [String]>,
    env_allow: Option<&'a [String]>,
    config: &'a mut HooksConfig,
    diags: &'a mut Vec<Diagnostic>,
}

impl FileLoader<'_> {
    /// A diagnostic of this file: `problem` at `location`, then `tail`.
    fn diag(
        &self,
        kind: DiagnosticKind,
        location: &str,
        problem: impl Into<String>,
        tail: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic::new(
            kind,
            Some(self.file.source),
            self.file.path.clone(),
            location,
            problem,
            tail,
        )
    }

    /// Reports `problem` at `location` of this file, then `tail`.
    fn report(
        &mut self,
        kind: DiagnosticKind,
        location: &str,
        problem: impl Into<String>,
        tail: impl Into<String>,
    ) {
        let d = self.diag(kind, location, problem, tail);
        self.diags.push(d);
    }

    /// What a part that will not run adds to its tail when no hook of this file runs anyway.
    fn off_note(&self) -> String {
        self.off.map(|why| format!(" ({why})")).unwrap_or_default()
    }

    /// Adds a matcher group of `event`, unless no hook of this file runs or it has none.
    fn add_group(
        &mut self,
        event: &str,
        pattern: Option<String>,
        matcher: Matcher,
        hooks: Vec<HookHandler>,
    ) {
        if self.off.is_some() || hooks.is_empty() {
            return;
        }
        self.config
            .events
            .entry(event.to_owned())
            .or_default()
            .push(MatcherGroup {
                pattern,
                matcher,
                hooks,
            });
    }

    fn load(&mut self) {
        let Some(hooks) = self.file.value.get("hooks") else {
            return;
        };
        let Some(events) = hooks.as_object() else {
            if !hooks.is_null() {
                self.report(
                    DiagnosticKind::Invalid,
                    "hooks",
                    format!(
                        "must be an object of event names, got {}",
                        tool_core::shown_setting(hooks)
                    ),
                    format!("{SKIPPED}: no hook of this file runs"),
                );
            }
            return;
        };
        for (event, groups) in events {
            let loc = format!("hooks.{event}");
            if !HOOK_EVENTS.contains(&event.as_str()) {
                self.report(
                    DiagnosticKind::Invalid,
                    &loc,
                    format!("unknown hook event {event:?}"),
                    SKIPPED,
                );
                continue;
            }
            let Some(groups) = groups.as_array() else {
                self.report(
                    DiagnosticKind::Invalid,
                    &loc,
                    format!(
                        "must be an array of matcher groups, got {}",
                        tool_core::shown_setting(groups)
                    ),
                    format!("{SKIPPED}: no {event} hook of this file runs"),
                );
                continue;
            };
            for (gi, group) in groups.iter().enumerate() {
                self.load_group(event, &format!("{loc}[{gi}]"), group);
            }
        }
    }

    fn load_group(&mut self, event: &str, loc: &str, group: &Value) {
        let Some(gobj) = group.as_object() else {
            self.report(
                DiagnosticKind::Invalid,
                loc,
                format!(
                    "a matcher group must be an object, got {}",
                    tool_core::shown_setting(group)
                ),
                GROUP_SKIPPED,
            );
            return;
        };
        let hooks = gobj.get("hooks");
        let matcher_loc = format!("{loc}.matcher");
        let pattern = match gobj.get("matcher") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                let problem = format!(
                    "`matcher` must be a string, got {}",
                    tool_core::shown_setting(other)
                );
                self.unreadable_matcher(event, &matcher_loc, problem, hooks);
                return;
            }
        };
        let matcher = if NO_MATCHER_EVENTS.contains(&event) {
            Matcher::All
        } else {
            match Matcher::parse_for_event(event, pattern.as_deref()) {
                Ok(m) => {
                    if let Some(warning) = pattern
                        .as_deref()
                        .and_then(|p| stray_whitespace_warning(p, &m))
                    {
                        self.report(DiagnosticKind::Warning, &matcher_loc, warning, "");
                    }
                    m
                }
                Err(e) => {
                    self.unreadable_matcher(event, &matcher_loc, e.to_string(), hooks);
                    return;
                }
            }
        };
        let Some(handlers) = hooks.and_then(Value::as_array) else {
            self.unreadable_hooks(event, loc, pattern, matcher, hooks);
            return;
        };
        let mut parsed = Vec::new();
        for (hi, h) in handlers.iter().enumerate() {
            parsed.extend(self.load_handler(event, &format!("{loc}.hooks[{hi}]"), h));
        }
        self.add_group(event, pattern, matcher, parsed);
    }

    /// A group whose `matcher` (at `location`) cannot be read: which calls its hooks would
    /// see is unknown. On PreToolUse and PermissionRequest its hooks refuse every call (each
    /// within its `if`, when that is a rule), as [`Unrunnable`] guards with a matcher that
    /// selects every tool: dropping them would let through what they guard. Elsewhere, or
    /// when it has no hook that decides (none, or only `async` ones), it is skipped.
    fn unreadable_matcher(
        &mut self,
        event: &str,
        location: &str,
        problem: String,
        hooks: Option<&Value>,
    ) {
        let mut refusing: Vec<HookHandler> = Vec::new();
        if GUARD_EVENTS.contains(&event) && self.off.is_none() {
            let deciding: Vec<&Value> = match hooks {
                None => Vec::new(),
                Some(Value::Array(items)) => items.iter().collect(),
                Some(other) => vec![other],
            }
            .into_iter()
            .filter(|h| !declared_async(h))
            .collect();
            let place = place(self.file.path.as_ref(), Some(self.file.source), location);
            let refuse = |value: Option<&Value>| {
                unrunnable(
                    value,
                    place.clone(),
                    problem.clone(),
                    self.file.source,
                    self.file.path.as_ref(),
                )
            };
            // A hook without an `if` rule would see every call: one refusal covers them all.
            // Otherwise one refusal per `if` rule.
            let rule = |h: &Value| h.get("if").and_then(Value::as_str).map(str::to_owned);
            if deciding.iter().any(|h| rule(h).is_none()) {
                refusing.push(refuse(None));
            } else {
                let mut seen = Vec::new();
                for h in deciding {
                    if let Some(r) = rule(h)
                        && !seen.contains(&r)
                    {
                        refusing.push(refuse(Some(h)));
                        seen.push(r);
                    }
                }
            }
        }
        let tail = if refusing.is_empty() {
            format!("{GROUP_SKIPPED}{}", self.off_note())
        } else {
            let within = if refusing.iter().all(|h| h.if_condition.is_some()) {
                " that their `if` selects"
            } else {
                ""
            };
            format!(
                "{GROUP_SKIPPED}: its hooks will not run, and since which calls they would see is unknown, every call{within} is refused until it is fixed"
            )
        };
        self.report(DiagnosticKind::Invalid, location, problem, tail);
        self.add_group(event, None, Matcher::All, refusing);
    }

    /// A group whose `hooks` is no array. With none at all it has nothing to run: reported
    /// and skipped. Something else (`null`, one handler not in an array) cannot be run as
    /// written: on PreToolUse and PermissionRequest it stays as an [`Unrunnable`] guard that
    /// refuses the calls its matcher selects; elsewhere it is skipped.
    fn unreadable_hooks(
        &mut self,
        event: &str,
        loc: &str,
        pattern: Option<String>,
        matcher: Matcher,
        hooks: Option<&Value>,
    ) {
        let location = format!("{loc}.hooks");
        let Some(given) = hooks else {
            self.report(
                DiagnosticKind::Invalid,
                &location,
                "a matcher group needs a `hooks` array, and has none",
                format!("{GROUP_SKIPPED}: it has no hook to run"),
            );
            return;
        };
        let problem = format!(
            "a matcher group needs a `hooks` array, got {}",
            tool_core::shown_setting(given)
        );
        let refuses = GUARD_EVENTS.contains(&event) && self.off.is_none() && !declared_async(given);
        let consequence = if refuses {
            ": its hooks will not run, and the calls its matcher selects are refused until it is fixed".to_owned()
        } else {
            format!(": its hooks will not run{}", self.off_note())
        };
        let d = self.diag(
            DiagnosticKind::Invalid,
            &location,
            problem.clone(),
            format!("{GROUP_SKIPPED}{consequence}"),
        );
        if refuses {
            let hook = unrunnable(
                None,
                d.place(),
                problem,
                self.file.source,
                self.file.path.as_ref(),
            );
            self.add_group(event, pattern, matcher, vec![hook]);
        }
        self.diags.push(d);
    }

    /// One handler at `loc`: what runs, or, for one that cannot be run as written or is of a
    /// type this layer does not run, on PreToolUse and PermissionRequest, an
    /// [`Unrunnable`] guard in its place.
    fn load_handler(&mut self, event: &str, loc: &str, h: &Value) -> Option<HookHandler> {
        let mut handler = match parse_handler(h, event, self.file.source, self.file.path.as_ref()) {
            Ok((handler, notes)) => {
                for note in notes {
                    self.report(
                        DiagnosticKind::Invalid,
                        &format!("{loc}.{}", note.field),
                        note.problem,
                        note.tail,
                    );
                }
                handler
            }
            // Off the guard events, a type this layer does not run is skipped, by design. A
            // guard of such a type (a `prompt` PreToolUse hook Claude Code would run) is
            // never dropped: it refuses what it would see, as a broken guard does.
            Err(Unread::Unsupported(problem))
                if !GUARD_EVENTS.contains(&event) || declared_async(h) =>
            {
                self.report(DiagnosticKind::NotRun, loc, problem, HANDLER_SKIPPED);
                return None;
            }
            Err(Unread::Unsupported(problem) | Unread::Invalid(problem)) => {
                // An `async` hook decides nothing: nothing to refuse for it.
                let refuses =
                    GUARD_EVENTS.contains(&event) && self.off.is_none() && !declared_async(h);
                let consequence = if refuses {
                    ": the hook will not run, and the calls it would see are refused until it is fixed".to_owned()
                } else {
                    format!(": the hook will not run{}", self.off_note())
                };
                let d = self.diag(
                    DiagnosticKind::Invalid,
                    loc,
                    problem.clone(),
                    format!("{HANDLER_SKIPPED}{consequence}"),
                );
                let refusal = refuses.then(|| {
                    unrunnable(
                        Some(h),
                        d.place(),
                        problem,
                        self.file.source,
                        self.file.path.as_ref(),
                    )
                });
                self.diags.push(d);
                return refusal;
            }
        };
        if let Some(rule) = handler.if_condition.clone() {
            let if_loc = format!("{loc}.if");
            // An `if` that matches no call never runs its hook (as in Claude Code): said
            // here, once, rather than found out by a hook that never fires. The handler
            // stays: that is what was configured. Given by `--settings`, it stops the
            // command ([`LoadedHooks::command_line_errors`](crate::LoadedHooks::command_line_errors)).
            // On an event that sees no tool call the condition has nothing to match.
            let never = if TOOL_EVENTS.contains(&event) {
                if_rule_problem(&rule)
                    .map(|problem| format!("is not a valid permission rule ({problem})"))
                    .or_else(|| if_tool_name_problem(&rule))
            } else {
                Some(format!(
                    "is read on tool events only ({}), and {event} sees no tool call",
                    TOOL_EVENTS.join(", ")
                ))
            };
            if let Some(problem) = never {
                self.report(
                    DiagnosticKind::NotRun,
                    &if_loc,
                    format!("the {event} hook's `if` condition {rule:?} {problem}"),
                    NEVER_RUNS,
                );
            }
            handler.if_place = Some(place(
                self.file.path.as_ref(),
                Some(self.file.source),
                &if_loc,
            ));
        }
        if let HandlerKind::Http(http) = &mut handler.kind {
            if let Some(allowed) = self.url_allow
                && let Some(refusal) = url_refusal(allowed, &http.url)
            {
                let url = tool_core::redact_url(&http.url);
                let why = match refusal {
                    UrlRefusal::NotAllowed => {
                        format!("http hook URL {url:?} is not in allowedHttpHookUrls")
                    }
                    UrlRefusal::UserInfo => format!(
                        "http hook URL {url:?} has user info, which allowedHttpHookUrls never allows"
                    ),
                };
                self.report(DiagnosticKind::NotRun, loc, why, SKIPPED);
                return None;
            }
            if let Some(allowed) = self.env_allow {
                http.allowed_env_vars.retain(|v| allowed.contains(v));
            }
        }
        Some(handler)
    }
}

impl HooksConfig {
    /// An empty configuration: no hooks run.
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds the merged configuration from settings files of any levels, in any order.
    ///
    /// Entries from all levels are concatenated (user, project, local, `--settings`,
    /// managed). `disableAllHooks` takes the value of the highest level that sets it: set by
    /// a non-managed level it disables non-managed hooks; set by managed settings it disables
    /// all. Managed `allowManagedHooksOnly: true` drops every non-managed hook. Problems are
    /// returned as diagnostics (the bad part is skipped); nothing is dropped silently.
    pub fn from_settings(files: &[SettingsFile]) -> (Self, Vec<Diagnostic>) {
        let mut diags = Vec::new();
        let mut ordered: Vec<&SettingsFile> = files.iter().collect();
        ordered.sort_by_key(|f| rank(f.source));

        // disableAllHooks: value of the highest level that sets it.
        let mut disable: Option<(bool, RuleSource)> = None;
        let mut managed_only = false;
        for f in &ordered {
            let diag = |kind, location: &str, problem: String| {
                Diagnostic::new(
                    kind,
                    Some(f.source),
                    f.path.clone(),
                    location,
                    problem,
                    IGNORED,
                )
            };
            match f.value.get("disableAllHooks") {
                None | Some(Value::Null) => {}
                Some(Value::Bool(b)) => disable = Some((*b, f.source)),
                Some(other) => diags.push(diag(
                    DiagnosticKind::Invalid,
                    "disableAllHooks",
                    format!("must be a boolean, got {}", tool_core::shown_setting(other)),
                )),
            }
            if let Some(v) = f.value.get("allowManagedHooksOnly") {
                match (v, f.source) {
                    (Value::Bool(b), RuleSource::PolicySettings) => managed_only |= *b,
                    (Value::Bool(_), _) => diags.push(diag(
                        DiagnosticKind::NotRun,
                        "allowManagedHooksOnly",
                        "only honoured in managed settings".to_owned(),
                    )),
                    (other, _) => diags.push(diag(
                        DiagnosticKind::Invalid,
                        "allowManagedHooksOnly",
                        format!("must be a boolean, got {}", tool_core::shown_setting(other)),
                    )),
                }
            }
        }
        // allowedHttpHookUrls / httpHookAllowedEnvVars: lists concatenated across levels;
        // when any level sets one, it restricts every http hook.
        let mut url_allow: Option<Vec<String>> = None;
        let mut env_allow: Option<Vec<String>> = None;
        for f in &ordered {
            for (key, slot) in [
                ("allowedHttpHookUrls", &mut url_allow),
                ("httpHookAllowedEnvVars", &mut env_allow),
            ] {
                let diag = |problem: String, tail: &str| {
                    Diagnostic::new(
                        DiagnosticKind::Invalid,
                        Some(f.source),
                        f.path.clone(),
                        key,
                        problem,
                        tail,
                    )
                };
                match f.value.get(key) {
                    None | Some(Value::Null) => {}
                    Some(Value::Array(items)) => {
                        let list = slot.get_or_insert_with(Vec::new);
                        for (i, item) in items.iter().enumerate() {
                            match item.as_str() {
                                Some(s) => list.push(s.to_owned()),
                                // Skipped, the list restricts the more for it.
                                None => diags.push(diag(
                                    format!(
                                        "item {i} must be a string, got {}",
                                        tool_core::shown_setting(item)
                                    ),
                                    SKIPPED,
                                )),
                            }
                        }
                    }
                    // A restriction of the wrong type restricts all the same: read as an
                    // empty list (dropping it would let every http hook POST anywhere).
                    // From `--settings` it stops the command
                    // ([`LoadedHooks::command_line_errors`](crate::LoadedHooks::command_line_errors)).
                    Some(other) => {
                        slot.get_or_insert_with(Vec::new);
                        let tail = if key == "allowedHttpHookUrls" {
                            EMPTY_URL_LIST
                        } else {
                            EMPTY_ENV_LIST
                        };
                        diags.push(diag(
                            format!(
                                "must be an array of strings, got {}",
                                tool_core::shown_setting(other)
                            ),
                            tail,
                        ));
                    }
                }
            }
        }
        let (disable_managed, disable_others) = match disable {
            Some((true, RuleSource::PolicySettings)) => (true, true),
            Some((true, _)) => (false, true),
            _ => (false, false),
        };

        let mut config = Self {
            disabled_all: disable_others,
            managed_only,
            ..Self::default()
        };
        for file in ordered {
            let off = if file.source == RuleSource::PolicySettings {
                disable_managed
                    .then_some("disableAllHooks is set in managed settings: no hook runs")
            } else if disable_others {
                Some("disableAllHooks is set: no hook of this file runs")
            } else if managed_only {
                Some("allowManagedHooksOnly is set in managed settings: only managed hooks run")
            } else {
                None
            };
            FileLoader {
                file,
                off,
                url_allow: url_allow.as_deref(),
                env_allow: env_allow.as_deref(),
                config: &mut config,
                diags: &mut diags,
            }
            .load();
        }
        (config, diags)
    }

    /// Parses one `hooks` object (the value of a settings file's `hooks` key) as if it came
    /// from `source`. Convenient for tests and for hosts that keep hooks elsewhere.
    pub fn from_hooks_value(hooks: &Value, source: RuleSource) -> (Self, Vec<Diagnostic>) {
        Self::from_settings(&[SettingsFile {
            source,
            path: None,
            value: serde_json::json!({ "hooks": hooks }),
        }])
    }

    /// Adds a handler for `event` under `matcher` (after everything already configured).
    /// Hooks added in code are not affected by `disableAllHooks`.
    pub fn add(&mut self, event: &str, matcher: Matcher, handler: HookHandler) {
        self.events
            .entry(event.to_owned())
            .or_default()
            .push(MatcherGroup {
                pattern: None,
                matcher,
                hooks: vec![handler],
            });
    }

    /// Adds an in-process hook for `event` under `matcher`.
    pub fn add_native(&mut self, event: &str, matcher: Matcher, hook: Arc<dyn NativeHook>) {
        self.add(event, matcher, HookHandler::native(hook));
    }

    /// Whether no hook is configured at all.
    pub fn is_empty(&self) -> bool {
        self.events.values().all(Vec::is_empty)
    }

    /// The matcher groups of `event`, in configuration order.
    pub fn groups(&self, event: &str) -> &[MatcherGroup] {
        self.events.get(event).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The handlers of `event` whose matcher accepts `matcher_value` (`None` = no matcher
    /// target: every group matches), in configuration order, identical handlers once: at
    /// the first one's place, as the last one is configured (a later settings file's
    /// timeout wins, as in Claude Code).
    pub fn matching(&self, event: &str, matcher_value: Option<&str>) -> Vec<&HookHandler> {
        self.matching_by(event, |m| matcher_value.is_none_or(|v| m.is_match(v)))
    }

    /// [`matching`](Self::matching) with the groups whose matcher `hit` accepts (a tool
    /// event's groups by any of the tool's names).
    pub(crate) fn matching_by(
        &self,
        event: &str,
        hit: impl Fn(&Matcher) -> bool,
    ) -> Vec<&HookHandler> {
        let mut seen = std::collections::HashMap::new();
        let mut out: Vec<&HookHandler> = Vec::new();
        for group in self.groups(event) {
            if !hit(&group.matcher) {
                continue;
            }
            for h in &group.hooks {
                match seen.entry(h.dedupe_key.as_str()) {
                    std::collections::hash_map::Entry::Occupied(at) => out[*at.get()] = h,
                    std::collections::hash_map::Entry::Vacant(slot) => {
                        slot.insert(out.len());
                        out.push(h);
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A `timeout` that is not a positive number says so; one too large says that.
    #[test]
    fn timeouts_say_what_is_wrong() {
        assert_eq!(parse_timeout(&json!(1.5)), Ok(Duration::from_millis(1500)));
        assert!(parse_timeout(&json!(1.0e9)).is_ok());
        for bad in [json!(0), json!(-1), json!("5")] {
            let err = parse_timeout(&bad).unwrap_err();
            assert!(err.contains("must be a"), "{bad}: {err}");
        }
        let err = parse_timeout(&json!(1.0e10)).unwrap_err();
        assert!(err.contains("too large"), "{err}");
    }

    fn file(source: RuleSource, value: Value) -> SettingsFile {
        SettingsFile {
            source,
            path: Some(PathBuf::from(format!("/{source:?}.json"))),
            value,
        }
    }

    fn cmd(h: &HookHandler) -> &str {
        match &h.kind {
            HandlerKind::Command(c) => &c.command,
            _ => "",
        }
    }

    #[test]
    fn merges_in_order_and_dedupes() {
        let hook = |c: &str| json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": c}]}]}});
        let files = [
            file(RuleSource::PolicySettings, hook("managed")),
            file(RuleSource::UserSettings, hook("same")),
            file(RuleSource::ProjectSettings, hook("same")),
            file(RuleSource::LocalSettings, hook("local")),
        ];
        let (config, diags) = HooksConfig::from_settings(&files);
        assert!(diags.is_empty(), "{diags:?}");
        let names: Vec<&str> = config
            .matching("PreToolUse", Some("Bash"))
            .into_iter()
            .map(cmd)
            .collect();
        assert_eq!(names, ["same", "local", "managed"]);
        assert!(config.matching("PreToolUse", Some("Edit")).is_empty());
    }

    #[test]
    fn disable_all_and_managed_only() {
        let hook =
            |c: &str| json!({"PreToolUse": [{"hooks": [{"type": "command", "command": c}]}]});
        let user = file(
            RuleSource::UserSettings,
            json!({"hooks": hook("user"), "disableAllHooks": true}),
        );
        let managed = file(
            RuleSource::PolicySettings,
            json!({"hooks": hook("managed")}),
        );
        let (c, _) = HooksConfig::from_settings(&[user.clone(), managed.clone()]);
        let names: Vec<&str> = c
            .matching("PreToolUse", Some("X"))
            .into_iter()
            .map(cmd)
            .collect();
        assert_eq!(names, ["managed"]);
        // Local re-enables (higher level wins).
        let local = file(RuleSource::LocalSettings, json!({"disableAllHooks": false}));
        let (c, _) = HooksConfig::from_settings(&[user.clone(), managed.clone(), local]);
        assert_eq!(c.matching("PreToolUse", Some("X")).len(), 2);
        // Managed disableAllHooks disables everything.
        let m2 = file(
            RuleSource::PolicySettings,
            json!({"hooks": hook("managed"), "disableAllHooks": true}),
        );
        let (c, _) = HooksConfig::from_settings(&[user.clone(), m2]);
        assert!(c.is_empty());
        // allowManagedHooksOnly.
        let m3 = file(
            RuleSource::PolicySettings,
            json!({"hooks": hook("managed"), "allowManagedHooksOnly": true}),
        );
        let proj = file(
            RuleSource::ProjectSettings,
            json!({"hooks": hook("project")}),
        );
        let (c, _) = HooksConfig::from_settings(&[proj, m3]);
        let names: Vec<&str> = c
            .matching("PreToolUse", Some("X"))
            .into_iter()
            .map(cmd)
            .collect();
        assert_eq!(names, ["managed"]);
    }

    #[test]
    fn bad_sections_are_reported() {
        let bad = file(
            RuleSource::ProjectSettings,
            json!({"hooks": {
                "PreToolUse": [
                    {"matcher": "(bad", "hooks": [{"type": "command", "command": "x"}]},
                    {"matcher": "Bash", "hooks": [{"type": "command"}, {"type": "command", "command": "ok", "timeout": "soon"}, {"type": "prompt", "prompt": "p"}]},
                    "nope"
                ],
                "NotAnEvent": [],
                "PostToolUse": {"matcher": "x"}
            }}),
        );
        let (c, diags) = HooksConfig::from_settings(&[bad]);
        // What is left: the group whose matcher is no regex, as a guard that refuses every
        // call, the handler without `command` and the `prompt` one, as guards that refuse
        // the Bash calls they would see, and the one whose `timeout` is ignored.
        let left = c.matching("PreToolUse", Some("Bash"));
        assert_eq!(left.len(), 4, "{left:?}");
        assert!(matches!(&left[3].kind, HandlerKind::Native(n)
            if n.name() == "/ProjectSettings.json (hooks.PreToolUse[1].hooks[2])"));
        assert!(matches!(&left[0].kind, HandlerKind::Native(n)
            if n.name() == "/ProjectSettings.json (hooks.PreToolUse[0].matcher)"));
        assert!(matches!(&left[1].kind, HandlerKind::Native(n)
            if n.name() == "/ProjectSettings.json (hooks.PreToolUse[1].hooks[0])"));
        assert_eq!(cmd(left[2]), "ok");
        assert_eq!(left[2].timeout, None);
        assert_eq!(c.matching("PreToolUse", Some("Read")).len(), 1);
        assert!(c.groups("PostToolUse").is_empty());
        let text: Vec<String> = diags.iter().map(ToString::to_string).collect();
        assert_eq!(diags.len(), 7, "{text:#?}");
        assert!(text.iter().all(|t| t.starts_with("/ProjectSettings.json")));
        assert!(
            text.iter()
                .any(|t| t.contains("hooks.PreToolUse[0].matcher")
                    && t.contains("invalid matcher regex"))
        );
        assert!(
            text.iter()
                .any(|t| t.contains("hooks.PreToolUse[1].hooks[0]") && t.contains("`command`"))
        );
        assert!(text.iter().any(|t| t.contains("timeout")));
        assert!(
            text.iter()
                .any(|t| t.contains("\"prompt\" is not supported"))
        );
        assert!(text.iter().any(|t| t.contains("NotAnEvent")));
        let (_, d) =
            HooksConfig::from_settings(&[file(RuleSource::UserSettings, json!({"hooks": [1]}))]);
        assert_eq!(d.len(), 1);
    }

    #[test]
    fn no_matcher_events_ignore_matcher() {
        let (c, d) = HooksConfig::from_hooks_value(
            &json!({"Stop": [{"matcher": "whatever", "hooks": [{"type": "command", "command": "x"}]}]}),
            RuleSource::UserSettings,
        );
        assert!(d.is_empty());
        assert_eq!(c.matching("Stop", Some("other")).len(), 1);
    }
}
