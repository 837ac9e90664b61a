//! `toolwright demo`: the main job on its built-in example.
//!
//! Copies a small Python project into a temporary directory and replays a recorded model
//! turn (Anthropic streaming format, bundled) through the full pipeline with the project's
//! own `.claude/settings.json`: Glob, Grep and three Reads run in parallel while the
//! response still streams, an Edit fixes the bug, a PreToolUse hook rewrites `python` to
//! `python3` in the test command, the tests run, and an `rm -rf` is denied by a rule. It
//! prints a live timeline, a summary table, and what streaming saved against running the
//! same calls after the response ended.

use std::collections::HashMap;
use std::io::IsTerminal as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use tool_exec::{PlannedCall, schedule_makespan};

use super::{
    ReplayEvent, Signals, TurnSource, cancel_on_signal, decision_text, label, ms, ran_label, replay,
};
use crate::session::{Session, SessionOptions};
use crate::turn::{self, TurnItem};

/// Arguments of `toolwright demo`.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Keep the temporary project directory afterwards (its path is printed).
    #[arg(long)]
    pub keep: bool,
    /// Replay without the recorded timing (as fast as possible).
    #[arg(long)]
    pub no_pace: bool,
}

const FILES: &[(&str, &str)] = &[
    ("calc.py", include_str!("../demo/project/calc.py")),
    ("test_calc.py", include_str!("../demo/project/test_calc.py")),
    ("README.md", include_str!("../demo/project/README.md")),
    (
        "docs/NOTES.md",
        include_str!("../demo/project/docs/NOTES.md"),
    ),
    (
        ".claude/settings.json",
        include_str!("../demo/project/.claude/settings.json"),
    ),
    (
        ".claude/hooks/use_python3.py",
        include_str!("../demo/project/.claude/hooks/use_python3.py"),
    ),
];

const TURN: &str = include_str!("../demo/turn.sse");

fn write_project(root: &Path) -> std::io::Result<()> {
    for (name, content) in FILES {
        let path = root.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, content)?;
    }
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(
        root.join(".claude/hooks/use_python3.py"),
        std::fs::Permissions::from_mode(0o755),
    )?;
    // The bundled MCP server is this very binary serving the project's `docs/` folder.
    let exe = std::env::current_exe()?;
    let mcp = serde_json::json!({"mcpServers": {"docs": {
        "command": exe,
        // Isolated as the demo's own session is: the user's settings and hooks would
        // change what it shows.
        "args": ["serve", "--isolated", "--cwd", root.join("docs")],
    }}});
    std::fs::write(
        root.join(".mcp.json"),
        serde_json::to_string_pretty(&mcp).unwrap_or_default(),
    )
}

/// The demo's timeline. On a terminal, each running call is a live spinner line (its
/// latest progress as the message) above the finished lines; elsewhere every event is a
/// plain line, in order.
struct Timeline {
    live: Option<(MultiProgress, HashMap<String, ProgressBar>)>,
}

impl Timeline {
    fn new() -> Self {
        let live = std::io::stdout().is_terminal().then(|| {
            (
                MultiProgress::with_draw_target(ProgressDrawTarget::stdout()),
                HashMap::new(),
            )
        });
        Self { live }
    }

    fn line(&self, text: String) {
        match &self.live {
            // Printed above the live spinners; falls back to stdout if drawing fails.
            Some((multi, _)) => {
                if multi.println(&text).is_err() {
                    outln!("{text}");
                }
            }
            None => outln!("{text}"),
        }
    }

