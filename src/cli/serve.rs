//! `toolwright serve`: this build's tools as an MCP server, over stdio (the default) or
//! Streamable HTTP (`--http`), on the library's [`toolwright::serve`]. Every call goes
//! through the full pipeline of the served directory: its hooks, its permission rules and
//! mode. A call that would ask becomes an elicitation to the client when it can answer one,
//! and is refused with the reason otherwise.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use toolwright::serve::http::{HttpError, HttpOptions, HttpServer, parse_addr, parse_allowed_host};
use toolwright::serve::{NoticeSink, ServeError, ToolServer, serve_stdio_with_notices};

use crate::session::{AbortOnDrop, Session, SessionArgs};

/// Where `--http` listens when given no address.
pub const DEFAULT_HTTP_ADDR: &str = "127.0.0.1:8421";

/// Arguments of `toolwright serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    /// Serve over Streamable HTTP instead of stdio, at ADDR (PORT, IP:PORT, localhost:PORT;
    /// default 127.0.0.1:8421, port 0 for any free port). The endpoint is /mcp; its URL is
    /// printed on stdout.
    #[arg(
        long,
        value_name = "ADDR",
        num_args = 0..=1,
        default_missing_value = DEFAULT_HTTP_ADDR
    )]
    pub http: Option<String>,
    /// Let --http listen on an address that is not loopback. Anyone who can reach it and has
    /// the token can run these tools; Host headers are still checked (see --allowed-host).
    #[arg(long, requires = "http")]
    pub allow_non_loopback: bool,
    /// Serve --http without a token: any local process (another user, a container sharing
    /// the network) can then run these tools. By default every request must carry the
    /// token of this run (`Authorization: Bearer TOKEN`, or `?token=` as in the printed
    /// URL): a random one, or TOOLWRIGHT_SERVE_TOKEN when set.
    #[arg(long, requires = "http")]
    pub no_auth: bool,
    /// Ignore user and managed settings and `CLAUDE_CODE_SIMPLE` (the demo's bundled server,
    /// which must show the same thing on every machine). Not for general use: hidden.
    #[arg(long, hide = true)]
    pub isolated: bool,
    /// A Host name (NAME or NAME:PORT) that requests to --http may use besides localhost,
    /// 127.0.0.1 and [::1]; repeatable. NAME alone accepts it with the bound port or with no
    /// port (as a TLS proxy in front passes it); NAME:PORT with that port only.
    #[arg(long = "allowed-host", value_name = "HOST[:PORT]", requires = "http")]
    pub allowed_hosts: Vec<String>,
    /// Close an --http session after this many seconds with no request of its own open (a
    /// call still running keeps it) and none arriving, ending its background tasks.
    #[arg(long, value_name = "SECONDS", default_value_t = toolwright::serve::http::SESSION_IDLE_TIMEOUT.as_secs_f64(), requires = "http", value_parser = parse_seconds)]
    pub session_idle_timeout: f64,
}

/// The longest `--session-idle-timeout` taken, in seconds (about 31 years).
const MAX_IDLE_SECONDS: f64 = 1e9;

/// A positive number of seconds, at most [`MAX_IDLE_SECONDS`].
fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(s) if s > 0.0 && s <= MAX_IDLE_SECONDS => Ok(s),
        // Infinity included.
        Ok(s) if s > MAX_IDLE_SECONDS => Err(format!(
            "`{text}` seconds is too large: the largest accepted is {MAX_IDLE_SECONDS:.0} seconds (about 31 years)"
        )),
        _ => Err(format!("`{text}` is not a positive number of seconds")),
    }
}

const INSTRUCTIONS: &str = "Toolwright's tools, run through its permission rules and hooks.";

/// The variable that fixes the `--http` token of a run.
const TOKEN_VAR: &str = "TOOLWRIGHT_SERVE_TOKEN";

/// Shortest token accepted from [`TOKEN_VAR`], in characters: a shorter one could be
/// guessed by anyone who can reach the port.
const MIN_TOKEN_CHARS: usize = 16;

/// [`TOKEN_VAR`] as it was when [`take_token_from_env`] took it out of the environment.
static ENV_TOKEN: std::sync::OnceLock<Option<std::ffi::OsString>> = std::sync::OnceLock::new();

