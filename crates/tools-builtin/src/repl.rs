//! REPL (Cargo feature `repl`): runs Python or JavaScript code in one persistent interpreter
//! per session and language, so that state (variables, imports, functions) survives between
//! calls.
//!
//! - The interpreter is `python3 -u -c <driver>` or `node -e <driver>`, found on `PATH`,
//!   started on the first call of its language in the context's cwd, in its own process
//!   group (as Bash runs commands), with stdin from /dev/null, piped stdout and stderr, and
//!   a pipe for requests as descriptor 3; with `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB` on, without
//!   this process's credentials, as Bash's commands
//!   (`tool_core::process::scrub_credentials`). When the session's cwd changes (EnterWorktree,
//!   ExitWorktree), the next call first has the driver move the interpreter there (its own
//!   `os.chdir`, `process.chdir`: nothing the code defined is used), state kept; a `chdir`
//!   of the code's own holds until then.
//! - A small driver protocol keeps calls apart: each call sends one JSON line
//!   `{"code", "marker"}` on descriptor 3 with a fresh random marker (nothing the code runs
//!   reads it: stdin is empty); the driver runs the code in one persistent namespace (a globals dict for Python, a `vm` context for Node), lets it write
//!   to the real stdout and stderr, then writes the marker alone on a line to stderr and the
//!   marker followed by a JSON status (`{"ok": true}` or `{"ok": false, "error": <traceback>}`)
//!   to stdout. The output of a call is what each stream carried before its marker; anything
//!   after it (a thread still printing) belongs to the next call. The value of a final
//!   expression is printed, as in an interactive prompt. Node code with a top-level `await`
//!   is rewritten as node's own prompt rewrites it (its `internal/repl/await`, reached with
//!   `--expose-internals`): an async function around the code, its top-level declarations
//!   hoisted out of it (`const r = await p` becomes `let r; (async () => { void (r = await
//!   p); ... })()`), so that they outlive the call as other calls' declarations do. (The
//!   flag also lets the code `require` node's internal modules; it runs any code anyway.)
//!   Where the rewriter is missing or cannot parse the code, it runs as written.
//! - An exception is an error result carrying the output so far and the traceback.
//! - Timeout: [`DEFAULT_TIMEOUT_MS`] (Bash's default; the input has no timeout field).
//!   [`Repl::with_timeout`] sets another, at most [`MAX_TIMEOUT_MS`]. On timeout, on
//!   cancellation, and when the output passes Bash's kill cap, the whole process group gets
//!   SIGTERM, then SIGKILL to what is left of it after [`KILL_GRACE`]; the interpreter is
//!   dropped and the next call starts a fresh one and says so. A call abandoned half-way (its
//!   future dropped) leaves the interpreter busy; the next call replaces it the same way.
//! - Output is held with bounded memory: up to [`MEMORY_CAP`] bytes per stream, past that the
//!   first and last [`KEEP_HEAD_TAIL`] bytes (cut between characters) with a note of what was
//!   left out; the result's size limit is Bash's 30,000 characters (larger results are
//!   persisted by the executor).
//! - The interpreters live in [`ReplSessions`], kept in the context's app state; when its last
//!   handle is dropped (the session ends) every interpreter's process group gets SIGKILL.
//!
//! # Permissions
//!
//! The REPL runs arbitrary code, so it is neither read-only nor concurrency-safe and reports
//! itself destructive and open-world. It describes no permission subject: Bash's command
//! rules do not apply to Python or JavaScript source, so it leaves `check_permissions` at its
//! default (passthrough) and the engine decides by tool-wide rules and the mode (the default
//! mode asks; plan mode refuses it).

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStderr, ChildStdout, Command};
use tool_core::{
    CancellationToken, MaxResultSize, ProgressSender, ToolError, ToolResult, ToolResultContent,
    ToolUseContext, TypedTool, async_trait,
};

use crate::bash::KILL_CAP;
pub use crate::bash::{DEFAULT_TIMEOUT_MS, KEEP_HEAD_TAIL, KILL_GRACE, MAX_TIMEOUT_MS};

/// How long the other output stream is still read after one ends (the interpreter exited).
const EXIT_DRAIN: Duration = Duration::from_millis(500);

/// Bytes of one stream of one call kept in memory before only its head and tail are kept.
pub const MEMORY_CAP: usize = 1024 * 1024;

/// The language of a REPL call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// Python 3 (`python3`).
    Python,
    /// JavaScript on Node.js (`node`).
    Node,
}

