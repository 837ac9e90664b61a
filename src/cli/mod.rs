//! The subcommands, and the replay loop they share.

/// `print!` to standard output, except that a closed output (`toolwright agent ... | head`)
/// is no panic: what follows is dropped, and the run goes on to its end (its SessionEnd
/// hooks, its transcript).
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::write_out(format_args!($($arg)*)) };
}

/// `println!` with [`out!`]'s handling of a closed output.
macro_rules! outln {
    () => { $crate::cli::write_out(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::cli::write_out(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `eprint!`, except that a failed write to standard error (a closed pipe) is no panic: the
/// text is dropped and the run goes on. Every write to standard error in the binary goes
/// through this or [`eoutln!`]: a panic in a signal watcher or in the middle of a run would
/// leave it unable to stop or to clean up.
macro_rules! eout {
    ($($arg:tt)*) => { $crate::cli::write_err(format_args!($($arg)*)) };
}

/// `eprintln!` with [`eout!`]'s handling of a failed write.
macro_rules! eoutln {
    () => { $crate::cli::write_err(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::cli::write_err_line(&format!($($arg)*)) };
}

pub mod agent;
pub mod demo;
pub mod permissions;
pub mod run;
pub mod serve;
pub mod tools;
pub mod trust;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use futures::StreamExt;
use tool_exec::{CallOutcome, ExecutorConfig, ExecutorEvent, StreamingToolExecutor, ToolUse};

use crate::session::Session;
use crate::turn::{Turn, TurnItem};

/// Whether standard output was found closed (nothing more is written to it).
static OUTPUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The first failure to write standard output other than a closed pipe (a full disk, a
/// closed descriptor): what was printed is incomplete, which the exit status must say.
static OUTPUT_FAILURE: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// The writes to one of the standard streams: how many are in progress (waiting for the
/// stream's lock or in the write itself), and how many bytes they have written so far.
/// [`exit_when_output_stalls_after_a_signal`] watches them: a write that stays in progress
/// without moving is one nobody reads.
struct OutputWrites {
    pending: std::sync::atomic::AtomicUsize,
    written: std::sync::atomic::AtomicU64,
}

/// The writes to standard output ([`write_out`]).
static STDOUT_WRITES: OutputWrites = OutputWrites::new();

/// The writes to standard error ([`write_err`]).
static STDERR_WRITES: OutputWrites = OutputWrites::new();

/// How much one write hands the stream at most, so that the written count moves as soon
/// as a reader has made this much room, however long the text. A pipe write of up to
/// `PIPE_BUF` bytes (4,096 on Linux, 512 on macOS) is atomic: it waits until there is room
/// for all of it, so a piece that size would move only after the reader took that much.
/// (A Linux pipe still frees its room a page of 4 KiB at a time, which
/// [`OUTPUT_STALL_GRACE`] allows for.)
const WRITE_PIECE: usize = 512;

impl OutputWrites {
    const fn new() -> Self {
        Self {
            pending: std::sync::atomic::AtomicUsize::new(0),
            written: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Writes `text` whole to the stream `lock` opens, in pieces of [`WRITE_PIECE`] bytes,
    /// counted as they go.
    fn write<W: std::io::Write>(
        &self,
        lock: impl FnOnce() -> W,
        text: &[u8],
    ) -> std::io::Result<()> {
        use std::sync::atomic::Ordering;
        self.pending.fetch_add(1, Ordering::SeqCst);
        let mut out = lock();
        let mut rest = text;
        let result = loop {
            if rest.is_empty() {
                break Ok(());
            }
            match out.write(&rest[..rest.len().min(WRITE_PIECE)]) {
                Ok(0) => break Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.written.fetch_add(n as u64, Ordering::SeqCst);
                    rest = &rest[n..];
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        drop(out);
        self.pending.fetch_sub(1, Ordering::SeqCst);
        result
    }

    /// Whether a write is in progress, and the bytes written so far.
    fn state(&self) -> (bool, u64) {
        use std::sync::atomic::Ordering;
        (
            self.pending.load(Ordering::SeqCst) > 0,
            self.written.load(Ordering::SeqCst),
        )
    }
}

/// How long, once a signal came, a write to standard output or standard error may stay in
/// progress without moving before the command exits without the rest
/// ([`exit_when_output_stalls_after_a_signal`]): long enough for a reader of 1 KiB a second
/// to free a pipe's page of 4 KiB.
pub(crate) const OUTPUT_STALL_GRACE: Duration = Duration::from_secs(5);

/// Ends the command when, after a signal, a write to standard output or standard error has
/// not moved for [`OUTPUT_STALL_GRACE`] (the reader of a pipe that does not read, a pager
/// left on its page): the results cannot reach anyone, and the write would hold the run
/// for ever, past the signal that asked it to end. It says so on standard error (if that can
/// be written), kills the commands it started, and exits with the last signal's status.
/// Output that moves at least once every [`OUTPUT_STALL_GRACE`] (a piece of at most
/// [`WRITE_PIECE`] bytes) is waited for, however long it takes in all.
pub(crate) fn exit_when_output_stalls_after_a_signal() {
    watch_signals(|mut signals| async move {
        let mut code = signals.next().await;
        // Per stream: the bytes written when it last moved (or had no write in progress),
        // and when.
        let mut moved = [&STDOUT_WRITES, &STDERR_WRITES].map(|w| (w.state().1, Instant::now()));
        loop {
            tokio::select! {
                next = signals.next() => code = next,
                () = tokio::time::sleep(Duration::from_millis(100)) => {}
            }
            let streams = [
                (&STDOUT_WRITES, "standard output"),
                (&STDERR_WRITES, "standard error"),
            ];
            for ((writes, stream), last) in streams.into_iter().zip(&mut moved) {
                let (pending, written) = writes.state();
                if !pending || written != last.0 {
                    *last = (written, Instant::now());
                } else if last.1.elapsed() >= OUTPUT_STALL_GRACE {
                    last_words(format!(
                        "toolwright: nothing is reading {stream} (a write to it has not moved for {} s since the signal): exiting without the results not yet printed",
                        OUTPUT_STALL_GRACE.as_secs()
                    ));
                    exit_on_the_spot(code);
                }
            }
        }
    });
}

/// The runtime of a thread of its own (a current-thread runtime) where what must act on a
/// signal runs ([`watch_signals`]): the command's own runtime may have none of its workers
/// free (each held by a call stuck in a system call, such as a read of a path on a hung
/// network mount), or its main thread may be blocked (a session that cannot open), and then
/// neither the signal nor a timer would be seen there. `None` when the thread could not
/// be started.
fn signal_runtime() -> Option<&'static tokio::runtime::Handle> {
    static RUNTIME: std::sync::OnceLock<Option<tokio::runtime::Handle>> =
        std::sync::OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            let (handle_tx, handle_rx) = std::sync::mpsc::channel();
            std::thread::Builder::new()
                .name("toolwright-signals".to_owned())
                .spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build();
                    match runtime {
                        Ok(runtime) => {
                            let _ = handle_tx.send(Some(runtime.handle().clone()));
                            // Runs the watchers spawned on it for as long as the process does.
                            runtime.block_on(std::future::pending::<()>());
                        }
                        Err(_) => {
                            let _ = handle_tx.send(None);
                        }
                    }
                })
                .ok()?;
            handle_rx.recv().ok().flatten()
        })
        .as_ref()
}

/// Runs `watch` with the signal handlers installed (before this returns), on the thread of
/// [`signal_runtime`], else (that thread could not be started) as a task of the current
/// runtime. The first call also starts [`take_signals_no_thread_takes`].
fn watch_signals<F>(watch: impl FnOnce(Signals) -> F)
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    match signal_runtime() {
        Some(runtime) => {
            let signals = {
                let _entered = runtime.enter();
                Signals::install()
            };
            runtime.spawn(watch(signals));
        }
        None => {
            tokio::spawn(watch(Signals::install()));
        }
    }
    // Once the handlers are installed.
    #[cfg(target_os = "linux")]
    {
        static TAKING: std::sync::Once = std::sync::Once::new();
        TAKING.call_once(take_signals_no_thread_takes);
    }
}

/// Delivers again, on a thread of its own, each signal that ends a command (SIGINT,
/// SIGTERM, SIGHUP) as soon as it is sent: the kernel hands a signal sent to the process to
/// one of its threads, the main thread first, and one blocked in a wait that only a fatal
/// signal ends (a `mkdir` or a `stat` on a hung FUSE or network mount) never takes it, nor
/// does any other thread, so the handlers would never run. The thread waits on a
/// `signalfd`, which takes the signal off the process's queue, and raises it on itself,
/// where the handler runs at once; one another thread took first is not there any more.
/// The thread ends when the `signalfd` cannot be made or read.
#[cfg(target_os = "linux")]
fn take_signals_no_thread_takes() {
    use nix::sys::signal::{SigSet, Signal, raise};
    use nix::sys::signalfd::{SfdFlags, SignalFd};
    let mut ending = SigSet::empty();
    for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        ending.add(signal);
    }
    let Ok(queue) = SignalFd::with_flags(&ending, SfdFlags::SFD_CLOEXEC) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("toolwright-signal-queue".to_owned())
        .spawn(move || {
            loop {
                match queue.read_signal() {
                    Ok(Some(taken)) => {
                        let signal = i32::try_from(taken.ssi_signo)
                            .ok()
                            .and_then(|n| Signal::try_from(n).ok());
                        if let Some(signal) = signal {
                            let _ = raise(signal);
                        }
                    }
                    // Taken by this thread's handler while it waited.
                    Ok(None) | Err(nix::errno::Errno::EINTR) => {}
                    Err(_) => return,
                }
            }
        });
}

/// The exit status of the first signal the last resort saw ([`exit_at_the_latest_after_a_signal`]);
/// 0: none yet.
static FIRST_SIGNAL: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Told of a signal another watcher took first ([`note_signal`]), which the last resort's
/// own handlers, installed after it, did not see.
static SIGNAL_NOTED: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// The exit status of the first signal since [`exit_at_the_latest_after_a_signal`] was
/// armed, if one came: a command whose work failed after a signal (a session that could not
/// open once its hung mount failed) exits with the signal's status, as the signal asked.
pub(crate) fn signal_received() -> Option<u8> {
    match FIRST_SIGNAL.load(std::sync::atomic::Ordering::SeqCst) {
        0 => None,
        code => Some(code),
    }
}

/// Tells the last resort of a signal `code` a watcher of the command took: its clock starts
/// then, if it has not started already.
fn note_signal(code: u8) {
    use std::sync::atomic::Ordering;
    if FIRST_SIGNAL
        .compare_exchange(0, code, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
    {
        SIGNAL_NOTED.notify_one();
    }
}

/// Arms the last resort of a command that ends on its first signal (`run`, `demo`): from
/// then on, a second signal exits at once, and [`STUCK_CALLS_GRACE`] after the first the
/// command exits whatever holds it, saying so on standard error. Both exit on the spot
/// ([`exit_on_the_spot`]: the commands and servers it started are killed, the session's
/// empty directory removed) with the last signal's status. It runs on a thread of its own
/// ([`signal_runtime`]), so that nothing the command's runtime is stuck in (every worker
/// held by a call stuck in a system call, the main thread by a session that cannot open)
/// keeps it from acting. Arming it again does nothing.
pub(crate) fn exit_at_the_latest_after_a_signal() {
    static ARMED: std::sync::Once = std::sync::Once::new();
    ARMED.call_once(|| {
        watch_signals(|mut signals| async move {
            use std::sync::atomic::Ordering;
            // The handlers' own first: a signal another watcher saw and noted is pending
            // here too, unless it came before these handlers were installed.
            let code = tokio::select! {
                biased;
                code = signals.next() => {
                    let _ = FIRST_SIGNAL.compare_exchange(0, code, Ordering::SeqCst, Ordering::SeqCst);
                    code
                }
                () = SIGNAL_NOTED.notified() => {
                    let code = FIRST_SIGNAL.load(Ordering::SeqCst);
                    // The same signal delivered again at once is the same press.
                    signals.last = Some((code, Instant::now()));
                    code
                }
            };
            // A second signal exits at once: what the destructors would have ended (a
            // command still in its grace period, an MCP server) is killed first. So does the
            // end of the last grace: the executor answers calls stuck in a system call that
            // never returns (a `realpath` or a read of a path on a hung network mount)
            // itself, but something else could still hold the run.
            let code = tokio::select! {
                code = signals.next() => code,
                () = tokio::time::sleep(STUCK_CALLS_GRACE) => {
                    // What holds it, when that is known: a write nobody reads.
                    let stuck = if STDOUT_WRITES.state().0 {
                        "a write to its standard output has not returned: nothing is reading it"
                    } else if STDERR_WRITES.state().0 {
                        "a write to its standard error has not returned: nothing is reading it"
                    } else {
                        "something is stuck in a system call that does not return, such as a read of a path on a hung network mount"
                    };
                    last_words(format!(
                        "toolwright: the run did not end within {} s of the signal ({stuck}): exiting without the results not yet printed",
                        STUCK_CALLS_GRACE.as_secs()
                    ));
                    code
                }
            };
            exit_on_the_spot(code);
        });
    });
}

/// What an exit on the spot does first ([`before_exiting_on_the_spot`]), by the number it
/// was registered with.
type ExitActions = Vec<(u64, Box<dyn Fn() + Send + Sync>)>;

/// The actions registered with [`before_exiting_on_the_spot`] and not yet withdrawn.
static EXIT_ACTIONS: std::sync::Mutex<ExitActions> = std::sync::Mutex::new(Vec::new());

fn exit_actions() -> std::sync::MutexGuard<'static, ExitActions> {
    EXIT_ACTIONS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Registers `action` (killing a session's background tasks) for [`exit_on_the_spot`] to
/// run first, as the destructors it skips would have, until the guard returned is dropped
/// (what the action holds goes with it).
#[must_use = "the action is withdrawn when the guard is dropped"]
pub(crate) fn before_exiting_on_the_spot(action: impl Fn() + Send + Sync + 'static) -> ExitAction {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    exit_actions().push((id, Box::new(action)));
    ExitAction(id)
}

/// An action registered with [`before_exiting_on_the_spot`], withdrawn when dropped.
pub(crate) struct ExitAction(u64);

impl Drop for ExitAction {
    fn drop(&mut self) {
        // Taken out first: the action is dropped once the lock is released.
        let withdrawn = {
            let mut actions = exit_actions();
            actions
                .iter()
                .position(|(id, _)| *id == self.0)
                .map(|at| actions.remove(at))
        };
        drop(withdrawn);
    }
}

/// How long [`exit_on_the_spot`] waits for what it does before the exit (killing what the
/// command started, removing the session's directory), which a hung mount could hold.
const EXIT_CLEANUP_LIMIT: Duration = Duration::from_secs(2);

/// Exits the process at once with `code`, without the destructors (`std::process::exit`),
/// after doing what they would have: the actions registered with
/// [`before_exiting_on_the_spot`] (the background tasks killed), the commands and servers
/// the command started killed with their process groups, and the directory of each open
/// session removed when nothing is saved in it
/// ([`remove_session_dirs_before_exit`](crate::session::remove_session_dirs_before_exit)).
/// Those get [`EXIT_CLEANUP_LIMIT`] on a thread of their own: the exit happens then,
/// whatever holds them. Only the first caller exits; another (a second watcher at the same
/// moment) waits for it.
fn exit_on_the_spot(code: u8) -> ! {
    static EXITING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    // Held until the process is gone.
    std::mem::forget(
        EXITING
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    let clean_up = || {
        for (_, action) in exit_actions().iter() {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(action));
        }
        #[cfg(unix)]
        tool_core::process::kill_child_process_groups();
        crate::session::remove_session_dirs_before_exit();
    };
    let (done, cleaned) = std::sync::mpsc::channel();
    let on_a_thread = std::thread::Builder::new().spawn(move || {
        clean_up();
        let _ = done.send(());
    });
    match on_a_thread {
        Ok(_) => {
            let _ = cleaned.recv_timeout(EXIT_CLEANUP_LIMIT);
        }
        Err(_) => clean_up(),
    }
    // What was queued for standard error (the last words among it) is written first, if
    // it can be.
    wait_for_err_written(Duration::from_secs(1));
    std::process::exit(i32::from(code))
}

/// Writes `line` to standard error before an exit on the spot, waiting at most a second: a
/// standard error nobody reads must not hold the exit.
fn last_words(line: String) {
    let (done, written) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        write_err_line(&line);
        let _ = done.send(());
    });
    let _ = written.recv_timeout(Duration::from_secs(1));
}

/// Writes `args` to standard output; see [`out!`]. A reader that closed the pipe (`| head`)
/// is not written to again; any other failure is kept for [`output_failure`].
pub(crate) fn write_out(args: std::fmt::Arguments<'_>) {
    use std::sync::atomic::Ordering;
    if OUTPUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let text = std::fmt::format(args);
    if let Err(e) = STDOUT_WRITES.write(|| std::io::stdout().lock(), text.as_bytes()) {
        OUTPUT_CLOSED.store(true, Ordering::Relaxed);
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            let _ = OUTPUT_FAILURE.set(e.to_string());
        }
    }
}

/// Why standard output could not be written, if it could not (not a closed pipe).
pub(crate) fn output_failure() -> Option<&'static str> {
    OUTPUT_FAILURE.get().map(String::as_str)
}

/// Text as the terminal shows it (a model's, a tool's output): control characters other
/// than line breaks and tabs (an escape sequence could move the cursor and redraw a
/// permission question) and bidirectional formatting characters (an override such as
/// U+202E reorders what the user reads, as the permission question already shows them) are
/// shown as escapes. The joiners that emoji and scripts need (U+200C, U+200D) stay.
pub(crate) fn escape_terminal_codes(text: &str) -> std::borrow::Cow<'_, str> {
    let escaped = |c: char| (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c);
    if !text.chars().any(escaped) {
        return text.into();
    }
    text.chars()
        .map(|c| {
            if escaped(c) {
                format!("\\u{{{:x}}}", u32::from(c))
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}

/// Whether `c` changes the direction text is shown in: the Arabic letter mark, the left-to-
/// right and right-to-left marks, embeddings, overrides and isolates and their ends, and the
/// line and paragraph separators that end a bidirectional run unseen.
fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{2028}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
    )
}

/// The first line of `text`, cut at `max` characters (with `…`).
pub(crate) fn first_line_cut(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    if line.chars().count() > max || text.lines().nth(1).is_some() {
        format!("{}…", line.chars().take(max).collect::<String>())
    } else {
        line.to_owned()
    }
}

/// What `command` (`run`, `agent`) says while it waits for `pending` background hooks.
pub(crate) fn waiting_for_hooks_line(command: &str, pending: usize) -> String {
    let (hooks, them) = if pending == 1 {
        ("hook", "it")
    } else {
        ("hooks", "them")
    };
    format!(
        "toolwright {command}: waiting for {pending} background {hooks} to finish (Ctrl-C stops {them})"
    )
}

/// Says on standard error, for `command` (`run`, `agent`), which background commands
/// (`run_in_background`, or moved there at their timeout) the end of the run stops, each
/// with the file that holds its output so far: their results told the model they run.
/// Those a signal stopped already are named too.
pub(crate) fn name_background_commands_stopped(command: &str, ctx: &tool_core::ToolUseContext) {
    use tools_builtin::tasks::{KILLED_WITH_ALL, TaskStatus, task_registry};
    for task in task_registry(ctx).list().into_iter().filter(|t| {
        t.status == TaskStatus::Running || t.kill_reason.as_deref() == Some(KILLED_WITH_ALL)
    }) {
        eoutln!(
            "toolwright {command}: background command {} ({}) is stopped as the run ends; its output so far is in {}",
            task.id,
            escape_terminal_codes(&first_line_cut(&task.command, 60)),
            task.output_file.display()
        );
    }
}

/// Writes `args` to standard error, ignoring a failure; see [`eout!`]. Once
/// [`write_err_without_blocking`] was called, the text is handed to the thread that writes
/// standard error instead, and this returns at once.
pub(crate) fn write_err(args: std::fmt::Arguments<'_>) {
    let text = std::fmt::format(args);
    if let Some(Some(queue)) = ERR_QUEUE.get() {
        queue.push(text);
        return;
    }
    let _ = STDERR_WRITES.write(|| std::io::stderr().lock(), text.as_bytes());
}

/// The texts for standard error that wait for the thread that writes them
/// ([`write_err_without_blocking`]), and how many were dropped since the last one queued.
struct ErrQueue {
    waiting: std::sync::Mutex<(std::sync::mpsc::Sender<String>, u64)>,
}

/// The queue of [`write_err_without_blocking`]; `None` when its thread could not start.
static ERR_QUEUE: std::sync::OnceLock<Option<ErrQueue>> = std::sync::OnceLock::new();

/// The bytes queued for standard error and not yet written ([`ERR_QUEUE`]).
static ERR_QUEUED_BYTES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The most bytes that wait for standard error ([`write_err_without_blocking`]): past it, a
/// text is dropped.
const ERR_QUEUE_BYTES: usize = 1024 * 1024;

impl ErrQueue {
    /// Queues `text`, or drops it when [`ERR_QUEUE_BYTES`] wait already: the next text
    /// queued then starts with a line that says how many were dropped.
    fn push(&self, text: String) {
        use std::sync::atomic::Ordering;
        let mut waiting = self
            .waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (sender, dropped) = &mut *waiting;
        if ERR_QUEUED_BYTES.load(Ordering::SeqCst) + text.len() > ERR_QUEUE_BYTES {
            *dropped += 1;
            return;
        }
        let text = match *dropped {
            0 => text,
            n => format!(
                "toolwright: {n} message(s) for standard error were dropped: nothing read it\n{text}"
            ),
        };
        let len = text.len();
        ERR_QUEUED_BYTES.fetch_add(len, Ordering::SeqCst);
        if sender.send(text).is_ok() {
            *dropped = 0;
        } else {
            ERR_QUEUED_BYTES.fetch_sub(len, Ordering::SeqCst);
        }
    }
}

/// From now on, what [`write_err`] (hence [`eout!`] and [`eoutln!`]) is given is written by
/// a thread of its own, and the caller never waits for it: for `serve`, whose standard error
/// is a log its client may never read (a pipe left full), which must not stall the
/// protocol (every task that said something would block, and the server with them). Up to
/// [`ERR_QUEUE_BYTES`] wait; past that, texts are dropped, and counted in a line written
/// once there is room. [`wait_for_err_written`] lets them out before the process exits.
/// If the thread cannot start, writes stay as they were.
pub(crate) fn write_err_without_blocking() {
    ERR_QUEUE.get_or_init(|| {
        use std::sync::atomic::Ordering;
        let (sender, texts) = std::sync::mpsc::channel::<String>();
        std::thread::Builder::new()
            .name("toolwright-stderr".to_owned())
            .spawn(move || {
                for text in texts {
                    let _ = STDERR_WRITES.write(|| std::io::stderr().lock(), text.as_bytes());
                    ERR_QUEUED_BYTES.fetch_sub(text.len(), Ordering::SeqCst);
                }
            })
            .ok()?;
        Some(ErrQueue {
            waiting: std::sync::Mutex::new((sender, 0)),
        })
    });
}

/// Waits until what [`write_err_without_blocking`] queued is written, for at most `limit`
/// (a standard error nobody reads must not hold the exit): before the process exits.
pub(crate) fn wait_for_err_written(limit: Duration) {
    use std::sync::atomic::Ordering;
    if !matches!(ERR_QUEUE.get(), Some(Some(_))) {
        return;
    }
    let deadline = Instant::now() + limit;
    while ERR_QUEUED_BYTES.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Writes `line` and a line break to standard error, its control characters shown as
/// escapes ([`escape_terminal_codes`]): what a line says may come from a settings file, a
/// server or a hook, and an escape sequence in it could rewrite the lines above it.
pub(crate) fn write_err_line(line: &str) {
    write_err(format_args!("{}\n", escape_terminal_codes(line)));
}

/// The signals that end a run: Ctrl-C (SIGINT), SIGTERM and SIGHUP (the terminal closed).
/// The handlers are installed when this is made, so from then on such a signal no longer
/// ends the process at once (without its destructors); [`next`](Self::next) says which came.
pub(crate) struct Signals {
    #[cfg(unix)]
    streams: [Option<tokio::signal::unix::Signal>; 3],
    /// The last signal [`next`](Self::next) gave, and when.
    last: Option<(u8, Instant)>,
}

/// How soon after a signal the same signal again is taken for the same press: `timeout`,
/// `make` or a script that forwards Ctrl-C sends it to the process and to its group, and
/// the two arrive a millisecond apart, where the second would exit without the results.
const SAME_SIGNAL_WINDOW: Duration = Duration::from_millis(100);

impl Signals {
    /// Installs the handlers (in a tokio runtime).
    pub(crate) fn install() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Self {
                streams: [
                    signal(SignalKind::interrupt()).ok(),
                    signal(SignalKind::terminate()).ok(),
                    signal(SignalKind::hangup()).ok(),
                ],
                last: None,
            }
        }
        #[cfg(not(unix))]
        Self { last: None }
    }

    /// The next signal, as the exit status it calls for (see [`next_raw`](Self::next_raw)),
    /// except the same signal again within [`SAME_SIGNAL_WINDOW`] of the last one, which is
    /// the same press delivered twice.
    pub(crate) async fn next(&mut self) -> u8 {
        loop {
            let code = self.next_raw().await;
            let now = Instant::now();
            let repeat = self
                .last
                .is_some_and(|(last, at)| last == code && now - at < SAME_SIGNAL_WINDOW);
            if !repeat {
                self.last = Some((code, now));
                return code;
            }
        }
    }

    /// The next signal, as the exit status it calls for (128 + its number: 130 for Ctrl-C,
    /// 143 for SIGTERM, 129 for SIGHUP). Never resolves when no handler could be installed.
    /// Signals already both there when this thread looks (sent while it waited for a core)
    /// are taken in a fixed order, SIGINT before SIGTERM before SIGHUP, not one drawn at
    /// random: the order they came in is lost by then, and a Ctrl-C followed by a SIGTERM,
    /// the common case (a user, then a supervisor), exits with the SIGTERM's status every
    /// time.
    async fn next_raw(&mut self) -> u8 {
        #[cfg(unix)]
        {
            let [int, term, hangup] = &mut self.streams;
            tokio::select! {
                biased;
                Some(()) = async { int.as_mut()?.recv().await } => 130,
                Some(()) = async { term.as_mut()?.recv().await } => 143,
                Some(()) = async { hangup.as_mut()?.recv().await } => 129,
                else => std::future::pending().await,
            }
        }
        #[cfg(not(unix))]
        {
            match tokio::signal::ctrl_c().await {
                Ok(()) => 130,
                Err(_) => std::future::pending().await,
            }
        }
    }
}