/// Whether a settings file's `env` set [`TOKEN_VAR`] (to another value than the process
/// was started with), as [`take_token_from_env`] found: `serve` warns that it is ignored.
static SETTINGS_SET_TOKEN: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Takes `TOOLWRIGHT_SERVE_TOKEN` out of this process's environment, keeping its value for
/// `--http`: the commands, hooks and MCP servers `serve` starts inherit its environment, and
/// one of them must not read the token that lets anyone run these tools. Called by `main`
/// before any thread exists (changing the environment is unsound once others may read it),
/// after the settings' `env` is applied (which cannot hand the token to children either).
/// The value kept is the one the process was started with: a settings file's `env` (a
/// repository's committed `.claude/settings.json`) must not pin the token to a value it
/// publishes.
pub fn take_token_from_env() {
    let token = crate::session::var_before_settings(TOKEN_VAR);
    let now = std::env::var_os(TOKEN_VAR);
    // The settings' `env` was applied just before: a value other than the process's came
    // from it. (One equal to the process's changes nothing, and is not told.)
    if now.is_some() && now != token {
        SETTINGS_SET_TOKEN.store(true, Ordering::Relaxed);
    }
    if now.is_some() {
        // SAFETY: called from `main` while this process has a single thread: the telemetry
        // and the async runtime start after it, as for the settings' `env`.
        #[allow(unsafe_code)]
        unsafe {
            std::env::remove_var(TOKEN_VAR);
        }
    }
    let _ = ENV_TOKEN.set(token);
}

/// Runs `toolwright serve`: until the client closes standard input, or for `--http` until
/// interrupted (Ctrl-C, SIGTERM).
pub async fn run(args: &ServeArgs) -> ExitCode {
    // Standard error is a log the client may never read (a pipe left full): what is said
    // there must not stall the protocol.
    super::write_err_without_blocking();
    let code = serve(args).await;
    super::wait_for_err_written(std::time::Duration::from_secs(1));
    code
}

