//! `toolwright run [FILE|-]`: runs the tool_use blocks of a model response.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};
use tool_exec::{LoopEvent, ToolUse};

use super::{
    ReplayEvent, Signals, TurnSource, cancel_on_signal, decision_text, escape_terminal_codes, ms,
    replay,
};
use crate::session::{Session, SessionArgs, SessionOptions, offered_builtin_tools};
use crate::turn::{self, TurnItem, TurnParser};
use toolwright::agent::{CallHookTexts, split_hook_messages, tool_search, without_reminder};

/// Arguments of `toolwright run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The model response: Anthropic streaming events (raw SSE), a saved non-streaming
    /// response (one `{"type":"message",...}` document), or JSONL with one tool_use block a
    /// line. A file, or `-` / nothing for standard input.
    pub input: Option<PathBuf>,
    #[command(flatten)]
    pub session: SessionArgs,
    /// Replay the recorded timing (SSE deltas 20 ms apart; JSONL `at_ms`).
    #[arg(long)]
    pub pace: bool,
    /// Print exactly the user message the API expects next (one tool_result per tool_use,
    /// in order, then what hooks and skills added for the model as text blocks).
    #[arg(long)]
    pub json: bool,
}

/// The input fields that name what a call is about, for the tools whose input has none of
/// those [`ToolUse::describe`] shows (`command`, `file_path`, `pattern`): WebFetch's `url`,
/// NotebookEdit's `notebook_path`, Skill's `skill`, ToolSearch's `query`, the Task tools' id
/// (`taskId`, `task_id`, `shell_id`) or a new task's `subject`, CronCreate's `cron`, an
/// Agent call's `description`. The first one the input has is shown.
const SHOWN_INPUTS: [&str; 10] = [
    "url",
    "notebook_path",
    "skill",
    "query",
    "taskId",
    "task_id",
    "shell_id",
    "subject",
    "cron",
    "description",
];

/// How many characters of a call's input its line shows, as [`ToolUse::describe`] shows.
const SHOWN_INPUT_CHARS: usize = 40;

/// `NAME(input)` for a call's line: [`ToolUse::describe`], or for a tool without any of
/// the inputs it shows, the first of [`SHOWN_INPUTS`] (cut as it cuts), so that each call's
/// line names the input that ran.
fn call_label(tool_use: &ToolUse) -> String {
    let described = tool_use.describe();
    if described != tool_use.name {
        return described;
    }
    let shown = SHOWN_INPUTS.iter().find_map(|k| {
        tool_use
            .input
            .get(*k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    });
    match shown {
        Some(s) if s.chars().count() > SHOWN_INPUT_CHARS => format!(
            "{}({}…)",
            tool_use.name,
            s.chars().take(SHOWN_INPUT_CHARS).collect::<String>()
        ),
        Some(s) => format!("{}({s})", tool_use.name),
        None => described,
    }
}

/// [`call_label`] of the input a finished call ran with, and the model's beside it when a hook
/// or the user rewrote it (as [`super::ran_label`] says it).
fn ran_call_label(tool_use: &ToolUse, outcome: &tool_exec::CallOutcome) -> String {
    match &outcome.input_rewritten {
        Some(input) => {
            let mut ran = tool_use.clone();
            ran.input = input.clone();
            format!(
                "{} (input rewritten from {})",
                call_label(&ran),
                call_label(tool_use)
            )
        }
        None => call_label(tool_use),
    }
}

/// A result's content as the text mode shows it: its text, and a line for what is no text
/// (an image, ToolSearch's tool references), which would otherwise show as nothing.
fn shown_content(content: &tool_core::ToolResultContent) -> String {
    use tool_core::{ContentBlock, ImageSource, ToolResultContent};
    let ToolResultContent::Blocks(blocks) = content else {
        return content.joined_text();
    };
    let mut lines: Vec<String> = Vec::new();
    let mut references: Vec<&str> = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text { text } => lines.push(text.clone()),
            ContentBlock::Image { source } => {
                let ImageSource::Base64 { media_type, .. } = source;
                lines.push(format!("[an image, {media_type}]"));
            }
            ContentBlock::ToolReference { tool_name } => references.push(tool_name),
            _ => lines.push("[a block that is not text]".to_owned()),
        }
    }
    if !references.is_empty() {
        lines.push(format!("[tools loaded: {}]", references.join(", ")));
    }
    lines.join("\n")
}

/// How many lines of a result (or of a text for the model) the text mode shows; a line
/// says how many more there are.
const SHOWN_LINES: usize = 20;

/// The line that says how many lines of a text the text mode left out, indented by
/// `indent` (none when it left out none).
fn more_lines(text: &str, indent: &str) {
    let more = text.lines().count().saturating_sub(SHOWN_LINES);
    if more > 0 {
        let lines = if more == 1 { "line" } else { "lines" };
        outln!("{indent}… {more} more {lines} (--json shows all)");
    }
}