/// Runs `work` (the calls of `session`) with `signals` watched: the first signal kills the
/// session's background tasks and cancels its calls (their commands' process groups are
/// killed, and every call still gets its result), so `work` ends soon with destructors run;
/// a second signal exits at once, and so does the end of [`STUCK_CALLS_GRACE`] (a last
/// resort, [`exit_at_the_latest_after_a_signal`]: the executor answers a call stuck in a
/// system call itself before that). Returns `work`'s output and the exit status of the
/// signal that came (`None`: none).
pub(crate) async fn cancel_on_signal<T>(
    session: &Session,
    mut signals: Signals,
    work: impl std::future::Future<Output = T>,
) -> (T, Option<u8>) {
    let token = session.ctx.cancellation().clone();
    let tasks = tools_builtin::tasks::task_registry(&session.ctx);
    // The background tasks run in sessions of their own, out of the terminal's reach: an
    // exit on the spot kills them first.
    let _kill_tasks_on_exit = before_exiting_on_the_spot({
        let tasks = tasks.clone();
        move || tasks.kill_all()
    });
    exit_at_the_latest_after_a_signal();
    let signalled = std::sync::Arc::new(std::sync::atomic::AtomicU8::new(0));
    let watcher = tokio::spawn({
        let signalled = std::sync::Arc::clone(&signalled);
        async move {
            let code = signals.next().await;
            signalled.store(code, std::sync::atomic::Ordering::SeqCst);
            // The last resort's clock starts with this signal, should its own handlers
            // have come after it.
            note_signal(code);
            // Whoever sent this may follow with SIGKILL, which the background tasks would
            // outlive.
            tasks.kill_all();
            token.cancel();
        }
    });
    let output = work.await;
    watcher.abort();
    let code = signalled.load(std::sync::atomic::Ordering::SeqCst);
    (output, (code != 0).then_some(code))
}

