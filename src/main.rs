//! The `toolwright` binary: `demo`, `run`, `serve`, `tools`, `permissions check`.
//!
//! See `docs/cli.md` for the full reference.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[macro_use]
mod cli;
mod session;
mod telemetry;
mod trust;
mod turn;

/// Toolwright: the tool layer of an AI agent.
#[derive(Debug, Parser)]
#[command(name = "toolwright", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Runs an agent on the Anthropic Messages API (ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN) in this directory.
    Agent(cli::agent::AgentArgs),
    /// Replays a bundled model turn through the full pipeline in a temporary sample project
    /// (no API key, no network).
    Demo(cli::demo::DemoArgs),
    /// Runs the tool_use blocks of a model response (Anthropic SSE or JSONL) and prints the
    /// results.
    Run(cli::run::RunArgs),
    /// Serves this build's tools over MCP (stdio or Streamable HTTP), each call through the
    /// full pipeline.
    Serve(cli::serve::ServeArgs),
    /// Lists the tools of this build with their flags and, optionally, their schemas.
    Tools(cli::tools::ToolsArgs),
    /// Records that a folder's own settings (allow rules, hooks, MCP servers) may apply.
    Trust(cli::trust::TrustArgs),
    /// Permission rules.
    #[command(subcommand)]
    Permissions(PermissionsCommand),
}

#[derive(Debug, Subcommand)]
enum PermissionsCommand {
    /// Prints the decision for one call and why.
    Check(cli::permissions::CheckArgs),
}

fn main() -> ExitCode {
    // As Node does: parallel calls with several hooks each need more than the 256 open
    // files macOS gives a process (a hook that cannot start would refuse its call).
    let _ = tool_core::process::raise_open_file_limit();
    let mut cli = Cli::parse();
    if let Err(e) = read_pipes_once(&mut cli) {
        eoutln!("toolwright: {e}");
        return ExitCode::from(2);
    }
    trust::remember_location();
    // The trust question comes first: the answer decides whether the folder's own settings
    // `env` is applied, which must happen while this process has a single thread.
    let trusted = match &cli.command {
        Command::Agent(args) => cli::agent::ask_trust_if_interactive(args),
        _ => None,
    };
    apply_settings_env(&cli, trusted);
    // Still single-threaded: `serve`'s token leaves the environment its children inherit.
    if matches!(cli.command, Command::Serve(_)) {
        cli::serve::take_token_from_env();
    }
    // With the credential scrub on, a child cannot read them from this process's
    // `/proc/PID/environ` (or `mem`) either: a process that is not dumpable has those owned by
    // root. Its children get the default back when they start their program.
    if tool_core::process::subprocess_env_scrub_on() {
        let _ = nix::sys::prctl::set_dumpable(false);
    }
    let telemetry = telemetry::init();
    let code = run(cli, trusted);
    // After the runtime is gone: the exporters flush with a blocking client.
    drop(telemetry);
    code
}

/// Whether `permissions check` describes a call a session here could make: a tool it has
/// (`tools`, by name or alias; an MCP tool, `mcp__server__tool`, and the agent's Agent tool
/// are taken as named) with an input its schema accepts. A session refuses anything else before any permission is decided, so a
/// decision reported for it would be one that never happens.
fn known_call(
    args: &cli::permissions::CheckArgs,
    tools: &[std::sync::Arc<dyn tool_core::Tool>],
    options: &session::SessionOptions,
) -> Result<(), String> {
    // The Agent tool is the agent loop's own, not the registry's.
    if args.tool.starts_with("mcp__") || matches!(args.tool.as_str(), "Agent" | "Task") {
        return Ok(());
    }
    let Some(tool) = tool_core::find_tool(tools, &args.tool) else {
        return Err(match why_not_in_session(&args.tool, options) {
            Some((name, why)) => format!(
                "a session here has no tool `{name}`: {why} (`toolwright tools` lists the \
                 session's tools; a session answers its call \"No such tool available\")"
            ),
            None => format!(
                "this build has no tool named `{}` (`toolwright tools` lists them; MCP tools \
                 are named mcp__<server>__<tool>)",
                args.tool
            ),
        });
    };
    // Bad JSON is the check's own error to report.
    let Ok(input) = serde_json::from_str::<serde_json::Value>(&args.input) else {
        return Ok(());
    };
    tool.parse_input(input).map(|_| ()).map_err(|e| {
        format!(
            "the input is not one {} accepts, so a session would refuse the call before \
             any permission is decided: {}",
            tool.name(),
            e.message()
        )
    })
}