    fn started(&mut self, id: &str, text: String) {
        let Some((multi, bars)) = &mut self.live else {
            outln!("{text}");
            return;
        };
        let bar = multi.add(ProgressBar::new_spinner());
        bar.set_style(
            ProgressStyle::with_template("{prefix} {spinner} {elapsed:>3} {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_prefix(text);
        bar.enable_steady_tick(Duration::from_millis(80));
        bars.insert(id.to_owned(), bar);
    }

    fn progress(&self, id: &str, text: String) {
        match &self.live {
            Some((_, bars)) => {
                if let Some(bar) = bars.get(id) {
                    bar.set_message(text.trim().to_owned());
                }
            }
            None => outln!("{text}"),
        }
    }

    fn finished(&mut self, id: &str, text: String) {
        if let Some((_, bars)) = &mut self.live
            && let Some(bar) = bars.remove(id)
        {
            bar.finish_and_clear();
        }
        self.line(text);
    }
}

impl Drop for Timeline {
    fn drop(&mut self) {
        if let Some((multi, bars)) = &mut self.live {
            for (_, bar) in bars.drain() {
                bar.finish_and_clear();
            }
            let _ = multi.clear();
        }
    }
}

fn secs(d: Duration) -> String {
    format!("{:6.2}s", d.as_secs_f64())
}

/// Runs the demo. Ctrl-C, SIGTERM or SIGHUP cancels its calls (their commands killed) and
/// ends it with 128 + the signal's number, its temporary project removed.
pub async fn run(args: &DemoArgs) -> ExitCode {
    // Installed first: a signal from now on cancels the calls (once the session is open)
    // instead of ending the process without its destructors.
    let mut signals = Signals::install();
    // After a signal, output nobody reads does not hold the run.
    super::exit_when_output_stalls_after_a_signal();
    let dir = match tempfile::Builder::new()
        .prefix("toolwright-demo-")
        .tempdir()
    {
        Ok(dir) => dir,
        Err(e) => {
            // The sample project has nowhere to go: nothing to run the turn on.
            eoutln!(
                "toolwright demo: cannot create a temporary directory for the sample project in {} (TMPDIR names the directory to use): {e}",
                std::env::temp_dir().display()
            );
            return ExitCode::from(2);
        }
    };
    let root = std::fs::canonicalize(dir.path()).unwrap_or_else(|_| dir.path().to_path_buf());
    if let Err(e) = write_project(&root) {
        eoutln!("toolwright demo: cannot write the sample project: {e}");
        return ExitCode::from(2);
    }
    // A signal while the session opens (MCP servers can take their startup timeout) ends
    // the run there: the servers being started go with the dropped future.
    let options = SessionOptions::isolated(root.clone());
    let opened = tokio::select! {
        opened = Session::open(&options) => opened,
        code = signals.next() => return ExitCode::from(code),
    };
    let session = match opened {
        Ok(s) => s,
        Err(e) => {
            eoutln!("toolwright demo: {e}");
            return ExitCode::from(2);
        }
    };
    let mut turn = turn::parse(
        TURN,
        if args.no_pace {
            Duration::ZERO
        } else {
            Duration::from_millis(25)
        },
    );
    let root_text = root.display().to_string();
    for (_, item) in &mut turn.items {
        if let TurnItem::ToolUse(tool_use) = item {
            turn::replace_in_strings(&mut tool_use.input, "{{ROOT}}", &root_text);
        }
    }

    outln!("Toolwright demo: a recorded model turn replayed through the full pipeline");
    outln!("  project:  {root_text} (a copy of a small Python project with a bug)");
    outln!(
        "  settings: .claude/settings.json (allow rules, a deny rule for `rm -rf`, a PreToolUse hook)"
    );
    outln!("  mcp:      .mcp.json starts `toolwright serve` on docs/ as the MCP server `docs`");
    for server in session
        .mcp
        .as_ref()
        .map(|m| m.servers())
        .unwrap_or_default()
    {
        outln!(
            "            server `{}` ({}): {:?}, {} tools",
            server.name,
            server.transport,
            server.state,
            server.tool_count
        );
    }
    for notice in &session.notices {
        outln!("  note:     {notice}");
    }
    outln!();
    let mut timeline = Timeline::new();
    let error = turn.error.take();
    let replayed = replay(
        &session,
        TurnSource::Recorded(turn),
        !args.no_pace,
        |at, event| match event {
            ReplayEvent::Text(text) => {
                timeline.line(format!("{}  model  {}", secs(at), text.trim()))
            }
            ReplayEvent::Added => {}
            ReplayEvent::Started(tool_use, running) => {
                let others = running.iter().filter(|id| **id != tool_use.id).count();
                let parallel = if others > 0 {
                    format!("   (in parallel with {others} other call(s))")
                } else {
                    String::new()
                };
                let text = format!("{}  ▶ {}{parallel}", secs(at), label(tool_use));
                timeline.started(&tool_use.id, text);
            }
            ReplayEvent::Progress(tool_use, data) => {
                if let Some(line) = data
                    .get("output")
                    .and_then(|o| o.as_str())
                    .and_then(|o| o.lines().last())
                {
                    timeline.progress(
                        &tool_use.id,
                        format!("{}    … {}: {line}", secs(at), tool_use.name),
                    );
                }
            }
            ReplayEvent::Finished(record) => {
                let mark = if record.outcome.result.is_error {
                    "✗"
                } else {
                    "✓"
                };
                timeline.finished(
                    &record.tool_use.id,
                    format!(
                        "{}  {mark} {}   {}   {}",
                        secs(at),
                        ran_label(&record.tool_use, &record.outcome),
                        decision_text(&record.outcome),
                        ms(record.outcome.duration)
                    ),
                );
                for message in record
                    .outcome
                    .messages_before
                    .iter()
                    .chain(&record.outcome.messages_after)
                {
                    if let tool_core::Message::Attachment(a) = message {
                        // The context as the hook wrote it, without the model's wrapping.
                        let text = toolwright::agent::without_reminder(&a.text)
                            .split_once(" hook additional context: ")
                            .map_or(a.text.as_str(), |(_, text)| text);
                        timeline.line(format!("           ↳ hook: {text}"));
                    }
                }
            }
        },
    );
    let (result, signalled) = cancel_on_signal(&session, signals, replayed).await;
    drop(timeline);
    if let Some(code) = signalled {
        outln!("\nThe demo was cancelled by a signal.");
        // The bundled MCP server gets a moment to end (and to remove its session
        // directory); a second signal ends it.
        let code = super::end_mcp_servers_after_signal(&session, &mut super::Signals::install())
            .await
            .unwrap_or(code);
        return ExitCode::from(code);
    }

    outln!(
        "\n  #  {:<42}  {:<42} {:>15}  {:>9}  {:>7}   persisted",
        "call",
        "decision",
        "arrived→started",
        "took",
        "result"
    );
    for (i, call) in result.calls.iter().enumerate() {
        let outcome = &call.outcome;
        let size = outcome.result.content.joined_text().len();
        let mut name = label(&call.tool_use);
        if name.chars().count() > 42 {
            name = format!("{}…", name.chars().take(41).collect::<String>());
        }
        let started = call
            .started
            .map_or_else(|| "-".to_owned(), |s| format!("{:.2}s", s.as_secs_f64()));
        outln!(
            " {:>2}  {:<42}  {:<42} {:>15}  {:>9}  {:>7}   {}",
            i + 1,
            name,
            decision_text(outcome),
            format!("{:.2}s→{started}", call.arrived.as_secs_f64()),
            ms(outcome.duration),
            format!("{size} B"),
            outcome
                .persisted
                .as_ref()
                .map_or_else(|| "no".to_owned(), |p| p.display().to_string())
        );
    }
    // What the same calls would have cost after the stream ended (batch mode), with the
    // durations measured now and the same scheduling rules.
    let planned: Vec<PlannedCall> = result
        .calls
        .iter()
        .map(|c| PlannedCall {
            concurrency_safe: c.outcome.concurrency_safe,
            arrival: Duration::ZERO,
            duration: c.outcome.duration,
        })
        .collect();
    let batch = result.stream_end + schedule_makespan(&planned, tool_exec::DEFAULT_MAX_CONCURRENCY);
    let saved = batch.saturating_sub(result.total);
    outln!(
        "\nThe response streamed for {:.2}s; the last result was ready {:.2}s after it began.",
        result.stream_end.as_secs_f64(),
        result.total.as_secs_f64()
    );
    outln!(
        "Running the same calls after the stream ended would take about {:.2}s: streaming saved {:.2}s ({:.0}%).",
        batch.as_secs_f64(),
        saved.as_secs_f64(),
        100.0 * saved.as_secs_f64() / batch.as_secs_f64().max(f64::EPSILON)
    );
    // The bundled MCP server gets to exit on its own, which removes its session directory
    // (killed, it left it in the temporary directory); a signal ends that (and it) at once.
    let mut signals = Signals::install();
    tokio::select! {
        () = session.close_mcp() => {}
        code = signals.next() => return ExitCode::from(code),
    }
    if let Some(e) = &error {
        eoutln!("toolwright demo: the bundled turn is malformed: {e}");
        return ExitCode::from(1);
    }
    if args.keep {
        let kept = dir.keep();
        outln!("\nThe project is kept in {}", kept.display());
    }
    ExitCode::SUCCESS
}
