//! The session transcript: the conversation as Claude Code writes it, one JSON line per
//! message, at the `transcript_path` hooks are given. Stop hooks read it to see what the
//! model did (`jq 'select(.type == "assistant") | .message.content[]'`).
//!
//! Each line has Claude Code's fields: `type` (`user` or `assistant`), `message` (the
//! Messages API message), `uuid`, `parentUuid` (the line before), `sessionId`, `cwd`,
//! `timestamp` (RFC 3339, UTC), `isSidechain`, `userType` (`external`) and `version`
//! (Toolwright's); a sub-agent's lines add `agentId`. As in Claude Code, an assistant
//! message is written a content block per line, each block as soon as it closes, so a
//! PreToolUse hook finds the call it is asked about. Each such line's `message` is the
//! response's as Claude Code writes it while streaming: `id`, `type` (`message`), `role`,
//! `model`, `content` (the one block), `stop_reason`, `stop_sequence` and `usage` as known
//! when the line is written (a block written while the response streams has
//! `message_start`'s usage and a null `stop_reason`; one written after the response ended,
//! its stop reason and final usage: the final `output_tokens` of a response whose last block
//! closed before it ended is in none of its lines, as in Claude Code's transcripts), and
//! the line has `requestId`, the response's `request-id` header, when the API sent one
//! ([`Transcript::observe`] is told the stream's events). `stop_sequence` is always null:
//! Toolwright sends no stop sequences. The file is owner-only and only ever appended to.
//!
//! An append that fails (a full disk) or is cut short is undone: the file is cut back to
//! its length before it, so a hook never reads a torn line. The transcript then stops:
//! nothing more is written to it, so hooks see it as it was, and [`Transcript::sync`] or
//! [`Transcript::blocks`] returns, that once, the notice for the user that says so. A
//! transcript whose path is not absolute (the session has no directory to keep it in) is
//! written nowhere.

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tool_exec::StreamEvent;

/// What is known of the response being received: the fields of its lines.
#[derive(Debug, Default)]
struct Response {
    id: Option<String>,
    model: Option<String>,
    request_id: Option<String>,
    stop_reason: Option<String>,
    usage: Option<Value>,
}

/// Appends a conversation's messages to its transcript file as they settle.
#[derive(Debug)]
pub struct Transcript {
    path: PathBuf,
    session_id: String,
    cwd: String,
    agent_id: Option<String>,
    /// Messages written whole.
    written: usize,
    /// Blocks of the message after those written early ([`blocks`](Self::blocks)).
    early_blocks: usize,
    /// How many content blocks the last message written whole had: the loop may add text
    /// to it later (a Stop hook's feedback), which is then written as a line of its own.
    last_blocks: usize,
    last_uuid: Option<String>,
    failed: bool,
    /// The response being received, since its `message_start` ([`observe`](Self::observe)).
    response: Response,
}

impl Transcript {
    /// A transcript at `path` (created on the first write) for session `session_id` in `cwd`.
    /// A `path` that is not absolute (empty: the session has no directory) is written
    /// nowhere: relative, it would name a file in this process's working directory, which
    /// no hook is given.
    pub fn new(path: impl Into<PathBuf>, session_id: impl Into<String>, cwd: &Path) -> Self {
        Self {
            path: path.into(),
            session_id: session_id.into(),
            cwd: cwd.display().to_string(),
            agent_id: None,
            written: 0,
            early_blocks: 0,
            last_blocks: 0,
            last_uuid: None,
            failed: false,
            response: Response::default(),
        }
    }