/// The options of a session in the folder `permissions check` is about, as far as they bear
/// on it (its settings, hence their `env`, and the tools it would have).
fn check_session_options(args: &cli::permissions::CheckArgs) -> session::SessionOptions {
    let mut options = session::SessionArgs {
        settings: args.settings.clone(),
        mode: None,
        cwd: args.cwd.clone(),
        mcp_config: Vec::new(),
        strict_mcp_config: false,
    }
    .options(false);
    // ToolSearch is left out only when tool search is off outright: in `auto` mode it
    // depends on the MCP servers' tools, which the check does not start.
    options.offer_tool_search = !toolwright::agent::tool_search::off_in_env();
    options
}

/// Why a session here leaves out `name`, a tool this build has (by name or alias), with its
/// name: `None` for a tool this build does not have.
fn why_not_in_session(name: &str, options: &session::SessionOptions) -> Option<(String, String)> {
    let compiled: Vec<_> = tool_registry::BUILTIN_TOOLS
        .iter()
        .map(|entry| (entry.build)())
        .collect();
    let tool = tool_core::find_tool(&compiled, name)?;
    let name = tool.name().to_owned();
    let entry = tool_registry::BUILTIN_TOOLS
        .iter()
        .find(|e| e.name == name)?;
    let why = if !entry.gate.is_open_in(&|var| std::env::var(var).ok()) {
        // Claude Code's name for the tasks switch counts too: say so, it may be the one set.
        let alias = matches!(
            entry.gate,
            tool_registry::Gate::Env(tool_registry::TASKS_ENV)
                | tool_registry::Gate::NotEnv(tool_registry::TASKS_ENV)
        )
        .then_some(" (Claude Code's `CLAUDE_CODE_ENABLE_TASKS` counts when it is unset)")
        .unwrap_or_default();
        format!(
            "its environment gate `{}` is shut{alias} (the settings' `env` applied)",
            entry.gate.describe()
        )
    } else if !tool_registry::ToolFilter::from_env().admits(&name) {
        "CLAUDE_CODE_SIMPLE leaves only Bash, Read and Edit".to_owned()
    } else if let Some(why) = session::not_offered_because(&name, options) {
        format!("it is not offered: {why}")
    } else if name == "ToolSearch" {
        "tool search is off (`ENABLE_TOOL_SEARCH` off, `CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS` \
         set to a true value, or a proxy's `ANTHROPIC_BASE_URL` with `ENABLE_TOOL_SEARCH` \
         unset)"
            .to_owned()
    } else {
        "it is not enabled here".to_owned()
    };
    Some((name, why))
}

/// Reads the `--settings` and `--mcp-config` values that name pipes, once, before anything
/// reads them ([`session::read_pipes_once`]).
fn read_pipes_once(cli: &mut Cli) -> Result<(), String> {
    let (settings, mcp) = match &mut cli.command {
        Command::Agent(args) => (
            &mut args.session.settings,
            Some(&mut args.session.mcp_config),
        ),
        Command::Run(args) => (
            &mut args.session.settings,
            Some(&mut args.session.mcp_config),
        ),
        Command::Serve(args) => (
            &mut args.session.settings,
            Some(&mut args.session.mcp_config),
        ),
        Command::Tools(args) => (&mut args.settings, Some(&mut args.mcp_config)),
        Command::Permissions(PermissionsCommand::Check(args)) => (&mut args.settings, None),
        _ => return Ok(()),
    };
    session::read_pipes_once(settings, "--settings")?;
    if let Some(mcp) = mcp {
        session::read_pipes_once(mcp, "--mcp-config")?;
    }
    Ok(())
}

