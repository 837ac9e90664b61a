//! Shared helpers for the integration tests: temp dirs with real hook scripts.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tempfile::TempDir;
use tool_core::{RuleSource, ToolUseContext};
use tool_hooks::{HookRunner, HooksConfig};

/// A temp project dir holding hook scripts and files they write.
pub struct Env {
    pub dir: TempDir,
}

impl Env {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes an executable script and returns its absolute path.
    pub fn script(&self, name: &str, body: &str) -> PathBuf {
        let p = self.path(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&p, body).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap_or_default()
    }

    pub fn ctx(&self) -> ToolUseContext {
        ToolUseContext::new(self.dir.path()).with_session_id("sess-123")
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }
}

/// A runner for a `hooks` object; panics on diagnostics.
pub fn runner(hooks: Value) -> HookRunner {
    let (config, diags) = HooksConfig::from_hooks_value(&hooks, RuleSource::UserSettings);
    assert!(diags.is_empty(), "{diags:?}");
    HookRunner::new(config)
}

/// `{"type": "command", "command": c}`.
pub fn cmd(c: &str) -> Value {
    json!({"type": "command", "command": c})
}

/// One event with one matcher group.
pub fn one(event: &str, matcher: &str, hooks: Vec<Value>) -> Value {
    json!({ event: [{"matcher": matcher, "hooks": hooks}] })
}

/// Processes (not zombies) whose process group is `pgid`.
pub fn live_group_members(pgid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 2..].split_whitespace().collect();
        // state ppid pgrp ...
        if fields.len() > 2 && fields[2].parse::<i32>().ok() == Some(pgid) && fields[0] != "Z" {
            out.push(pid);
        }
    }
    out
}

/// Waits up to 2 s for a process group to be empty.
pub fn wait_group_gone(pgid: i32) -> Vec<i32> {
    for _ in 0..40 {
        let live = live_group_members(pgid);
        if live.is_empty() {
            return live;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    live_group_members(pgid)
}