    /// Makes this the transcript of sub-agent `agent_id` (`isSidechain`, `agentId`); its
    /// directory is created on the first write.
    #[must_use]
    pub fn sidechain(mut self, agent_id: impl Into<String>) -> Self {
        self.agent_id = Some(agent_id.into());
        self
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Takes note of an event of the response being received, for the fields of its lines:
    /// `message_start` begins a response (its id, model and request id), a usage report and
    /// the stop reason update it.
    pub fn observe(&mut self, event: &StreamEvent) {
        let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_owned());
        match event {
            StreamEvent::MessageStart {
                id,
                model,
                request_id,
            } => {
                self.response = Response {
                    id: non_empty(id),
                    model: non_empty(model),
                    request_id: request_id.clone(),
                    ..Response::default()
                };
            }
            StreamEvent::Usage { .. } => {
                self.response.usage =
                    crate::agent::TokenUsage::reported(event).map(|usage| usage.to_json());
            }
            StreamEvent::StopReason(reason) => self.response.stop_reason = Some(reason.clone()),
            _ => {}
        }
    }

    /// The assistant message of one `block` of the response being received, with the
    /// response's fields as known now.
    fn assistant(&self, block: &Value) -> Value {
        let r = &self.response;
        json!({
            "id": r.id,
            "type": "message",
            "role": "assistant",
            "model": r.model,
            "content": [block],
            "stop_reason": r.stop_reason,
            "stop_sequence": null,
            "usage": r.usage,
        })
    }

    /// Appends the messages of `messages` not written yet, in one write. A message is
    /// written once: the loop calls this when the last one is settled (before a request,
    /// before the Stop hooks, at the end: never while a response streams). An assistant
    /// message's blocks already written by [`blocks`](Self::blocks) are not written again;
    /// the others get the fields of the response last [observed](Self::observe), which are
    /// then forgotten: a next response that never says `message_start` (a client of
    /// another kind) has its lines written with none. A failed write is undone and ends
    /// the transcript (the conversation goes on; hooks see what was written before it): the
    /// notice for the user that says so is returned, the first time only (the caller shows
    /// it on standard error).
    pub fn sync(&mut self, messages: &[Value]) -> Option<String> {
        if self.failed || !self.path.is_absolute() {
            return None;
        }
        let mut lines = Lines::after(self.last_uuid.clone());
        // Blocks added to the last user message written (text merged into it since).
        if let Some(last) = self.written.checked_sub(1).and_then(|i| messages.get(i))
            && last["role"] == "user"
        {
            let now = block_count(last);
            if now > self.last_blocks
                && let Some(added) = last["content"].as_array().map(|b| &b[self.last_blocks..])
            {
                lines.push(self, &json!({"role": "user", "content": added}));
            }
        }
        if messages.len() <= self.written && lines.text.is_empty() {
            self.response = Response::default();
            return None;
        }
        for message in &messages[self.written.min(messages.len())..] {
            if message["role"] == "assistant" {
                let blocks = message["content"].as_array().map_or(&[][..], Vec::as_slice);
                let skip = std::mem::take(&mut self.early_blocks).min(blocks.len());
                for block in &blocks[skip..] {
                    lines.push(self, &self.assistant(block));
                }
            } else {
                lines.push(self, message);
            }
        }
        self.response = Response::default();
        match self.append(lines) {
            Ok(()) => {
                self.written = messages.len();
                self.last_blocks = messages.last().map_or(0, block_count);
                None
            }
            Err(notice) => Some(notice),
        }
    }

    /// Appends the assistant content blocks `blocks` of the message being received (the
    /// blocks after those already written), a line each, before the message is whole. A
    /// failed write ends the transcript as in [`sync`](Self::sync), whose notice it returns.
    pub fn blocks(&mut self, blocks: &[Value]) -> Option<String> {
        if self.failed || blocks.is_empty() || !self.path.is_absolute() {
            return None;
        }
        let mut lines = Lines::after(self.last_uuid.clone());
        for block in blocks {
            lines.push(self, &self.assistant(block));
        }
        match self.append(lines) {
            Ok(()) => {
                self.early_blocks += blocks.len();
                None
            }
            Err(notice) => Some(notice),
        }
    }