/// Texts for the model as the text mode shows them: each unwrapped, its first
/// [`SHOWN_LINES`] lines (then how many more there are), the first marked `↳`, indented by
/// `indent`.
fn show_texts<'a>(texts: impl IntoIterator<Item = &'a String>, indent: &str) {
    for text in texts {
        let text = without_reminder(text);
        for (i, line) in text.lines().take(SHOWN_LINES).enumerate() {
            let mark = if i == 0 { "↳" } else { " " };
            outln!(
                "{}",
                escape_terminal_codes(format!("{indent}{mark} {line}").trim_end())
            );
        }
        more_lines(text, &format!("{indent}  "));
    }
}

/// `text` (a call's label, its id: the model's to choose) for a line that names a call:
/// every hidden character escaped ([`tool_core::escape_hidden`]): control characters, line
/// breaks (`\n`, `\r`) and tabs (`\t`), bidirectional controls (U+202E), zero-width and
/// other format characters (U+200B), white space other than ASCII's, so that one call keeps
/// one line, cannot print what would pass for another call's, and `Skill(gr\u{200b}eet)`
/// does not pass for `Skill(greet)`.
fn on_one_line(text: &str) -> String {
    tool_core::escape_hidden(text)
}

/// Refuses a run whose input (`-`, none, or a name of standard input such as `/dev/stdin`)
/// and a `--settings` or `--mcp-config` value both read standard input: the settings would
/// take the model's turn as their text, or the turn would be found empty.
fn one_reader_of_standard_input(args: &RunArgs) -> Result<(), String> {
    let input_is_stdin = match &args.input {
        None => true,
        Some(p) => p.as_os_str() == "-" || crate::session::names_standard_input(p),
    };
    let readers = crate::session::standard_input_readers();
    if !input_is_stdin || readers.is_empty() {
        return Ok(());
    }
    let input = args
        .input
        .as_ref()
        .map_or_else(|| "-".to_owned(), |p| p.display().to_string());
    Err(two_readers_of_standard_input(&readers, &input))
}

/// The refusal of a run whose `input` and the flags in `readers` (`--settings /dev/stdin`,
/// `--mcp-config /dev/fd/0`) all read standard input. Its advice names what those flags
/// give: the settings, the MCP configuration, or both.
fn two_readers_of_standard_input(readers: &[String], input: &str) -> String {
    let settings = readers.iter().any(|r| r.starts_with("--settings"));
    let mcp_config = readers.iter().any(|r| r.starts_with("--mcp-config"));
    let what = match (settings, mcp_config) {
        (true, true) => "the settings and the MCP configuration",
        (false, true) => "the MCP configuration",
        _ => "the settings",
    };
    format!(
        "{} and the run's input ({input}) both read standard input: there is only one. Give {what} another way (a file, inline JSON, <(...)), or the model's turn as a FILE",
        readers.join(" and ")
    )
}

/// The input's text, and why standard input stopped before its end if it did (a read that
/// failed part-way, such as a connection reset: what was read before still runs, as in a
/// live read). An input that cannot be read at all is an error. Bytes that are not UTF-8
/// become U+FFFD (as an SSE client decodes a stream), with a warning: the blocks they are
/// not in still run.
fn read_input(input: Option<&PathBuf>) -> Result<(String, Option<String>), String> {
    let (bytes, name, cut_short) = match input {
        Some(path) if path.as_os_str() != "-" => (
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?,
            path.display().to_string(),
            None,
        ),
        _ => {
            let (bytes, failed) = read_stdin_to_end();
            let failed = failed.map(|e| format!("cannot read standard input: {e}"));
            match failed {
                Some(e) if bytes.is_empty() => return Err(e),
                failed => (bytes, "standard input".to_owned(), failed),
            }
        }
    };
    let mut decoder = Utf8Decoder::named(name);
    let mut text = decoder.decode(&bytes);
    // A character cut at the end of the input is a bad one; one cut where reading failed
    // is no news.
    if cut_short.is_none() {
        text.push_str(&decoder.finish());
    }
    Ok((text, cut_short))
}

/// Reads standard input to its end, or to the first read that fails: the bytes read, and
/// the failure. A descriptor set non-blocking by whoever shares it is waited on, as
/// [`read_stdin_live`] does.
fn read_stdin_to_end() -> (Vec<u8>, Option<std::io::Error>) {
    let mut bytes = Vec::new();
    let failure = super::read_stdin_chunks(|chunk| {
        bytes.extend_from_slice(chunk);
        true
    });
    (bytes, failure)
}

