//! Helpers shared by the integration tests: run a tool through the same steps the executor
//! uses (schema, validate_input, call) and return what the model would see.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;
use tool_core::{
    ProgressSender, Tool, ToolOutput, ToolUseContext, ValidationError, tool_use_error,
};

/// A failed call: the model text, and the validation code when `validate_input` refused.
#[derive(Debug)]
pub struct Failure {
    pub text: String,
    pub code: Option<i32>,
}

pub async fn run(
    tool: &dyn Tool,
    ctx: &ToolUseContext,
    input: Value,
) -> Result<ToolOutput, Failure> {
    let input = tool.parse_input(input).map_err(|e| Failure {
        text: e.to_model_text(),
        code: None,
    })?;
    tool.validate_input(&input, ctx)
        .await
        .map_err(|e: ValidationError| Failure {
            text: tool_use_error(&e.message),
            code: e.error_code,
        })?;
    let out = tool
        .call(input, ctx.clone(), ProgressSender::none())
        .await
        .map(|r| r.data)
        .map_err(|e| Failure {
            text: e.to_model_text(),
            code: None,
        })?;
    check_renders_like_the_call(tool, &out);
    Ok(out)
}

/// Every successful call in these tests also checks that its structured output, given back
/// as a PostToolUse hook's `updatedToolOutput`, renders as the call did (notices a call adds
/// in a `<system-reminder>` are not part of the structured output).
fn check_renders_like_the_call(tool: &dyn Tool, out: &ToolOutput) {
    let rendered = tool.render_output(&out.structured);
    if out.content.joined_text().contains("<system-reminder>") {
        assert!(
            rendered.is_some(),
            "{}: the output does not deserialise",
            tool.name()
        );
        return;
    }
    assert_eq!(
        rendered.as_ref(),
        Some(&out.content),
        "{}: the structured output {} does not render as the call",
        tool.name(),
        out.structured
    );
}

/// The text content of a successful call.
pub async fn text(tool: &dyn Tool, ctx: &ToolUseContext, input: Value) -> String {
    match run(tool, ctx, input).await {
        Ok(out) => out.content.joined_text(),
        Err(f) => panic!("call failed: {}", f.text),
    }
}

/// The failure of a call that must fail.
pub async fn fail(tool: &dyn Tool, ctx: &ToolUseContext, input: Value) -> Failure {
    match run(tool, ctx, input).await {
        Ok(out) => panic!("call succeeded: {:?}", out.content),
        Err(f) => f,
    }
}

/// Sets a file's mtime `secs` seconds after the epoch-based base, so orderings are stable.
pub fn set_mtime(path: &Path, secs: u64) {
    let when = SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000 + secs);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

/// Moves a file's mtime into the future (a later change the cache has not seen).
pub fn bump_mtime(path: &Path) {
    let when = SystemTime::now() + Duration::from_secs(30);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

pub fn ctx(dir: &Path) -> ToolUseContext {
    ToolUseContext::new(dir)
}

/// Live (not zombie) processes whose process group is `pgid`.
pub fn live_in_group(pgid: i32) -> Vec<i32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
            continue;
        };
        let fields: Vec<&str> = after.split(' ').collect();
        if fields.len() > 2 && fields[0] != "Z" && fields[2].parse::<i32>() == Ok(pgid) {
            pids.push(pid);
        }
    }
    pids
}

/// Polls until nothing of group `pgid` is alive (signals are delivered asynchronously).
pub async fn gone_within(pgid: i32, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if live_in_group(pgid).is_empty() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    live_in_group(pgid).is_empty()
}

/// Runs the test `name` of this test binary again, in `dir` with the variable `var` set to
/// `dir` (the test reads it to know it is the second run), and returns what it printed.
/// With `nobody_exe` it runs as the user `nobody` (through `setpriv`) from a copy of the
/// binary made there (mode 755), which `nobody` can run whatever the permissions of the
/// checkout's own directories; `None` when `setpriv` cannot run a command as `nobody`.
/// Without, it runs as this user.
pub fn rerun_test(name: &str, var: &str, dir: &Path, nobody_exe: Option<&Path>) -> Option<Output> {
    use std::os::unix::fs::PermissionsExt as _;
    const AS_NOBODY: [&str; 3] = ["--reuid=65534", "--regid=65534", "--clear-groups"];
    let mut command = match nobody_exe {
        Some(exe) => {
            std::fs::copy(std::env::current_exe().unwrap(), exe).unwrap();
            std::fs::set_permissions(exe, std::fs::Permissions::from_mode(0o755)).unwrap();
            let probe = Command::new("setpriv").args(AS_NOBODY).arg("true").status();
            if !probe.is_ok_and(|s| s.success()) {
                return None;
            }
            let mut command = Command::new("setpriv");
            command.args(AS_NOBODY).arg(exe);
            command
        }
        None => Command::new(std::env::current_exe().unwrap()),
    };
    let out = command
        .args(["--exact", name])
        .current_dir(dir)
        .env(var, dir)
        .output()
        .unwrap();
    Some(out)
}

/// Asserts that a [`rerun_test`] ran its one test and it passed.
pub fn assert_rerun_passed(out: &Output) {
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.contains("1 passed"),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