/// Sets the settings' `env` (see `session::settings_env`) in this process's environment, as
/// Claude Code does, so every tool, hook and MCP server started later inherits it and
/// `.mcp.json` expands it. Done first thing, while this process has a single thread.
/// `trusted` is the answer to the trust question, when it was asked.
fn apply_settings_env(cli: &Cli, trusted: Option<bool>) {
    let mut options = match &cli.command {
        Command::Agent(args) => args.session.options(false),
        Command::Run(args) => args.session.options(false),
        Command::Serve(args) => args.session.options(false),
        Command::Tools(args) => args.options(),
        // As a session in its folder would: the engine reads some of it (a ripgrep config
        // file, git's variables).
        Command::Permissions(PermissionsCommand::Check(args)) => check_session_options(args),
        _ => return,
    };
    if trusted.is_some() {
        options.trusted = trusted;
    }
    let read = session::settings_env(&options);
    session::remember_env_before_settings(&read);
    for (key, value) in read.env {
        // SAFETY: no other thread exists yet: the telemetry and the async runtime start
        // after this, and nothing before it spawns one. Keys and values were checked for
        // `=` and NUL bytes.
        #[allow(unsafe_code)]
        unsafe {
            std::env::set_var(key, value);
        }
    }
}

/// Makes a write past this process's file-size limit (`ulimit -f`) fail with `EFBIG` ("File
/// too large"), which the tool that wrote reports as its call's error, instead of ending
/// the process with `SIGXFSZ`, whose default action would lose every result of the turn (a
/// `serve` session too) and leave a temporary file behind. The signal is caught (tokio's
/// handler, which stays installed once registered; nothing waits for it), not ignored: a
/// handler goes back to the default action in a program this process starts, so the
/// commands, hooks and servers it runs keep the usual behaviour, where an ignored signal
/// would stay ignored in them.
fn catch_file_size_signal(runtime: &tokio::runtime::Runtime) {
    use tokio::signal::unix::{SignalKind, signal};
    let _entered = runtime.enter();
    let _ = signal(SignalKind::from_raw(nix::libc::SIGXFSZ));
}

fn run(cli: Cli, trusted: Option<bool>) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eoutln!("toolwright: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    catch_file_size_signal(&runtime);
    let code = match cli.command {
        Command::Agent(args) => runtime.block_on(cli::agent::run(&args, trusted)),
        Command::Demo(args) => runtime.block_on(cli::demo::run(&args)),
        Command::Run(args) => runtime.block_on(cli::run::run(&args)),
        Command::Serve(args) => runtime.block_on(cli::serve::run(&args)),
        Command::Tools(args) => runtime.block_on(cli::tools::run(&args)),
        Command::Trust(args) => cli::trust::run(&args),
        Command::Permissions(PermissionsCommand::Check(args)) => {
            // The tools a session here would have: the settings' `env` is in this process's
            // environment already (`apply_settings_env`), so the gates answer as in it. A
            // tool-wide deny rule leaves its tool in: the deny is the answer to report.
            let options = check_session_options(&args);
            let tools = session::offered_builtin_tools(&options, |_| false);
            match known_call(&args, &tools, &options) {
                Ok(()) => cli::permissions::run(&args, &tools),
                Err(e) => {
                    eoutln!("toolwright permissions check: {e}");
                    ExitCode::from(2)
                }
            }
        }
    };
    // Tasks still spawned are dropped (their destructors kill what they started); a thread
    // blocked reading a terminal that is still open (stdio serving stopped by a signal) is
    // not waited for.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    // Output that never arrived (a full disk, a closed descriptor) is no success: the
    // caller would read nothing, or half a result, after the tools took effect.
    if let Some(e) = cli::output_failure() {
        eoutln!("toolwright: cannot write to standard output ({e}): what it printed is incomplete");
        if code == ExitCode::SUCCESS {
            return ExitCode::from(1);
        }
    }
    code
}