    fn line(&self, message: &Value, parent: Option<&str>, uuid: &str) -> String {
        let mut line = json!({
            "parentUuid": parent,
            "isSidechain": self.agent_id.is_some(),
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": env!("CARGO_PKG_VERSION"),
            "type": if message["role"] == "assistant" { "assistant" } else { "user" },
            "message": message,
            "uuid": uuid,
            "timestamp": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        });
        if let Some(agent_id) = &self.agent_id {
            line["agentId"] = json!(agent_id);
        }
        if message["role"] == "assistant"
            && let Some(request_id) = &self.response.request_id
        {
            line["requestId"] = json!(request_id);
        }
        line.to_string()
    }

    /// Writes `lines` in one append. When that fails, or writes only part of them, the file
    /// is cut back to its length before (no torn line is left for a hook to read) and the
    /// transcript ends: the error is the notice for the user.
    fn append(&mut self, lines: Lines) -> Result<(), String> {
        if lines.text.is_empty() {
            return Ok(());
        }
        let file = || {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(&self.path)
        };
        let opened = file().or_else(|e| match self.path.parent() {
            // A sub-agent's transcript is the first thing in its directory.
            Some(dir) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(dir)?;
                file()
            }
            _ => Err(e),
        });
        let appended = opened.and_then(|mut f| {
            let before = f.metadata()?.len();
            match f.write_all(lines.text.as_bytes()) {
                Ok(()) => Ok(()),
                Err(e) => {
                    // What went in of this append goes: the lines before it stay whole.
                    let undone = match f.set_len(before) {
                        Ok(()) => String::new(),
                        Err(cut) => format!(
                            " (and its last line could not be removed: {cut}; it may be cut short)"
                        ),
                    };
                    Err(std::io::Error::new(e.kind(), format!("{e}{undone}")))
                }
            }
        });
        match appended {
            Ok(()) => {
                self.last_uuid = lines.last;
                Ok(())
            }
            Err(e) => {
                tracing::warn!(path = %self.path.display(), error = %e, "cannot write the transcript; hooks see it as it was");
                self.failed = true;
                Err(format!(
                    "the transcript {} stopped being written: {e}. Hooks given its path (`transcript_path`) now see it as it was before this point.",
                    self.path.display()
                ))
            }
        }
    }
}

/// How many content blocks `message` has (a string is one).
fn block_count(message: &Value) -> usize {
    match &message["content"] {
        Value::Array(blocks) => blocks.len(),
        Value::Null => 0,
        _ => 1,
    }
}

/// Lines to append, each the child of the one before.
struct Lines {
    text: String,
    last: Option<String>,
}

impl Lines {
    fn after(last: Option<String>) -> Self {
        Self {
            text: String::new(),
            last,
        }
    }