async fn serve(args: &ServeArgs) -> ExitCode {
    if SETTINGS_SET_TOKEN.load(Ordering::Relaxed) {
        eoutln!(
            "toolwright serve: warning: a settings file's `env` sets {TOKEN_VAR}, which is ignored: only the process environment's value (the one `serve` was started with) sets the token, as a settings file could publish it; the commands it runs do not inherit it either"
        );
    }
    let http = match args.http.as_deref().map(parse_addr).transpose() {
        Ok(addr) => addr,
        Err(e) => {
            eoutln!("toolwright serve: {e}");
            return ExitCode::from(2);
        }
    };
    // The token is checked before anything starts (the session's MCP servers among it).
    let token = match (&http, args.no_auth) {
        (Some(_), false) => match serve_token() {
            Ok(token) => Some(token),
            Err(e) => {
                eoutln!("toolwright serve: {e}");
                return ExitCode::from(2);
            }
        },
        _ => None,
    };
    // Refused before anything starts (the session's MCP servers among it).
    if let Some(addr) = http
        && !addr.ip().is_loopback()
        && !args.allow_non_loopback
    {
        eoutln!("toolwright serve: {}", HttpError::NotLoopback(addr));
        return ExitCode::from(2);
    }
    for entry in &args.allowed_hosts {
        if let Err(e) = parse_allowed_host(entry) {
            eoutln!("toolwright serve: --allowed-host: {e}");
            return ExitCode::from(2);
        }
    }
    // `initialize` is answered at once: the MCP servers connect meanwhile.
    let mut options = args.session.options(args.isolated);
    options.connect_mcp_in_background = true;
    // A client lists every tool's schema itself: ToolSearch's `tool_reference` answers
    // would mean nothing to it.
    options.offer_tool_search = false;
    // Nothing here searches the web for WebSearch (the agent's model does).
    options.offer_web_search = false;
    let mut session = match Session::open(&options).await {
        Ok(s) => s,
        Err(e) => {
            eoutln!("toolwright serve: {e}");
            return ExitCode::from(2);
        }
    };
    for notice in &session.notices {
        eoutln!("toolwright serve: {notice}");
    }
    let server = ToolServer::new(
        session.ctx.clone(),
        session.permissions.clone(),
        session.hooks.clone(),
    )
    .with_server_info("toolwright", env!("CARGO_PKG_VERSION"))
    .with_instructions(INSTRUCTIONS);
    // What hooks say to the user (and their errors), and the client's lines that were
    // answered with an error, go to stderr as `run` prints them: stdout is the protocol's
    // (or the URL's), and there is no other log.
    let notices: NoticeSink = Arc::new(|text: &str| eoutln!("toolwright serve: {text}"));
    let mut server = server.with_notices(notices.clone());
    // The tools `server` serves stay those of the session as they are now: it tells its
    // clients when they change. While the MCP servers make their first connections,
    // `tools/list` and `tools/call` wait; then their tools are served (unannounced: no client
    // has listed the tools before), what went wrong is told, as the session's notices were,
    // and only then are changes followed (one that came meanwhile is read then), so that no
    // older list is served after the new one.
    let follow = {
        let server = server.clone();
        session.tool_changes(Arc::clone(&session.current_tools), move |tools| {
            server.set_tools(tools);
        })
    };
    let mut connecting = None;
    if let Some(first) = session.mcp_connecting.take() {
        let (ready, waiting) = tokio::sync::watch::channel(false);
        server = server.with_tools_ready(waiting);
        let (server, tools) = (server.clone(), Arc::clone(&session.current_tools));
        let matcher = Arc::clone(&session.rule_matcher);
        let notices = notices.clone();
        connecting = Some(async move {
            let problems = first.await;
            let tools = tools();
            matcher.set_tools(tools.clone());
            server.set_tools_unannounced(tools);
            ready.send_replace(true);
            for notice in problems {
                notices(&notice);
            }
        });
    }
    let _following = AbortOnDrop(tokio::spawn(async move {
        if let Some(connecting) = connecting {
            connecting.await;
        }
        follow.await;
    }));

    let Some(addr) = http else {
        // A signal ends the process without destructors: background tasks are killed and
        // calls cancelled (their commands' process groups killed) first.
        let mut signalled = shut_down_on_signals(server.clone());
        // The client gone (its input ended, or it stopped reading): the calls in progress
        // end now (their answers could reach nobody), as on a signal.
        let closed = tool_core::CancellationToken::new();
        let _closing = AbortOnDrop(tokio::spawn({
            let (closed, server) = (closed.clone(), server.clone());
            async move {
                closed.cancelled().await;
                server.shut_down(SHUTDOWN_GRACE).await;
            }
        }));
        let stop = tool_core::CancellationToken::new();
        let serving = serve_stdio_with_notices(server.clone(), notices, closed, stop.clone());
        tokio::pin!(serving);
        let code = tokio::select! {
            served = &mut serving => match served {
                Ok(()) => ExitCode::SUCCESS,
                // The transport's notice said so already: answers due were lost.
                Err(ServeError::Output(_)) => ExitCode::from(1),
                Err(e) => {
                    eoutln!("toolwright serve: {e}");
                    ExitCode::from(1)
                }
            },
            Ok(signalled) = &mut signalled => {
                // The calls have ended, but their answers may not be written yet: the
                // session ends with them written out (flushed), within the grace the
                // signal gave. A second signal meanwhile still exits at once.
                let Signalled { code, grace_ends, mut signals } = signalled;
                stop.cancel();
                tokio::select! {
                    _ = tokio::time::timeout_at(grace_ends, &mut serving) => {}
                    code = signals.next() => {
                        server.kill_background_tasks();
                        super::exit_on_the_spot(code)
                    }
                }
                // The upstream servers get a short grace to stop what the cancelled calls
                // run (a kill on the spot leaves a command of theirs running); the same
                // handlers still watch for a second signal.
                let _ = super::end_mcp_servers_after_signal(&session, &mut signals).await;
                return ExitCode::from(code);
            }
        };
        // The client left: the upstream servers get to exit on their own (their stdin is
        // closed); a signal then kills what is left of them.
        tokio::select! {
            () = session.close_mcp() => {}
            Ok(Signalled { code, mut signals, .. }) = &mut signalled => {
                let _ = super::end_mcp_servers_after_signal(&session, &mut signals).await;
                return ExitCode::from(code);
            }
        }
        return code;
    };
    let options = HttpOptions {
        allow_non_loopback: args.allow_non_loopback,
        allowed_hosts: args.allowed_hosts.clone(),
        session_idle_timeout: std::time::Duration::from_secs_f64(args.session_idle_timeout),
        token,
        ..HttpOptions::new(addr)
    };
    let listener = match HttpServer::bind(&options).await {
        Ok(listener) => listener,
        Err(e) => {
            eoutln!("toolwright serve: {e}");
            return ExitCode::from(2);
        }
    };
    if !listener.local_addr().ip().is_loopback() {
        eoutln!(
            "toolwright serve: warning: listening on {}, which is not loopback: anyone who can reach it{} can run these tools (and the token travels unencrypted)",
            listener.local_addr(),
            if args.no_auth {
                ""
            } else {
                " and has the token"
            }
        );
    }
    let signal = shut_down_on_signals(server.clone());
    let url = listener.url();
    // Standard error (often a log others can read) names the endpoint without the token.
    let (endpoint, with_token) = match url.split_once('?') {
        Some((endpoint, _)) => (endpoint, "; the URL with its token is on standard output"),
        None => (url.as_str(), ""),
    };
    eoutln!(
        "toolwright serve: MCP over Streamable HTTP at {endpoint} for {} (Ctrl-C stops{with_token})",
        // As one shell word: a folder's name is anyone's, and a control character in it
        // must not reach the terminal.
        crate::trust::shell_word(session.ctx.cwd())
    );
    // The URL alone on stdout, for scripts.
    outln!("{url}");
    let shutdown = listener.shutdown_token();
    let signalled = Arc::new(AtomicU8::new(0));
    tokio::spawn({
        let signalled = Arc::clone(&signalled);
        async move {
            // Background tasks and calls first (their commands killed), then the listener:
            // once it stops, the process is on its way out.
            if let Ok(Signalled { code, .. }) = signal.await {
                signalled.store(code, Ordering::SeqCst);
                shutdown.cancel();
            }
        }
    });
    // One handler for every request; it keeps each client session's state by its id.
    // Sessions end with it, and their background tasks with them.
    let ending = server.clone();
    let active = server.clone();
    let running = server.clone();
    let listener = listener
        .on_session_end(Arc::new(move |id: &str| ending.end_session(id)))
        .with_session_activity(Arc::new(move |id: &str| active.session_last_active(id)))
        .with_request_activity(Arc::new(move |session: &str, id: &_| {
            running.session_request_running(session, id)
        }));
    listener.serve(move || server.for_session()).await;
    // Stopped otherwise than by a signal: the upstream servers get to exit on their own;
    // after one, a short grace to stop what the cancelled calls run.
    if signalled.load(Ordering::SeqCst) == 0 {
        session.close_mcp().await;
    } else {
        let _ = super::end_mcp_servers_after_signal(&session, &mut super::Signals::install()).await;
    }
    drop(session);
    match signalled.load(Ordering::SeqCst) {
        0 => ExitCode::SUCCESS,
        code => ExitCode::from(code),
    }
}