impl Language {
    /// `python` or `node`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Python => "python",
            Self::Node => "node",
        }
    }

    /// The program looked up on `PATH`.
    pub fn program(self) -> &'static str {
        match self {
            Self::Python => "python3",
            Self::Node => "node",
        }
    }

    fn args(self) -> &'static [&'static str] {
        match self {
            Self::Python => &["-u", "-c", PYTHON_DRIVER],
            // `--expose-internals`: for node's own top-level `await` rewriter (the driver).
            Self::Node => &["--no-warnings", "--expose-internals", "-e", NODE_DRIVER],
        }
    }
}

/// Input of the REPL tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReplInput {
    /// The code to run. State (variables, imports, functions) persists between calls of the
    /// same language; the value of a final expression is printed.
    pub code: String,
    /// The interpreter: "python" (python3) or "node" (Node.js).
    pub language: Language,
}

/// What REPL returns.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ReplOutput {
    /// The language of the call.
    pub language: Language,
    /// What the code wrote to standard output (head and tail when it was too long).
    pub stdout: String,
    /// What the code wrote to standard error (head and tail when it was too long).
    pub stderr: String,
    /// Set when this call started a fresh interpreter because the previous one was lost:
    /// why, for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restarted: Option<String>,
}

/// The REPL tool. See the [module docs](self).
#[derive(Debug, Clone, Copy)]
pub struct Repl {
    timeout: Duration,
}

impl Default for Repl {
    /// A REPL whose calls time out after [`DEFAULT_TIMEOUT_MS`].
    fn default() -> Self {
        Self {
            timeout: Duration::from_millis(DEFAULT_TIMEOUT_MS),
        }
    }
}

impl Repl {
    /// A REPL whose calls time out after `timeout` (between 1 ms and [`MAX_TIMEOUT_MS`]).
    pub fn with_timeout(timeout: Duration) -> Self {
        Self {
            timeout: timeout.clamp(
                Duration::from_millis(1),
                Duration::from_millis(MAX_TIMEOUT_MS),
            ),
        }
    }
}

/// The prompt; it carries the marker `cargo xtask profiles` looks for.
pub const PROMPT: &str = "Runs Python or JavaScript code in a persistent interpreter \
(toolwright-gated-tool:repl).\n\n\
- `language` is \"python\" (python3) or \"node\" (Node.js). Each language has one interpreter \
per session: variables, imports and functions defined in one call are there in the next.\n\
- The value of a final expression is printed, as at an interactive prompt; use print / \
console.log for anything else. Output over 30000 characters is cut.\n\
- An exception makes the call fail with its traceback; the interpreter keeps its state.\n\
- A call times out after 120000 ms by default. A timed-out or interrupted call stops the \
interpreter: the next call starts a fresh one (and says so), with no earlier state.\n\
- Node code runs in a `vm` context: `require` works, and so does top-level `await`, as at \
node's prompt (a promise left as the final value is awaited too).";

/// Why an interpreter stopped, for the note of the next call.
type LostReason = String;

#[derive(Debug)]
struct Interpreter {
    child: Child,
    pgid: i32,
    /// The driver's request channel, its descriptor 3.
    requests: tokio::net::unix::pipe::Sender,
    stdout: ChildStdout,
    stderr: ChildStderr,
    /// Bytes read past the previous call's marker, per stream.
    carry_out: Vec<u8>,
    carry_err: Vec<u8>,
    /// A call was sent and has not finished: the interpreter's streams are not in step.
    busy: bool,
    /// The session directory the interpreter was last moved to (where it started, at
    /// first): when the session's cwd changes (EnterWorktree, ExitWorktree), the next call
    /// moves it there first.
    session_cwd: PathBuf,
}

#[derive(Debug, Default)]
struct Slot {
    interpreter: Option<Interpreter>,
    lost: Option<LostReason>,
}

#[derive(Debug, Default)]
struct SessionsInner {
    slots: tokio::sync::Mutex<HashMap<Language, Slot>>,
}

impl Drop for SessionsInner {
    fn drop(&mut self) {
        for slot in self.slots.get_mut().values() {
            if let Some(interpreter) = &slot.interpreter {
                crate::procs::kill_group(interpreter.pgid, true);
            }
        }
    }
}

/// The REPL interpreters of a session. Cheap to clone (all clones share the interpreters);
/// when the last clone is dropped every interpreter is killed with its process group.
#[derive(Debug, Clone, Default)]
pub struct ReplSessions {
    inner: Arc<SessionsInner>,
}

/// The interpreters of the context's session, created on first use in its app state.
pub fn repl_sessions(ctx: &ToolUseContext) -> ReplSessions {
    ctx.app_state().update::<ReplSessions, _>(|r| r.clone())
}