/// The model turn to run: read whole (a file, or `--pace`), or from standard input as it
/// comes.
enum Input {
    Recorded(turn::Turn),
    Live {
        items: tokio::sync::mpsc::UnboundedReceiver<TurnItem>,
        reader: tokio::task::JoinHandle<InputEnd>,
    },
}

/// How reading the input ended.
#[derive(Default)]
struct InputEnd {
    /// Why it stopped before its end, if it did.
    problem: Option<InputProblem>,
    /// Why the model stopped, as the response said (`max_tokens`: it was cut off).
    stop_reason: Option<String>,
    /// The output tokens the response reported.
    output_tokens: Option<u64>,
}

/// Why the input stopped being read before its end.
enum InputProblem {
    /// It is malformed there.
    Malformed(String),
    /// Reading it failed.
    Unreadable(String),
}

/// Reads standard input as it comes and hands over each item once it is complete, so that
/// a model response streaming in (`curl ... | toolwright run`) has its blocks run while the
/// rest of it is still arriving. Bytes that are not UTF-8 become U+FFFD, with a warning, as
/// [`read_input`] does. The reader ends with the first problem, if there is one, and at an
/// SSE stream's `message_stop`: the response is over, whether or not the connection is.
fn read_stdin_live() -> (
    tokio::sync::mpsc::UnboundedReceiver<TurnItem>,
    tokio::task::JoinHandle<InputEnd>,
) {
    let (chunk_tx, mut chunks) = tokio::sync::mpsc::unbounded_channel();
    // A thread of its own, not the runtime's blocking pool, which the runtime waits for at
    // exit: a read nobody ends (a terminal, after a signal) must not hold the process.
    std::thread::spawn(move || {
        if let Some(e) = super::read_stdin_chunks(|chunk| chunk_tx.send(Ok(chunk.to_vec())).is_ok())
        {
            let _ = chunk_tx.send(Err(e));
        }
    });
    let (item_tx, items) = tokio::sync::mpsc::unbounded_channel();
    let reader = tokio::spawn(async move {
        let mut decoder = Utf8Decoder::named("standard input".to_owned());
        let mut parser = TurnParser::new(Duration::ZERO);
        let send = |items: Vec<(Duration, TurnItem)>| {
            for (_, item) in items {
                let _ = item_tx.send(item);
            }
        };
        let mut unreadable = None;
        let mut ended = false;
        loop {
            match chunks.recv().await {
                Some(Ok(bytes)) => send(parser.feed(&decoder.decode(&bytes))),
                Some(Err(e)) => {
                    unreadable = Some(format!("cannot read standard input: {e}"));
                    break;
                }
                None => {
                    ended = true;
                    break;
                }
            }
            if parser.error().is_some() || parser.is_complete() {
                break;
            }
        }
        // A character cut at the end of the input is a bad one; one cut where reading
        // stopped early (a malformed line) is no news.
        if ended {
            send(parser.feed(&decoder.finish()));
        }
        let turn = parser.finish();
        send(turn.items);
        InputEnd {
            problem: match (unreadable, turn.error) {
                (Some(e), _) => Some(InputProblem::Unreadable(e)),
                (None, Some(e)) => Some(InputProblem::Malformed(e)),
                (None, None) => None,
            },
            stop_reason: turn.stop_reason,
            output_tokens: turn.output_tokens,
        }
    });
    (items, reader)
}

/// UTF-8 decoding of input that arrives in pieces (or whole): a character split between two
/// reads is kept whole, and each invalid sequence becomes one U+FFFD (as
/// [`String::from_utf8_lossy`] does), the first with a warning naming the input.
#[derive(Default)]
struct Utf8Decoder {
    /// What the warning calls the input (`standard input`, a file's path).
    name: String,
    /// The start of a character whose last bytes have not come yet.
    carry: Vec<u8>,
    /// Bytes decoded before `carry`.
    offset: usize,
    /// Where the first bad byte was, once one was found (and said).
    first_bad: Option<usize>,
}

impl Utf8Decoder {
    fn named(name: String) -> Self {
        Self {
            name,
            ..Self::default()
        }
    }