/// The token --http requires: TOOLWRIGHT_SERVE_TOKEN when the process was started with it
/// (as [`take_token_from_env`] took it, else from the environment as it was before the
/// settings' `env`), else 32 random bytes in hex.
fn serve_token() -> Result<String, String> {
    let from_env = match ENV_TOKEN.get() {
        Some(token) => token.clone(),
        None => crate::session::var_before_settings(TOKEN_VAR),
    };
    if let Some(token) = from_env.filter(|t| !t.is_empty()) {
        let Some(token) = token
            .to_str()
            .filter(|t| {
                t.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
            })
            .map(str::to_owned)
        else {
            return Err(format!(
                "{TOKEN_VAR} may hold only letters, digits and - . _ ~ (it goes in a URL)"
            ));
        };
        let chars = token.chars().count();
        if chars < MIN_TOKEN_CHARS {
            return Err(format!(
                "{TOKEN_VAR} is {chars} characters long; a token needs at least {MIN_TOKEN_CHARS} (a shorter one could be guessed by anyone who can reach the port)"
            ));
        }
        return Ok(token);
    }
    use std::io::Read as _;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| format!("cannot make a token from /dev/urandom: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// How long calls get to end (their commands killed) once a signal stops the server.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// A first signal's shutdown, done: what the process ends with.
struct Signalled {
    /// The exit status the signal calls for (128 + its number).
    code: u8,
    /// When the grace the signal gave ends ([`SHUTDOWN_GRACE`] after it came).
    grace_ends: tokio::time::Instant,
    /// The handlers, still installed: a second signal (the same one again within
    /// [`super::Signals::next`]'s window being the same press) is read from them.
    signals: super::Signals,
}

/// Watches for Ctrl-C, SIGTERM and SIGHUP (the handlers installed now: a signal that comes
/// right after the URL is printed is not the default fatal one). The first kills the
/// background tasks of every session and cancels the calls ([`ToolServer::shut_down`]),
/// then the task ends with the exit status the signal calls for, the end of its grace and
/// the handlers. A second signal meanwhile exits at once, killing first the background
/// tasks and the process groups of every command and server this process started, and
/// removing the directories of the sessions that hold nothing saved.
fn shut_down_on_signals(server: ToolServer) -> tokio::task::JoinHandle<Signalled> {
    let mut signals = super::Signals::install();
    tokio::spawn(async move {
        let code = signals.next().await;
        let grace_ends = tokio::time::Instant::now() + SHUTDOWN_GRACE;
        tokio::select! {
            () = server.shut_down(SHUTDOWN_GRACE) => Signalled { code, grace_ends, signals },
            code = signals.next() => {
                server.kill_background_tasks();
                // The process groups killed and the sessions' directories removed too.
                super::exit_on_the_spot(code)
            }
        }
    })
}