    fn push(&mut self, transcript: &Transcript, message: &Value) {
        let uuid = uuid::Uuid::new_v4().to_string();
        self.text
            .push_str(&transcript.line(message, self.last.as_deref(), &uuid));
        self.text.push('\n');
        self.last = Some(uuid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_lines(path: &Path) -> Vec<Value> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn messages_are_appended_once_each_in_claude_codes_shape() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut t = Transcript::new(&path, "s1", dir.path());
        let mut messages = vec![json!({"role": "user", "content": "hi"})];
        t.sync(&messages);
        messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": "hello"}]}));
        t.sync(&messages);
        t.sync(&messages);
        let lines = read_lines(&path);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["type"], "user");
        assert_eq!(lines[0]["parentUuid"], Value::Null);
        assert_eq!(lines[0]["message"]["content"], "hi");
        assert_eq!(lines[0]["sessionId"], "s1");
        assert_eq!(lines[1]["type"], "assistant");
        assert_eq!(lines[1]["parentUuid"], lines[0]["uuid"]);
        assert_eq!(lines[1]["message"]["content"][0]["text"], "hello");
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    #[test]
    fn blocks_written_early_are_not_written_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/agent-x.jsonl");
        let mut t = Transcript::new(&path, "s1", dir.path()).sidechain("x");
        let mut messages = vec![json!({"role": "user", "content": "go"})];
        t.sync(&messages);
        let blocks = vec![
            json!({"type": "text", "text": "first"}),
            json!({"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}),
            json!({"type": "text", "text": "last"}),
        ];
        t.blocks(&blocks[..2]);
        messages.push(json!({"role": "assistant", "content": blocks}));
        messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}));
        t.sync(&messages);
        let lines = read_lines(&path);
        let contents: Vec<&Value> = lines.iter().map(|l| &l["message"]["content"]).collect();
        assert_eq!(
            contents,
            [
                &json!("go"),
                &json!([{"type": "text", "text": "first"}]),
                &json!([{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]),
                &json!([{"type": "text", "text": "last"}]),
                &json!([{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]),
            ]
        );
        for pair in lines.windows(2) {
            assert_eq!(pair[1]["parentUuid"], pair[0]["uuid"]);
        }
        assert!(
            lines
                .iter()
                .all(|l| l["isSidechain"] == true && l["agentId"] == "x")
        );
    }

    /// A response's fields go on its lines only: after the `sync` that ends it, a response
    /// whose client never said `message_start` gets lines without an id, model, usage or
    /// `requestId`, not the last response's.
    #[test]
    fn a_responses_fields_are_not_lent_to_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut t = Transcript::new(&path, "s1", dir.path());
        let mut messages = vec![json!({"role": "user", "content": "go"})];
        t.sync(&messages);
        t.observe(&StreamEvent::MessageStart {
            id: "msg_1".into(),
            model: "m".into(),
            request_id: Some("req_1".into()),
        });
        let first = json!({"type": "text", "text": "one"});
        t.blocks(std::slice::from_ref(&first));
        messages.push(json!({"role": "assistant", "content": [first]}));
        messages.push(json!({"role": "user", "content": "more"}));
        t.sync(&messages);
        messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": "two"}]}));
        t.sync(&messages);
        let lines = read_lines(&path);
        let assistant: Vec<&Value> = lines.iter().filter(|l| l["type"] == "assistant").collect();
        assert_eq!(assistant[0]["message"]["id"], "msg_1");
        assert_eq!(assistant[0]["requestId"], "req_1");
        assert_eq!(
            assistant[1]["message"],
            json!({"id": null, "type": "message", "role": "assistant", "model": null,
                "content": [{"type": "text", "text": "two"}], "stop_reason": null,
                "stop_sequence": null, "usage": null})
        );
        assert!(assistant[1].get("requestId").is_none(), "{}", assistant[1]);
    }

    /// A session without a directory gives an empty transcript path, from which a
    /// sub-agent's is made relative (`subagents/agent-x.jsonl`): neither is written, where a
    /// relative one would have gone to this process's working directory.
    #[test]
    fn a_transcript_without_an_absolute_path_is_written_nowhere() {
        let relative = PathBuf::from(format!("toolwright-no-transcript-{}", uuid::Uuid::new_v4()));
        let messages = vec![json!({"role": "user", "content": "hi"})];
        for path in [PathBuf::new(), relative.join("subagents/agent-x.jsonl")] {
            let mut t = Transcript::new(&path, "s1", Path::new("/"));
            assert_eq!(t.sync(&messages), None);
            assert_eq!(t.blocks(&[json!({"type": "text", "text": "t"})]), None);
        }
        let made = relative.exists();
        let _ = std::fs::remove_dir_all(&relative);
        assert!(
            !made,
            "{} was made in the working directory",
            relative.display()
        );
    }

    #[test]
    fn text_added_to_a_written_message_is_written_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut t = Transcript::new(&path, "s1", dir.path());
        let mut messages = vec![json!({"role": "user", "content": "go"})];
        t.sync(&messages);
        // An empty answer, then a Stop hook's feedback merged into the prompt's message.
        messages[0]["content"] = json!([
            {"type": "text", "text": "go"},
            {"type": "text", "text": "Stop hook feedback:\nnot done"}
        ]);
        t.sync(&messages);
        t.sync(&messages);
        let lines = read_lines(&path);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(
            lines[1]["message"]["content"],
            json!([{"type": "text", "text": "Stop hook feedback:\nnot done"}])
        );
        assert_eq!(lines[1]["parentUuid"], lines[0]["uuid"]);
    }
}
