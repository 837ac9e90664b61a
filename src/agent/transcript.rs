//! The session transcript: the conversation as Claude Code writes it, one JSON line per
//! message, at the `transcript_path` hooks are given. Stop hooks read it to see what the
//! model did (`jq 'select(.type == "assistant") | .message.content[]'`).
//!
//! Each line has Claude Code's fields: `type` (`user` or `assistant`), `message` (the
//! Messages API message), `uuid`, `parentUuid` (the line before), `sessionId`, `cwd`,
//! `timestamp` (RFC 3339, UTC), `isSidechain` (false), `userType` (`external`) and
//! `version` (Toolwright's). The file is owner-only and only ever appended to.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// Appends a conversation's messages to its transcript file as they settle.
#[derive(Debug)]
pub struct Transcript {
    path: PathBuf,
    session_id: String,
    cwd: String,
    written: usize,
    last_uuid: Option<String>,
    failed: bool,
}

impl Transcript {
    /// A transcript at `path` (created on the first write) for session `session_id` in `cwd`.
    pub fn new(path: impl Into<PathBuf>, session_id: impl Into<String>, cwd: &Path) -> Self {
        Self {
            path: path.into(),
            session_id: session_id.into(),
            cwd: cwd.display().to_string(),
            written: 0,
            last_uuid: None,
            failed: false,
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends the messages of `messages` not written yet, in one write. A message is
    /// written once: the loop calls this when the last one is settled (before a request,
    /// before the Stop hooks, at the end). A failed write is logged and ends the
    /// transcript (the conversation goes on; hooks see what was written).
    pub fn sync(&mut self, messages: &[Value]) {
        if self.failed || messages.len() <= self.written {
            return;
        }
        let mut lines = String::new();
        let mut last = self.last_uuid.clone();
        for message in &messages[self.written..] {
            let uuid = uuid::Uuid::new_v4().to_string();
            let line = json!({
                "parentUuid": last,
                "isSidechain": false,
                "userType": "external",
                "cwd": self.cwd,
                "sessionId": self.session_id,
                "version": env!("CARGO_PKG_VERSION"),
                "type": if message["role"] == "assistant" { "assistant" } else { "user" },
                "message": message,
                "uuid": uuid,
                "timestamp": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            });
            lines.push_str(&line.to_string());
            lines.push('\n');
            last = Some(uuid);
        }
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&self.path)
            .and_then(|mut f| f.write_all(lines.as_bytes()));
        match appended {
            Ok(()) => {
                self.written = messages.len();
                self.last_uuid = last;
            }
            Err(e) => {
                tracing::warn!(path = %self.path.display(), error = %e, "cannot write the transcript; hooks see it as it was");
                self.failed = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let lines: Vec<Value> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
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
}