impl ReplSessions {
    /// No interpreters yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The process group of the running interpreter of `language`, if there is one.
    pub async fn pgid(&self, language: Language) -> Option<i32> {
        self.inner
            .slots
            .lock()
            .await
            .get(&language)
            .and_then(|s| s.interpreter.as_ref())
            .map(|i| i.pgid)
    }
}

#[async_trait]
impl TypedTool for Repl {
    type Input = ReplInput;
    type Output = ReplOutput;
    const NAME: &'static str = "REPL";

    fn description(&self) -> Cow<'_, str> {
        "Runs code in a persistent Python or Node.js interpreter".into()
    }
    fn prompt(&self) -> Cow<'_, str> {
        PROMPT.into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(30_000)
    }
    fn user_facing_name(&self, input: &ReplInput) -> String {
        format!("REPL({})", input.language.as_str())
    }
    fn is_destructive(&self, _input: &ReplInput) -> bool {
        true
    }
    fn is_open_world(&self, _input: &ReplInput) -> bool {
        true
    }

    async fn call(
        &self,
        input: ReplInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<ReplOutput>, ToolError> {
        let language = input.language;
        let sessions = repl_sessions(&ctx);
        let cancel = ctx.cancellation().clone();
        let mut slots = tokio::select! {
            guard = sessions.inner.slots.lock() => guard,
            () = cancel.cancelled() => return Err(ToolError::Cancelled(None)),
        };
        let slot = slots.entry(language).or_default();
        // An interpreter that died between calls, or was left mid-call, is replaced.
        if let Some(mut old) = slot.interpreter.take() {
            match old.child.try_wait() {
                Ok(Some(status)) => {
                    crate::procs::kill_group(old.pgid, true);
                    slot.lost = Some(format!("exited ({status})"));
                }
                _ if old.busy => {
                    terminate(old).await;
                    slot.lost = Some("was stopped: an earlier call was abandoned".to_owned());
                }
                _ => slot.interpreter = Some(old),
            }
        }
        let mut restarted = None;
        if slot.interpreter.is_none() {
            slot.interpreter = Some(spawn(language, ctx.cwd())?);
            restarted = slot.lost.take().map(|why| {
                format!(
                    "[Started a fresh {} interpreter: the previous one {why}. Variables, imports \
                     and definitions from earlier calls are gone.]",
                    language.as_str()
                )
            });
        }
        let Some(interpreter) = slot.interpreter.as_mut() else {
            return Err(ToolError::msg("The interpreter could not be kept"));
        };
        // The session moved (into a worktree, or back): the interpreter follows, keeping
        // its state, so that relative paths mean what the session's other tools mean.
        if interpreter.session_cwd != ctx.cwd() {
            let to = ctx.cwd().to_path_buf();
            let moved = interpreter
                .run_in("", Some(&to), self.timeout, &cancel)
                .await;
            match moved.end {
                End::Done(Status { error: None }) => interpreter.session_cwd = to,
                End::Done(Status { error: Some(error) }) => {
                    // Said once: the next call does not try again (and fail the same way).
                    interpreter.session_cwd = to.clone();
                    return Err(ToolError::msg(format!(
                        "The {} interpreter could not move to the session's directory {}: {}",
                        language.as_str(),
                        to.display(),
                        error.trim()
                    )));
                }
                _ => {
                    if let Some(old) = slot.interpreter.take() {
                        terminate(old).await;
                    }
                    slot.lost = Some("stopped while moving to the session's directory".to_owned());
                    return Err(ToolError::msg(format!(
                        "The {} interpreter stopped while moving to the session's directory {}; \
                         the next call starts a fresh one",
                        language.as_str(),
                        to.display()
                    )));
                }
            }
        }
        let run = interpreter.run(&input.code, self.timeout, &cancel).await;
        let prefix = |text: String| match &restarted {
            Some(note) if text.is_empty() => note.clone(),
            Some(note) => format!("{note}\n{text}"),
            None => text,
        };
        match run.end {
            End::Done(status) => match status.error {
                None => Ok(ToolResult::new(ReplOutput {
                    language,
                    stdout: run.stdout,
                    stderr: run.stderr,
                    restarted,
                })),
                Some(error) => Err(ToolError::msg(prefix(join(&[
                    &run.stdout,
                    &run.stderr,
                    &error,
                ])))),
            },
            End::Exited => {
                let code = match slot.interpreter.take() {
                    Some(mut gone) => {
                        let status = tokio::time::timeout(KILL_GRACE, gone.child.wait()).await;
                        let text = match status {
                            Ok(Ok(status)) => status.to_string(),
                            _ => "its output closed".to_owned(),
                        };
                        terminate(gone).await;
                        text
                    }
                    None => "unknown status".to_owned(),
                };
                slot.lost = Some(format!("exited ({code})"));
                Err(ToolError::msg(prefix(join(&[
                    &run.stdout,
                    &run.stderr,
                    &format!(
                        "The {} interpreter exited ({code}); the next call starts a fresh one.",
                        language.as_str()
                    ),
                ]))))
            }
            End::TimedOut | End::Cancelled | End::OutputCap => {
                if let Some(stopped) = slot.interpreter.take() {
                    terminate(stopped).await;
                }
                let (lost, note) = match run.end {
                    End::TimedOut => (
                        format!("timed out after {} ms", self.timeout.as_millis()),
                        format!(
                            "The call timed out after {} ms; the {} interpreter was stopped and \
                             its state is lost. The next call starts a fresh one.",
                            self.timeout.as_millis(),
                            language.as_str()
                        ),
                    ),
                    End::OutputCap => (
                        "was stopped: its output passed the limit".to_owned(),
                        format!(
                            "The {} interpreter was stopped: the call's output passed {} GiB. \
                             The next call starts a fresh one.",
                            language.as_str(),
                            KILL_CAP / (1024 * 1024 * 1024)
                        ),
                    ),
                    _ => (
                        "was stopped when a call was interrupted".to_owned(),
                        String::new(),
                    ),
                };
                slot.lost = Some(lost);
                if matches!(run.end, End::Cancelled) {
                    return Err(ToolError::Cancelled(None));
                }
                Err(ToolError::msg(prefix(join(&[
                    &run.stdout,
                    &run.stderr,
                    &note,
                ]))))
            }
        }
    }

    fn to_content(&self, output: &ReplOutput) -> ToolResultContent {
        let mut parts: Vec<&str> = Vec::new();
        if let Some(note) = &output.restarted {
            parts.push(note);
        }
        parts.push(&output.stdout);
        parts.push(&output.stderr);
        ToolResultContent::Text(join(&parts))
    }
}