/// Reads standard input to its end, handing each chunk to `chunk`, which says whether to
/// go on: a read a signal interrupted is made again, and a descriptor set non-blocking by
/// whoever shares it is waited on. The failure that ended it, if one did. Blocks: `run` and
/// `agent` call it on a thread of their own.
pub(crate) fn read_stdin_chunks(mut chunk: impl FnMut(&[u8]) -> bool) -> Option<std::io::Error> {
    use std::io::Read as _;
    let mut stdin = std::io::stdin().lock();
    let mut buf = vec![0; 64 * 1024];
    loop {
        match stdin.read(&mut buf) {
            Ok(0) => return None,
            Ok(n) => {
                if !chunk(&buf[..n]) {
                    return None;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            // A descriptor set non-blocking by whoever shares it: nothing to read yet.
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => return Some(e),
        }
    }
}

/// How long the work gets to end after the first signal cancelled its calls before the
/// command exits without it ([`cancel_on_signal`]): a last resort. The executor answers a
/// call that cannot end (stuck in a system call) itself after
/// [`STUCK_CALL_GRACE`](tool_exec::STUCK_CALL_GRACE), so every block is reported; this is
/// for what else could hold the work (the response's reading, a hook), 10 s later.
pub(crate) const STUCK_CALLS_GRACE: Duration =
    Duration::from_secs(tool_exec::STUCK_CALL_GRACE.as_secs() + 10);

/// How long a session's MCP servers get to end after a signal stopped the command
/// ([`end_mcp_servers_after_signal`]): longer than the 2 s a `toolwright serve` gives its
/// own commands between SIGTERM and SIGKILL, so that a nested serve finishes stopping a
/// command that ignores SIGTERM.
pub(crate) const MCP_SIGNAL_GRACE: Duration = Duration::from_secs(3);

/// Ends the session's MCP servers after a signal stopped the command: each stdio server is
/// sent SIGTERM (its stdin closed) and gets [`MCP_SIGNAL_GRACE`] to exit, all at once, then
/// is killed with what is left of its process group (as MCP's stdio shutdown prescribes,
/// shortened). A server that runs commands in process groups of their own (`toolwright
/// serve`) stops them on SIGTERM, where a kill on the spot would leave them running. Another
/// signal (read from `signals`: the command's own handlers where it still holds them, so
/// that none comes in between unseen and the first one's repeat is known as such) ends the
/// wait at once (the servers left are killed): its exit status is returned.
pub(crate) async fn end_mcp_servers_after_signal(
    session: &Session,
    signals: &mut Signals,
) -> Option<u8> {
    let mcp = session.mcp.as_ref()?;
    tokio::select! {
        () = mcp.terminate(MCP_SIGNAL_GRACE) => None,
        code = signals.next() => Some(code),
    }
}

/// Something that happened during a replay, for live display.
pub enum ReplayEvent<'a> {
    /// The model said something.
    Text(&'a str),
    /// A block arrived and was handed to the executor.
    Added,
    /// A call started; `running` are the ids running now.
    Started(&'a ToolUse, &'a [String]),
    /// Progress from a call.
    Progress(&'a ToolUse, &'a serde_json::Value),
    /// A result, in order.
    Finished(&'a CallRecord),
}

/// One call of a replay, with its timing.
pub struct CallRecord {
    /// The block.
    pub tool_use: ToolUse,
    /// What the pipeline produced.
    pub outcome: CallOutcome,
    /// When the block arrived.
    pub arrived: Duration,
    /// When it started running (`None`: never ran).
    pub started: Option<Duration>,
}

/// What a replay produced.
pub struct Replay {
    /// One record per tool_use, in order.
    pub calls: Vec<CallRecord>,
    /// When the model's response ended.
    pub stream_end: Duration,
    /// When the last result was handed out.
    pub total: Duration,
    /// The context after the calls' context modifiers (a `cd`, plan mode), as the next
    /// request of an agent would see it; the session's own when the executor gives none.
    pub context: tool_core::ToolUseContext,
}

/// Where a replay's model turn comes from.
pub enum TurnSource {
    /// A turn read whole, its items fed at their recorded times when paced.
    Recorded(Turn),
    /// Items as a reader completes them (a live stream on standard input): each is handed
    /// to the executor as it comes, and the response ends when the sender is dropped.
    Live(tokio::sync::mpsc::UnboundedReceiver<TurnItem>),
}

/// Feeds the turn to a streaming executor (a recorded one at its recorded times when
/// `pace`), reporting each event to `on_event` as it happens.
pub async fn replay(
    session: &Session,
    source: TurnSource,
    pace: bool,
    mut on_event: impl FnMut(Duration, ReplayEvent<'_>),
) -> Replay {
    let start = Instant::now();
    let mut executor = StreamingToolExecutor::new(
        session.pipeline.clone(),
        session.ctx.clone(),
        ExecutorConfig::from_env(),
    );
    let handle = executor.handle();
    // Once the session is cancelled (a signal), the rest of a recorded turn comes at once:
    // each block still gets its result (the cancellation's), without waiting for its time.
    // A live stream is read no further: the blocks read so far get theirs.
    let cancelled = session.ctx.cancellation().clone();
    let pace_until = {
        let cancelled = cancelled.clone();
        move |at: Duration| {
            let cancelled = cancelled.clone();
            async move {
                if pace {
                    tokio::select! {
                        () = tokio::time::sleep_until((start + at).into()) => {}
                        () = cancelled.cancelled() => {}
                    }
                }
            }
        }
    };
    let (arrival_tx, mut arrival_rx) =
        tokio::sync::mpsc::unbounded_channel::<(Duration, TurnItem)>();
    let feeder = tokio::spawn(async move {
        // The arrival is queued before the executor can start the call: the display (which
        // reads arrivals first) then knows the call when its start comes.
        let arrive = |item: TurnItem| {
            let added = match &item {
                TurnItem::ToolUse(tool_use) => Some(tool_use.clone()),
                TurnItem::Text(_) => None,
            };
            let _ = arrival_tx.send((start.elapsed(), item));
            if let Some(tool_use) = added {
                handle.add_tool(tool_use);
            }
        };
        match source {
            TurnSource::Recorded(turn) => {
                for (at, item) in turn.items {
                    pace_until(at).await;
                    arrive(item);
                }
                pace_until(turn.end).await;
            }
            TurnSource::Live(mut items) => loop {
                tokio::select! {
                    biased;
                    item = items.recv() => match item {
                        Some(item) => arrive(item),
                        None => break,
                    },
                    () = cancelled.cancelled() => {
                        // What was read before the signal still runs (to its cancellation):
                        // every block read gets its result.
                        while let Ok(item) = items.try_recv() {
                            arrive(item);
                        }
                        break;
                    }
                }
            },
        }
        handle.finish();
        start.elapsed()
    });
    let mut by_id: HashMap<String, (ToolUse, Duration, Option<Duration>)> = HashMap::new();
    let mut calls = Vec::new();
    loop {
        tokio::select! {
            biased;
            Some((at, item)) = arrival_rx.recv() => match &item {
                TurnItem::Text(text) => on_event(at, ReplayEvent::Text(text)),
                TurnItem::ToolUse(tool_use) => {
                    on_event(at, ReplayEvent::Added);
                    by_id.insert(tool_use.id.clone(), (tool_use.clone(), at, None));
                }
            },
            event = executor.next() => {
                let now = start.elapsed();
                match event {
                    Some(ExecutorEvent::Started { tool_use_id, running }) => {
                        if let Some(entry) = by_id.get_mut(&tool_use_id) {
                            entry.2 = Some(now);
                            on_event(now, ReplayEvent::Started(&entry.0, &running));
                        }
                    }
                    Some(ExecutorEvent::Progress(p)) => {
                        if let Some(entry) = by_id.get(&p.tool_use_id) {
                            on_event(now, ReplayEvent::Progress(&entry.0, &p.data));
                        }
                    }
                    Some(ExecutorEvent::Result(result)) => {
                        let (arrived, started) = by_id.get(&result.tool_use.id).map_or((now, None), |e| (e.1, e.2));
                        let record = CallRecord { tool_use: result.tool_use, outcome: result.outcome, arrived, started };
                        on_event(now, ReplayEvent::Finished(&record));
                        calls.push(record);
                    }
                    None => break,
                }
            }
        }
    }
    let stream_end = feeder.await.unwrap_or_else(|_| start.elapsed());
    let context = executor
        .final_context()
        .cloned()
        .unwrap_or_else(|| session.ctx.clone());
    Replay {
        calls,
        stream_end,
        total: start.elapsed(),
        context,
    }
}

/// `NAME(summary)` for display.
pub fn label(tool_use: &ToolUse) -> String {
    tool_use.describe()
}

/// [`label`] of the input a finished call ran with, and the model's beside it when a hook
/// or the user rewrote it: a log names what ran.
pub fn ran_label(tool_use: &ToolUse, outcome: &CallOutcome) -> String {
    match &outcome.input_rewritten {
        Some(input) => {
            let mut ran = tool_use.clone();
            ran.input = input.clone();
            format!(
                "{} (input rewritten from {})",
                ran.describe(),
                tool_use.describe()
            )
        }
        None => tool_use.describe(),
    }
}

/// A short text for a decision: `allow · rule Edit(./**) (project settings)` and so on.
pub fn decision_text(outcome: &CallOutcome) -> String {
    use tool_core::DecisionReason;
    let verdict = match outcome.decision {
        Some(("accept", _)) => "allow",
        Some(("reject", _)) => "deny",
        _ => match outcome.ending {
            tool_exec::Ending::UnknownTool => "unknown tool",
            tool_exec::Ending::InvalidInput => "invalid input",
            tool_exec::Ending::ValidationFailed => "refused by the tool",
            tool_exec::Ending::Cancelled => "cancelled",
            _ => "-",
        },
    };
    let why = match &outcome.decision_reason {
        Some(DecisionReason::Rule { rule, source }) => {
            format!(" · rule {rule} ({})", source_name(*source))
        }
        Some(DecisionReason::Mode { mode }) => format!(" · mode {}", mode.as_str()),
        Some(DecisionReason::Hook { hook, reason }) => match reason.as_deref().map(one_line) {
            Some(reason) if !reason.is_empty() => format!(" · {hook} hook: {reason}"),
            _ => format!(" · {hook} hook"),
        },
        Some(DecisionReason::SafetyCheck { reason }) => format!(" · safety check: {reason}"),
        Some(DecisionReason::WorkingDir { reason } | DecisionReason::Other { reason }) => {
            format!(" · {reason}")
        }
        Some(_) | None => match outcome.decision {
            Some((_, "user_temporary" | "user_permanent" | "user_reject")) => " · user".to_owned(),
            _ => String::new(),
        },
    };
    format!("{verdict}{why}")
}

/// The reason a PreToolUse hook gave for allowing `outcome`'s call, on one line: Claude
/// Code shows an allow's `permissionDecisionReason` to the user (a deny's goes to the
/// model, in the result).
pub fn hook_allow_reason(outcome: &CallOutcome) -> Option<String> {
    match (&outcome.decision, &outcome.decision_reason) {
        (Some(("accept", _)), Some(tool_core::DecisionReason::Hook { reason, .. })) => {
            reason.as_deref().map(one_line).filter(|r| !r.is_empty())
        }
        _ => None,
    }
}

/// `text` on one line of at most 200 characters: its lines joined with spaces.
fn one_line(text: &str) -> String {
    const MAX: usize = 200;
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() <= MAX {
        return joined;
    }
    let mut cut: String = joined.chars().take(MAX - 1).collect();
    cut.push('…');
    cut
}

fn source_name(source: tool_core::RuleSource) -> &'static str {
    use tool_core::RuleSource;
    match source {
        RuleSource::UserSettings => "user settings",
        RuleSource::ProjectSettings => "project settings",
        RuleSource::LocalSettings => "local settings",
        RuleSource::FlagSettings => "--settings",
        RuleSource::PolicySettings => "managed settings",
        RuleSource::CliArg => "command line",
        RuleSource::Command => "command",
        RuleSource::Session => "session",
    }
}

/// Milliseconds with one decimal.
pub fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}