    fn decode(&mut self, bytes: &[u8]) -> String {
        // Joined only when a character was cut at the end of the last piece.
        let joined;
        let mut rest = if self.carry.is_empty() {
            bytes
        } else {
            let mut carry = std::mem::take(&mut self.carry);
            carry.extend_from_slice(bytes);
            joined = carry;
            joined.as_slice()
        };
        let mut out = String::with_capacity(rest.len());
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    out.push_str(text);
                    self.offset += rest.len();
                    break;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    out.push_str(&String::from_utf8_lossy(&rest[..valid]));
                    let Some(bad) = e.error_len() else {
                        // An incomplete character at the end: its other bytes may follow.
                        self.offset += valid;
                        self.carry = rest[valid..].to_vec();
                        break;
                    };
                    self.bad_byte_at(self.offset + valid);
                    out.push(char::REPLACEMENT_CHARACTER);
                    self.offset += valid + bad;
                    rest = &rest[valid + bad..];
                }
            }
        }
        out
    }

    /// The end of the input: a character left incomplete is a bad one.
    fn finish(&mut self) -> String {
        if self.carry.is_empty() {
            return String::new();
        }
        self.bad_byte_at(self.offset);
        self.carry.clear();
        char::REPLACEMENT_CHARACTER.to_string()
    }

    fn bad_byte_at(&mut self, offset: usize) {
        if self.first_bad.is_none() {
            self.first_bad = Some(offset);
            eoutln!(
                "toolwright run: {} is not valid UTF-8 (first bad byte at offset {offset}): read with U+FFFD in place of the bad bytes",
                self.name
            );
        }
    }
}

/// Prints a result for each of `turn`'s tool_use blocks when none of them ran (a signal
/// while the session opened): Claude Code's rejection text, as for calls a user interrupts
/// before they start, then (`--json`) the interrupt text, as the agent loop adds it. A call
/// of a tool this build does not have (a name that is no built-in tool's and no MCP
/// tool's, `mcp__...`, or one the session would not offer) is answered as unknown, as it
/// would have been had the session opened.
fn unstarted_results<'a>(
    tool_uses: impl IntoIterator<Item = &'a ToolUse>,
    options: &SessionOptions,
    json_mode: bool,
) {
    let known = offered_builtin_tools(options, |_| false);
    let outcomes: Vec<(&ToolUse, tool_exec::CallOutcome)> = tool_uses
        .into_iter()
        .map(|t| {
            let exists =
                t.name.starts_with("mcp__") || tool_core::find_tool(&known, &t.name).is_some();
            let outcome = if exists {
                tool_exec::CallOutcome::synthetic(t, tool_exec::REJECT_MESSAGE)
            } else {
                tool_exec::CallOutcome::unknown_tool(t)
            };
            (t, outcome)
        })
        .collect();
    if json_mode {
        let mut content: Vec<Value> = outcomes
            .iter()
            .map(|(_, outcome)| outcome.result.to_api_json())
            .collect();
        if outcomes
            .iter()
            .any(|(_, o)| o.ending != tool_exec::Ending::UnknownTool)
        {
            content
                .push(json!({"type": "text", "text": tool_core::INTERRUPT_MESSAGE_FOR_TOOL_USE}));
        }
        if !content.is_empty() {
            outln!("{}", json!({"role": "user", "content": content}));
        }
        return;
    }
    for (t, outcome) in outcomes {
        let what = if outcome.ending == tool_exec::Ending::UnknownTool {
            "unknown tool"
        } else {
            "not run"
        };
        outln!(
            "✗ {}  [{}]  {what}",
            on_one_line(&call_label(t)),
            on_one_line(&t.id)
        );
        outln!(
            "    {}",
            escape_terminal_codes(&outcome.result.content.joined_text())
        );
    }
}