/// The non-empty parts, each without trailing whitespace, one per line.
fn join(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|p| p.trim_end())
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

fn spawn(language: Language, cwd: &Path) -> Result<Interpreter, ToolError> {
    spawn_program(language, language.program(), cwd)
}

fn spawn_program(language: Language, program: &str, cwd: &Path) -> Result<Interpreter, ToolError> {
    if !cwd.is_dir() {
        return Err(ToolError::msg(format!(
            "Cannot start the {} interpreter: the working directory {} does not exist",
            language.as_str(),
            cwd.display()
        )));
    }
    // Requests go on descriptor 3, not stdin: the code and whatever it starts (a child
    // with `stdio: 'inherit'`, `input()`) read an empty stdin and can never eat a request.
    let (requests_in, requests_out) =
        std::io::pipe().map_err(|e| ToolError::msg(format!("Could not start {program}: {e}")))?;
    let mut cmd = Command::new(program);
    // The model's code reads its environment as a Bash command does.
    tool_core::process::scrub_credentials(cmd.as_std_mut());
    cmd.args(language.args())
        .current_dir(cwd)
        .env("PYTHONIOENCODING", "utf-8")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    tool_core::process::detach_from_terminal(cmd.as_std_mut());
    tool_core::process::pass_fd(cmd.as_std_mut(), requests_in.into(), 3);
    let spawned = cmd.spawn();
    // The parent's copy of the read end goes with the command.
    drop(cmd);
    let mut child = spawned.map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            ToolError::msg(format!(
                "{program} was not found on PATH: the REPL needs it to run {} code",
                language.as_str()
            ))
        } else {
            ToolError::msg(format!("Could not start {program}: {e}"))
        }
    })?;
    let requests = tokio::net::unix::pipe::Sender::from_owned_fd(requests_out.into())
        .map_err(|e| ToolError::msg(format!("Could not start {program}: {e}")))?;
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    let (Some(pgid), Some(stdout), Some(stderr)) = (pgid, child.stdout.take(), child.stderr.take())
    else {
        return Err(ToolError::msg(format!(
            "{program} exited as soon as it started"
        )));
    };
    Ok(Interpreter {
        child,
        pgid,
        requests,
        stdout,
        stderr,
        carry_out: Vec::new(),
        carry_err: Vec::new(),
        busy: false,
        session_cwd: cwd.to_path_buf(),
    })
}

/// SIGTERM to the group, SIGKILL after [`KILL_GRACE`] unless the whole group is gone by then
/// (not only the interpreter), reap the interpreter and wait until nothing of its group is
/// left ([`terminate_command`](crate::procs::terminate_command)).
async fn terminate(mut interpreter: Interpreter) {
    crate::procs::terminate_command(&mut interpreter.child, interpreter.pgid, None, KILL_GRACE)
        .await;
}

static MARKER_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A marker no code can predict: two random 64-bit words.
fn new_marker() -> String {
    let word = || {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(MARKER_COUNTER.fetch_add(1, Ordering::Relaxed));
        hasher.finish()
    };
    format!("__toolwright_repl_{:016x}{:016x}__", word(), word())
}

/// The driver's report at the end of a call.
#[derive(Debug, Default, Deserialize)]
struct Status {
    #[serde(default)]
    error: Option<String>,
}

#[derive(Debug)]
enum End {
    Done(Status),
    /// The interpreter closed its output (it exited) before finishing the call.
    Exited,
    TimedOut,
    Cancelled,
    OutputCap,
}

#[derive(Debug)]
struct Run {
    end: End,
    stdout: String,
    stderr: String,
}

impl Interpreter {
    /// Sends `code` and collects its output until both markers arrive, the deadline passes,
    /// the call is cancelled or the interpreter closes its output.
    async fn run(&mut self, code: &str, timeout: Duration, cancel: &CancellationToken) -> Run {
        self.run_in(code, None, timeout, cancel).await
    }

    /// [`run`](Self::run), after the driver moves the interpreter to `cwd` (with its own
    /// `os`/`process`, which the code cannot have shadowed).
    async fn run_in(
        &mut self,
        code: &str,
        cwd: Option<&Path>,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Run {
        let marker = new_marker();
        let mut request = serde_json::json!({"code": code, "marker": marker});
        if let Some(cwd) = cwd {
            request["cwd"] = serde_json::Value::from(cwd.to_string_lossy());
        }
        let mut request = request.to_string();
        request.push('\n');
        self.busy = true;
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        let mut out = Stream::new(std::mem::take(&mut self.carry_out), marker.as_bytes());
        let mut err = Stream::new(std::mem::take(&mut self.carry_err), marker.as_bytes());
        let end = {
            let Self {
                requests,
                stdout,
                stderr,
                ..
            } = &mut *self;
            let mut sent = false;
            let write = async {
                requests.write_all(request.as_bytes()).await?;
                requests.flush().await
            };
            tokio::pin!(write);
            let mut out_buf = vec![0u8; 64 * 1024];
            let mut err_buf = vec![0u8; 64 * 1024];
            // Once one stream ends (the interpreter exited), what the other still holds is
            // read for a moment before giving up on it.
            let (mut out_eof, mut err_eof) = (false, false);
            let mut drain_until: Option<tokio::time::Instant> = None;
            loop {
                if out.done && err.done {
                    break End::Done(out.status());
                }
                if (out_eof || out.done) && (err_eof || err.done) {
                    break End::Exited;
                }
                let drain_at = drain_until;
                tokio::select! {
                    written = &mut write, if !sent => {
                        sent = true;
                        // A closed channel means the interpreter is gone; its output (end
                        // of file) says the rest.
                        let _ = written;
                    }
                    n = read_some(stdout, &mut out_buf), if !out.done && !out_eof => match n {
                        Some(n) => out.feed(&out_buf[..n]),
                        None => {
                            out_eof = true;
                            drain_until.get_or_insert_with(|| tokio::time::Instant::now() + EXIT_DRAIN);
                        }
                    },
                    n = read_some(stderr, &mut err_buf), if !err.done && !err_eof => match n {
                        Some(n) => err.feed(&err_buf[..n]),
                        None => {
                            err_eof = true;
                            drain_until.get_or_insert_with(|| tokio::time::Instant::now() + EXIT_DRAIN);
                        }
                    },
                    () = tokio::time::sleep_until(drain_at.unwrap_or_else(tokio::time::Instant::now)), if drain_at.is_some() => {
                        break End::Exited;
                    }
                    () = &mut deadline => break End::TimedOut,
                    () = cancel.cancelled() => break End::Cancelled,
                }
                if out.capture.total + err.capture.total > KILL_CAP {
                    break End::OutputCap;
                }
            }
        };
        if matches!(end, End::Done(_)) {
            self.busy = false;
            self.carry_out = std::mem::take(&mut out.rest);
            self.carry_err = std::mem::take(&mut err.rest);
        }
        Run {
            end,
            stdout: out.finish(),
            stderr: err.finish(),
        }
    }
}

async fn read_some(pipe: &mut (impl AsyncRead + Unpin), buf: &mut [u8]) -> Option<usize> {
    match pipe.read(buf).await {
        Ok(0) | Err(_) => None,
        Ok(n) => Some(n),
    }
}

/// One stream of one call: looks for the marker and keeps what came before it.
#[derive(Debug)]
struct Stream<'m> {
    marker: &'m [u8],
    /// Bytes not yet known to be output (they may start the marker).
    scan: Vec<u8>,
    capture: Capture,
    done: bool,
    /// The marker was found: the status line is being read.
    in_status: bool,
    /// What followed the marker on its line (at most [`STATUS_CAP`] bytes of it).
    status_line: Vec<u8>,
    /// The status line was longer than [`STATUS_CAP`].
    status_cut: bool,
    /// What followed the marker's line.
    rest: Vec<u8>,
}