/// Runs `toolwright run`. Exit codes: 0 when every block was run (whatever the tools
/// answered; also when a rejection stopped the turn and the later blocks were answered as
/// not run, which stderr says), 1 when the input was malformed part-way (the blocks before
/// the problem still ran and their results are printed), 2 for bad arguments or settings,
/// 128 + the signal's number after Ctrl-C, SIGTERM or SIGHUP (the calls are cancelled,
/// their commands killed, every block still gets its result, and the MCP servers get
/// [`MCP_SIGNAL_GRACE`](super::MCP_SIGNAL_GRACE) to end before they are killed).
pub async fn run(args: &RunArgs) -> ExitCode {
    if let Err(e) = one_reader_of_standard_input(args) {
        eoutln!("toolwright run: {e}");
        return ExitCode::from(2);
    }
    // Standard input is read as it comes (a live stream), unless the recorded timing is
    // to be replayed; a file is read whole.
    let live = !args.pace && args.input.as_ref().is_none_or(|p| p.as_os_str() == "-");
    // Why standard input read whole stopped part-way, if it did.
    let mut cut_short = None;
    let input = if live {
        let (items, reader) = read_stdin_live();
        Input::Live { items, reader }
    } else {
        let text = match read_input(args.input.as_ref()) {
            Ok((text, failed)) => {
                cut_short = failed;
                text
            }
            Err(e) => {
                eoutln!("toolwright run: {e}");
                return ExitCode::from(2);
            }
        };
        let per_delta = if args.pace {
            Duration::from_millis(20)
        } else {
            Duration::ZERO
        };
        Input::Recorded(turn::parse(&text, per_delta))
    };
    // From here a signal cancels the calls instead of ending the process on the spot: the
    // commands run in sessions of their own, and only their owner can kill them.
    let mut signals = Signals::install();
    // After a signal, output nobody reads does not hold the run, nor, as a last resort 25 s
    // after it, anything else (a session that cannot open, a call stuck in a system call);
    // a second signal exits at once.
    super::exit_when_output_stalls_after_a_signal();
    super::exit_at_the_latest_after_a_signal();
    // A signal while the session opens (MCP servers can take their startup timeout) ends
    // the run there: the servers being started go with the dropped future.
    let mut options = args.session.options(false);
    options.offer_tool_search = !toolwright::agent::tool_search::off_in_env();
    let opened = tokio::select! {
        opened = Session::open(&options) => opened,
        code = signals.next() => {
            // No call ran, and each block read still gets its result: refused, as the
            // calls a user interrupts before they start are.
            match input {
                Input::Recorded(turn) => {
                    unstarted_results(turn.tool_uses(), &options, args.json)
                }
                Input::Live { mut items, .. } => {
                    let mut read = Vec::new();
                    while let Ok(item) = items.try_recv() {
                        if let TurnItem::ToolUse(tool_use) = item {
                            read.push(tool_use);
                        }
                    }
                    unstarted_results(&read, &options, args.json);
                }
            }
            eoutln!("toolwright run: cancelled by a signal");
            return ExitCode::from(code);
        }
    };
    let mut session = match opened {
        Ok(session) => session,
        Err(e) => {
            eoutln!("toolwright run: {e}");
            // A session that failed after a signal came (a hung mount that then failed):
            // the run ends as the signal asked.
            if let Some(code) = super::signal_received() {
                eoutln!("toolwright run: cancelled by a signal");
                return ExitCode::from(code);
            }
            return ExitCode::from(2);
        }
    };
    // Tool search as the agent loop's request would have it with these tools (in `auto`
    // mode, only past its threshold): off, a ToolSearch call is answered as a call of a tool
    // that does not exist; on, a call of a deferred tool, whose schema that request would
    // not have carried, gets Claude Code's hint when its input fails the schema.
    let offered = tool_search::offered_in_env(session.ctx.tools().to_vec());
    session.ctx = session.ctx.clone().with_tools(offered);
    let withheld =
        tool_search::tools_for_request(tool_search::mode_in_env(), "", session.ctx.tools(), &[])
            .withheld;
    let api_result = |tool_use: &ToolUse, outcome: &tool_exec::CallOutcome| {
        let mut result = outcome.result.to_api_json();
        // The hint names the tool, not the alias it was called by.
        let called = tool_core::find_tool(session.ctx.tools(), &tool_use.name)
            .map_or(tool_use.name.as_str(), |t| t.name());
        if outcome.ending == tool_exec::Ending::InvalidInput && withheld.contains(called) {
            tool_search::add_schema_not_sent_hint(&mut result, called);
        }
        result
    };
    for notice in &session.notices {
        eoutln!("toolwright: {notice}");
    }
    let json_mode = args.json;
    let (source, recorded_end, reader) = match input {
        Input::Recorded(mut turn) => {
            // A read that failed is why the input stopped, whatever it looks like there.
            let malformed = turn.error.take().map(InputProblem::Malformed);
            let end = InputEnd {
                problem: cut_short.take().map(InputProblem::Unreadable).or(malformed),
                stop_reason: turn.stop_reason.take(),
                output_tokens: turn.output_tokens,
            };
            (TurnSource::Recorded(turn), end, None)
        }
        Input::Live { items, reader } => {
            (TurnSource::Live(items), InputEnd::default(), Some(reader))
        }
    };
    let replayed = replay(&session, source, args.pace, |at, event| {
        match event {
            ReplayEvent::Finished(record) => {
                let outcome = &record.outcome;
                let texts = CallHookTexts::of(outcome);
                // In `--json` the model's texts go in the message, after the results.
                if !json_mode {
                    let mark = if outcome.result.is_error {
                        "✗"
                    } else {
                        "✓"
                    };
                    outln!(
                        "{mark} {}  [{}]  {}  {}",
                        on_one_line(&ran_call_label(&record.tool_use, outcome)),
                        on_one_line(&record.tool_use.id),
                        on_one_line(&decision_text(outcome)),
                        ms(outcome.duration)
                    );
                    let shown = match api_result(&record.tool_use, outcome)["content"].take() {
                        Value::String(text) => text,
                        _ => shown_content(&outcome.result.content),
                    };
                    for line in shown.lines().take(SHOWN_LINES) {
                        outln!("    {}", escape_terminal_codes(line));
                    }
                    more_lines(&shown, "    ");
                    // What the model reads after the result (hook context, a skill's body).
                    show_texts(texts.context(), "    ");
                }
                // The user's notices (hooks' system messages), as they come.
                for notice in &texts.notices {
                    eoutln!("toolwright run: hook: {}", escape_terminal_codes(notice));
                }
            }
            ReplayEvent::Text(text) if !json_mode => {
                outln!("· {}", escape_terminal_codes(text.trim()));
            }
            ReplayEvent::Text(_)
            | ReplayEvent::Started(..)
            | ReplayEvent::Added
            | ReplayEvent::Progress(..) => {}
        }
        let _ = at;
    });
    let (result, mut signalled) = cancel_on_signal(&session, signals, replayed).await;
    // A live input was read to its end (or its first problem) when the replay ended, unless
    // a signal stopped it: then it is read no further.
    let input_end = match reader {
        Some(reader) if signalled.is_none() => reader.await.unwrap_or_else(|e| InputEnd {
            problem: Some(InputProblem::Unreadable(format!(
                "standard input could not be read to its end ({e})"
            ))),
            ..InputEnd::default()
        }),
        Some(reader) => {
            reader.abort();
            InputEnd::default()
        }
        None => recorded_end,
    };
    let problem = input_end.problem;
    // The batch is complete, as the agent loop sees it before its next request (not after a
    // signal, malformed input, a refused prompt or a hook's stop): PostToolBatch hooks see
    // every call with the tool_result content the model would see.
    let complete = signalled.is_none()
        && problem.is_none()
        && !result.calls.is_empty()
        && result
            .calls
            .iter()
            .all(|c| c.outcome.stop_turn.is_none() && !c.outcome.interrupt_turn);
    let mut batch_context = Vec::new();
    let verdict = if complete {
        let batch: Vec<(tool_exec::ToolUse, Value)> = result
            .calls
            .iter()
            .map(|c| {
                let content = api_result(&c.tool_use, &c.outcome)["content"].take();
                (c.tool_use.clone(), content)
            })
            .collect();
        // A signal while they run stops them (their process groups go with the dropped
        // future) and the run, as during the calls.
        let mut signals = Signals::install();
        tokio::select! {
            verdict = session
                .hooks
                .loop_event(LoopEvent::PostToolBatch { calls: &batch }, &result.context) => {
                Some(verdict)
            }
            code = signals.next() => {
                signalled = Some(code);
                None
            }
        }
    } else {
        None
    };
    if let Some(verdict) = verdict {
        let (context, notices) = split_hook_messages(&verdict.messages);
        for notice in notices {
            eoutln!("toolwright run: hook: {}", escape_terminal_codes(&notice));
        }
        if !json_mode {
            show_texts(&context, "  ");
        }
        batch_context = context;
        let mut reasons = verdict.blocking;
        if let Some(reason) = verdict.stop {
            reasons.push(reason.unwrap_or_else(|| "continue: false".to_owned()));
        }
        if !reasons.is_empty() {
            eoutln!(
                "toolwright run: a PostToolBatch hook stopped the turn: {} (an agent would make \
                 no further request)",
                escape_terminal_codes(&reasons.join("; "))
            );
        }
    }
    // Background (`async`) hooks the calls started run to their end (each within its
    // timeout) before the run exits, which would kill them; a signal stops the wait (and
    // them, with the process). It interrupts no call: every call is over by then, and an
    // agent would not have waited for these hooks before its next request.
    let mut stopped_waiting = None;
    if signalled.is_none() {
        let pending = session.hooks.background_pending();
        if pending > 0 {
            let mut signals = Signals::install();
            eoutln!("{}", super::waiting_for_hooks_line("run", pending));
            // On a signal the wait ends; the results are still printed, then the run
            // exits as the signal says.
            tokio::select! {
                () = session.hooks.wait_background() => {}
                code = signals.next() => stopped_waiting = Some(code),
            }
        }
    }
    // A call answered with a rejection that stops the turn (a PermissionRequest hook's
    // `interrupt: true` or `continue: false`): the executor did not start the response's
    // later calls (those already running beside it, read-only ones, keep their results),
    // and the agent loop makes no further request.
    let rejected = result.calls.iter().find(|c| c.outcome.interrupt_turn);
    // What background (`async`) hooks delivered during the replay and the PostToolBatch
    // hooks: an agent sends it with its next request, after the batch's own texts; their
    // notices go to stderr.
    let (late, late_notices) = split_hook_messages(&session.hooks.take_background_messages());
    for notice in late_notices {
        eoutln!("toolwright run: hook: {}", escape_terminal_codes(&notice));
    }
    if !json_mode {
        show_texts(&late, "  ");
    }
    // Standard input that could not be read at all: no message (as for a file that cannot
    // be read), only the error.
    let nothing_read =
        matches!(problem, Some(InputProblem::Unreadable(_))) && result.calls.is_empty();
    if json_mode && !nothing_read && !result.calls.is_empty() {
        // As the agent loop builds the next user message: every tool_result first, then the
        // texts the calls added for the model, call by call, then why calls did not run (a
        // response cut off in the middle of one, a user's interrupt) or the batch hooks'
        // context.
        let mut content: Vec<Value> = result
            .calls
            .iter()
            .map(|c| api_result(&c.tool_use, &c.outcome))
            .collect();
        for call in &result.calls {
            content.extend(
                CallHookTexts::of(&call.outcome)
                    .context()
                    .map(|text| json!({"type": "text", "text": text})),
            );
        }
        let unparsed: Vec<String> = result
            .calls
            .iter()
            .filter(|c| !c.tool_use.input.is_object())
            .map(|c| c.tool_use.name.clone())
            .collect();
        if input_end.stop_reason.as_deref() == Some("max_tokens") && !unparsed.is_empty() {
            content.push(
                json!({"type": "text", "text": toolwright::agent::cut_off_call_text(
                    input_end.output_tokens,
                    &unparsed,
                )}),
            );
        }
        // As the agent loop adds it: after a signal that stopped the calls (or the batch
        // hooks before the next request), and after a rejection that stopped the turn.
        if signalled.is_some() || rejected.is_some() {
            content
                .push(json!({"type": "text", "text": tool_core::INTERRUPT_MESSAGE_FOR_TOOL_USE}));
        }
        content.extend(
            batch_context
                .iter()
                .chain(&late)
                .map(|text| json!({"type": "text", "text": text})),
        );
        outln!("{}", json!({"role": "user", "content": content}));
    } else if result.calls.is_empty()
        && signalled.is_none()
        && stopped_waiting.is_none()
        && problem.is_none()
    {
        // No tool_use, no tool_result: the turn is over, and there is no message to send.
        eoutln!("toolwright run: the response has no tool_use blocks: there is nothing to run");
    }
    // A PreToolUse or PostToolUse hook's `continue: false`: the agent loop still runs the
    // rest of the response's calls (as here), then makes no further request; a later
    // rejection or a signal may still have kept some from running.
    for call in &result.calls {
        if let Some(reason) = &call.outcome.stop_turn {
            let why = reason
                .as_deref()
                .map_or_else(String::new, |r| format!(": {r}"));
            let others = result.calls.len() - 1;
            // A call that never ran: refused (a rule, a hook, the user), invalid, or
            // cancelled before it started.
            let not_run = result
                .calls
                .iter()
                .filter(|c| !std::ptr::eq(*c, call) && c.outcome.call_duration.is_none())
                .count();
            let rest = match (others, not_run) {
                (0, _) => String::new(),
                (_, 0) => "; the response's other calls still ran".to_owned(),
                (n, k) => format!(
                    "; {k} of the response's {n} other calls did not run (refused or cancelled)"
                ),
            };
            eoutln!(
                "toolwright run: a hook stopped the turn after {} [{}]{} (an agent would \
                 make no further request{rest})",
                on_one_line(&call_label(&call.tool_use)),
                on_one_line(&call.tool_use.id),
                on_one_line(&why)
            );
        }
    }
    if let Some(call) = rejected {
        let (who, why) = match &call.outcome.decision_reason {
            Some(tool_core::DecisionReason::Hook { hook, reason }) => {
                (format!("a {hook} hook"), reason.clone())
            }
            _ => ("a rejection".to_owned(), None),
        };
        let why = why
            .filter(|r| !r.is_empty())
            .map_or_else(String::new, |r| format!(": {r}"));
        eoutln!(
            "toolwright run: {} stopped the turn at {} [{}]{} (an agent would make no further \
             request{})",
            on_one_line(&who),
            on_one_line(&call_label(&call.tool_use)),
            on_one_line(&call.tool_use.id),
            on_one_line(&why),
            later_calls_after_a_stop(&result.calls, call)
        );
    }
    // Background commands (`run_in_background`, or moved there at their timeout) end with
    // the run, which kills them: said here, since their results told the model they run.
    super::name_background_commands_stopped("run", &session.ctx);
    if let Some(code) = signalled.or(stopped_waiting) {
        eoutln!("toolwright run: cancelled by a signal");
        // The MCP servers get a moment to end what they run for the calls (a second signal
        // ends it).
        let code = super::end_mcp_servers_after_signal(&session, &mut super::Signals::install())
            .await
            .unwrap_or(code);
        return ExitCode::from(code);
    }
    // The servers get time to exit on their own; a signal ends that (and them) at once.
    let mut signals = Signals::install();
    tokio::select! {
        () = session.close_mcp() => {}
        code = signals.next() => return ExitCode::from(code),
    }
    match problem {
        Some(InputProblem::Malformed(e)) => {
            eoutln!(
                "toolwright run: the input is malformed: {}{}",
                escape_terminal_codes(&e),
                blocks_before(result.calls.len())
            );
            ExitCode::from(1)
        }
        Some(InputProblem::Unreadable(e)) => {
            eoutln!("toolwright run: {e}{}", blocks_before(result.calls.len()));
            ExitCode::from(if result.calls.is_empty() { 2 } else { 1 })
        }
        None => ExitCode::SUCCESS,
    }
}