/// The most of a status line that is kept. The drivers shorten a long traceback before
/// sending it; this bounds what a status that is somehow longer can take.
const STATUS_CAP: usize = 1024 * 1024;

impl<'m> Stream<'m> {
    fn new(carried: Vec<u8>, marker: &'m [u8]) -> Self {
        let mut stream = Self {
            marker,
            scan: Vec::new(),
            capture: Capture::default(),
            done: false,
            in_status: false,
            status_line: Vec::new(),
            status_cut: false,
            rest: Vec::new(),
        };
        stream.feed(&carried);
        stream
    }

    fn feed(&mut self, bytes: &[u8]) {
        if self.in_status {
            // Only the new bytes are searched for the line's end; the line is kept bounded.
            let (line, rest) = match memchr::memchr(b'\n', bytes) {
                Some(nl) => (&bytes[..nl], Some(&bytes[nl + 1..])),
                None => (bytes, None),
            };
            let room = STATUS_CAP - self.status_line.len();
            self.status_cut |= line.len() > room;
            self.status_line
                .extend_from_slice(&line[..line.len().min(room)]);
            if let Some(rest) = rest {
                self.rest = rest.to_vec();
                self.done = true;
            }
            return;
        }
        self.scan.extend_from_slice(bytes);
        if let Some(pos) = memchr::memmem::find(&self.scan, self.marker) {
            let after = pos + self.marker.len();
            self.capture.push(&self.scan[..pos]);
            let status = self.scan.split_off(after);
            self.scan.clear();
            self.in_status = true;
            self.feed(&status);
            return;
        }
        let keep = self.marker.len().saturating_sub(1);
        if self.scan.len() > keep {
            let cut = self.scan.len() - keep;
            self.capture.push(&self.scan[..cut]);
            self.scan.drain(..cut);
        }
    }

    fn status(&self) -> Status {
        let line = String::from_utf8_lossy(&self.status_line);
        if self.status_cut {
            let head: String = line.chars().take(2_000).collect();
            return Status {
                error: Some(format!(
                    "The REPL driver sent a status line over {} MiB; its start: {head}",
                    STATUS_CAP / (1024 * 1024)
                )),
            };
        }
        serde_json::from_str(line.trim()).unwrap_or_else(|e| Status {
            error: Some(format!(
                "The REPL driver sent an unreadable status ({e}): {line}"
            )),
        })
    }

    fn finish(&mut self) -> String {
        if !self.done {
            // Cut short: what was still held back is output too.
            let held = std::mem::take(&mut self.scan);
            self.capture.push(&held);
        }
        std::mem::take(&mut self.capture).finish()
    }
}

/// Bounded capture: everything up to [`MEMORY_CAP`], then the head and the tail.
#[derive(Debug, Default)]
struct Capture {
    head: Vec<u8>,
    tail: Vec<u8>,
    total: u64,
    overflowed: bool,
}

impl Capture {
    fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if !self.overflowed && self.head.len() + bytes.len() <= MEMORY_CAP {
            self.head.extend_from_slice(bytes);
            return;
        }
        if !self.overflowed {
            self.overflowed = true;
            self.tail = self.head[self.head.len().saturating_sub(KEEP_HEAD_TAIL)..].to_vec();
            self.head.truncate(KEEP_HEAD_TAIL);
        }
        self.tail.extend_from_slice(bytes);
        if self.tail.len() > 2 * KEEP_HEAD_TAIL {
            self.tail.drain(..self.tail.len() - KEEP_HEAD_TAIL);
        }
    }

    fn finish(self) -> String {
        if !self.overflowed {
            return String::from_utf8_lossy(&self.head).into_owned();
        }
        // The head and tail were cut at byte counts: a character they split is left out (and
        // counted as omitted), not shown as U+FFFD.
        let head = &self.head[..self.head.len() - crate::fsutil::incomplete_utf8_tail(&self.head)];
        let tail = &self.tail[self.tail.len().saturating_sub(KEEP_HEAD_TAIL)..];
        let tail = &tail[crate::fsutil::partial_utf8_head(tail)..];
        let omitted = self.total.saturating_sub((head.len() + tail.len()) as u64);
        format!(
            "{}\n\n... [{omitted} bytes of output omitted] ...\n\n{}",
            String::from_utf8_lossy(head),
            String::from_utf8_lossy(tail)
        )
    }
}