/// Whether `call` was cancelled before it started (a rejection or a signal kept it from
/// running).
fn never_started(call: &super::CallRecord) -> bool {
    call.outcome.ending == tool_exec::Ending::Cancelled && call.outcome.call_duration.is_none()
}

/// What became of the calls after `stop` (the call whose rejection stopped the turn), for
/// the line that says so: those that had not started were not run (the executor answered
/// each with the rejection text); those already running or finished beside it (read-only
/// calls run in parallel) keep their results. Nothing when there are none.
fn later_calls_after_a_stop(calls: &[super::CallRecord], stop: &super::CallRecord) -> String {
    let later: Vec<&super::CallRecord> = calls
        .iter()
        .skip_while(|c| !std::ptr::eq(*c, stop))
        .skip(1)
        .collect();
    let not_run = later.iter().filter(|c| never_started(c)).count();
    let was = if not_run == 1 { "was" } else { "were" };
    match (later.len(), not_run) {
        (0, _) => String::new(),
        (1, 1) => "; the response's 1 later call had not started and was not run".to_owned(),
        (1, 0) => {
            "; the response's 1 later call had already started and keeps its result".to_owned()
        }
        (n, k) if k == n => {
            format!("; the response's {n} later calls had not started and were not run")
        }
        (n, 0) => {
            format!("; the response's {n} later calls had already started and keep their results")
        }
        (n, k) => format!(
            "; {k} of the response's {n} later calls had not started and {was} not run, the \
             others had already started and keep their results"
        ),
    }
}