/// The Python driver (see the module docs). It reads requests from descriptor 3, which the
/// code's children do not inherit; stdin is /dev/null.
const PYTHON_DRIVER: &str = r#"
import ast, json, linecache, os, sys, traceback

def _tw_write(fd, text):
    data = text.encode("utf-8", "replace")
    while data:
        data = data[os.write(fd, data):]

def _tw_main():
    os.set_inheritable(3, False)
    proto = os.fdopen(3, "rb")
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    n = 0
    while True:
        line = proto.readline()
        if not line:
            return
        request = json.loads(line)
        n += 1
        name = "<repl-%d>" % n
        code = request["code"]
        linecache.cache[name] = (len(code), None, code.splitlines(True), name)
        status = {"ok": True}
        try:
            if "cwd" in request:
                os.chdir(request["cwd"])
            tree = ast.parse(code, name, "exec")
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            exec(compile(tree, name, "exec"), namespace)
            if last is not None:
                sys.displayhook(eval(compile(last, name, "eval"), namespace))
        except BaseException as e:
            tb = e.__traceback__
            while tb is not None and not tb.tb_frame.f_code.co_filename.startswith("<repl-"):
                tb = tb.tb_next
            error = "".join(traceback.format_exception(type(e), e, tb))
            if len(error) > 20000:
                # The host keeps 10,000 characters: a huge message is cut here, not carried.
                error = error[:10000] + "\n... [traceback cut] ...\n" + error[-10000:]
            status = {"ok": False, "error": error}
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                stream.flush()
            except Exception:
                pass
        marker = request["marker"]
        _tw_write(2, marker + "\n")
        _tw_write(1, marker + " " + json.dumps(status) + "\n")

_tw_main()
"#;