/// What ran of an input that stopped at a problem: ` (the 2 blocks before it were run)`;
/// nothing when no block came before it.
fn blocks_before(ran: usize) -> String {
    match ran {
        0 => String::new(),
        1 => " (the block before it was run)".to_owned(),
        n => format!(" (the {n} blocks before it were run)"),
    }
}

#[cfg(test)]
mod tests {
    use super::Utf8Decoder;

    /// The advice of a run refused for two readers of standard input names what the flag
    /// gives: an `--mcp-config` is no settings (found by review: `--mcp-config /dev/stdin`
    /// was told to "give the settings another way").
    #[test]
    fn the_advice_names_what_reads_standard_input() {
        for (flags, what) in [
            (&["--mcp-config /dev/stdin"][..], "the MCP configuration"),
            (&["--settings /dev/fd/0"][..], "the settings"),
            (
                &["--settings /dev/stdin", "--mcp-config /dev/stdin"][..],
                "the settings and the MCP configuration",
            ),
        ] {
            let readers: Vec<String> = flags.iter().map(|f| (*f).to_owned()).collect();
            let text = super::two_readers_of_standard_input(&readers, "-");
            assert!(
                text.ends_with(&format!(
                    "there is only one. Give {what} another way (a file, inline JSON, <(...)), \
                     or the model's turn as a FILE"
                )),
                "{flags:?}: {text}"
            );
        }
    }

    /// Bytes decoded in pieces, split anywhere (inside a character too), read as the whole
    /// does with `String::from_utf8_lossy`, and the first bad byte is found where it is.
    #[test]
    fn utf8_split_anywhere_decodes_as_the_whole() {
        let inputs: [&[u8]; 5] = [
            "aé€😀z".as_bytes(),
            b"ok \xff then \xe2\x82 cut \xf0\x9f\x98\x80",
            b"\xe2\x82",
            b"\xc3",
            b"",
        ];
        for input in inputs {
            let whole = String::from_utf8_lossy(input);
            let first_bad = std::str::from_utf8(input).err().map(|e| e.valid_up_to());
            for size in 1..=input.len().max(1) {
                let mut decoder = Utf8Decoder::default();
                let mut text: String = input.chunks(size).map(|c| decoder.decode(c)).collect();
                text.push_str(&decoder.finish());
                assert_eq!(text, whole, "{input:?} in pieces of {size}");
                assert_eq!(
                    decoder.first_bad, first_bad,
                    "{input:?} in pieces of {size}"
                );
            }
        }
    }
}