/// The Node driver (see the module docs): the code runs in one `vm` context holding Node's
/// usual globals and `require`; code with a top-level `await` first goes through node's own
/// prompt's rewriter, where this node has it.
const NODE_DRIVER: &str = r#"
(() => {
  'use strict';
  const vm = require('vm');
  const util = require('util');
  const sandbox = {};
  for (const k of ['console', 'process', 'Buffer', 'URL', 'URLSearchParams', 'TextEncoder',
    'TextDecoder', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate',
    'clearImmediate', 'queueMicrotask', 'structuredClone', 'fetch', 'AbortController',
    'AbortSignal', 'Blob', 'performance', 'crypto', 'atob', 'btoa', 'EventTarget', 'Event']) {
    if (k in globalThis) sandbox[k] = globalThis[k];
  }
  sandbox.require = require;
  sandbox.module = { exports: {} };
  sandbox.exports = sandbox.module.exports;
  sandbox.global = sandbox;
  vm.createContext(sandbox);
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  const describe = (e) => {
    if (e && typeof e.stack === 'string') {
      return e.stack.split('\n')
        .filter((l) => !/^\s+at /.test(l) || l.includes('<repl-'))
        .join('\n') + '\n';
    }
    return 'Uncaught ' + util.inspect(e) + '\n';
  };
  // Node's prompt runs code with a top-level `await` as an async function whose top-level
  // declarations it hoists out (to `let` and `var` declarations of the script, and `this.f =
  // f` for a function), so that they persist; its rewriter, where this node has one to give.
  let processTopLevelAwait = null;
  try {
    ({ processTopLevelAwait } = require('internal/repl/await'));
  } catch (e) {}
  let n = 0;
  const run = async (line) => {
    let request;
    try { request = JSON.parse(line); } catch (e) { return; }
    const status = { ok: true };
    try {
      if (typeof request.cwd === 'string') process.chdir(request.cwd);
      let code = request.code;
      let wrapped = false;
      let rewriteError = null;
      if (processTopLevelAwait && code.includes('await')) {
        try {
          // With a line end, as the prompt hands it a line: the wrapper it adds closes on
          // the last line, which a `//` comment there would otherwise take in.
          const rewritten = processTopLevelAwait(code + '\n');
          if (rewritten !== null) {
            code = rewritten;
            wrapped = true;
          }
        } catch (e) {
          // Not parsable so: the code runs as written (a script where `await` is a name);
          // if that fails to parse too, the rewriter's error, which names the fault, is
          // the one said, not V8's "await is only valid in async functions".
          rewriteError = e;
        }
      }
      let value;
      try {
        value = vm.runInContext(code, sandbox, { filename: '<repl-' + (++n) + '>' });
      } catch (e) {
        if (rewriteError && e && e.name === 'SyntaxError') throw rewriteError;
        throw e;
      }
      // The rewritten code's function returns `{ value }` for a final expression (node's
      // shape), else nothing.
      if (wrapped) value = ((await value) || {}).value;
      if (value !== null && (typeof value === 'object' || typeof value === 'function')
          && typeof value.then === 'function') {
        value = await value;
      }
      if (value !== undefined) out(util.inspect(value) + '\n');
    } catch (e) {
      status.ok = false;
      let error = describe(e);
      // The host keeps 10,000 characters: a huge message is cut here, not carried.
      if (error.length > 20000) {
        // Not half a surrogate pair at either cut (JSON would carry it, and it would not
        // read back).
        error = error.slice(0, 10000).replace(/[\uD800-\uDBFF]$/, '')
          + '\n... [traceback cut] ...\n'
          + error.slice(-10000).replace(/^[\uDC00-\uDFFF]/, '');
      }
      status.error = error;
    }
    err(request.marker + '\n');
    out(request.marker + ' ' + JSON.stringify(status) + '\n');
  };
  const queue = [];
  let buffered = '';
  let busy = false;
  const pump = async () => {
    if (busy) return;
    busy = true;
    while (queue.length) await run(queue.shift());
    busy = false;
  };
  process.on('uncaughtException', (e) => err('Uncaught ' + describe(e)));
  process.on('unhandledRejection', (e) => err('Unhandled rejection: ' + describe(e)));
  // Requests come on descriptor 3 (stdin is /dev/null, for the code and its children).
  const requests = new (require('net').Socket)({ fd: 3, readable: true, writable: false });
  requests.setEncoding('utf8');
  requests.on('data', (chunk) => {
    buffered += chunk;
    let i;
    while ((i = buffered.indexOf('\n')) >= 0) {
      queue.push(buffered.slice(0, i));
      buffered = buffered.slice(i + 1);
    }
    pump();
  });
  requests.on('end', () => process.exit(0));
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_line_is_kept_bounded() {
        let marker = b"__m__";
        let mut s = Stream::new(Vec::new(), marker);
        s.feed(b"out __m__ {\"ok\": false, \"error\": \"");
        let chunk = vec![b'x'; 64 * 1024];
        for _ in 0..40 {
            s.feed(&chunk);
        }
        assert!(!s.done);
        assert!(s.status_line.len() <= STATUS_CAP);
        s.feed(b"\"}\nnext");
        assert!(s.done);
        assert_eq!(s.rest, b"next");
        let error = s.status().error.unwrap();
        assert!(
            error.starts_with("The REPL driver sent a status line over 1 MiB; its start:"),
            "{}",
            &error[..200]
        );
        assert_eq!(s.finish(), "out ");
    }

    #[test]
    fn stream_splits_at_the_marker_across_chunks() {
        let marker = b"__m__";
        let mut s = Stream::new(b"left over\n".to_vec(), marker);
        s.feed(b"hello __");
        assert!(!s.done);
        s.feed(b"m__ {\"ok\": true}");
        assert!(!s.done, "the status line is not complete yet");
        s.feed(b"\nlater");
        assert!(s.done);
        assert_eq!(s.status().error, None);
        assert_eq!(s.rest, b"later");
        assert_eq!(s.finish(), "left over\nhello ");
    }

    #[test]
    fn capture_keeps_head_and_tail() {
        let mut c = Capture::default();
        c.push(&vec![b'a'; MEMORY_CAP]);
        c.push(&vec![b'b'; MEMORY_CAP]);
        let text = c.finish();
        assert!(text.starts_with(&"a".repeat(KEEP_HEAD_TAIL)));
        assert!(text.ends_with(&"b".repeat(KEEP_HEAD_TAIL)));
        let omitted = 2 * MEMORY_CAP - 2 * KEEP_HEAD_TAIL;
        assert!(text.contains(&format!("[{omitted} bytes of output omitted]")));
    }

    #[test]
    fn a_missing_program_is_a_clear_error() {
        let err = spawn_program(
            Language::Python,
            "toolwright-no-such-python",
            Path::new("/"),
        )
        .unwrap_err();
        assert_eq!(
            err.to_model_text(),
            "toolwright-no-such-python was not found on PATH: the REPL needs it to run python code"
        );
    }
}
