//! Review 30, the binary: the Cron tools are not offered by the commands that never fire a
//! job (`agent`, `run`, `serve`), and `toolwright tools` says why; `run`'s line for a call
//! escapes every hidden character the model wrote in it (a zero-width space too). Real
//! `toolwright` processes in temporary directories.

use std::path::Path;
#[cfg(feature = "internal")]
use std::process::Stdio;

#[cfg(feature = "internal")]
use serde_json::Value;
use serde_json::json;

use crate::binary::{output_with_stdin, toolwright_command};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `toolwright ARGS` in `dir`, its user settings kept out of the way, `stdin` written to it.
fn toolwright(args: &[&str], dir: &Path, stdin: Option<&str>) -> std::process::Output {
    let mut command = toolwright_command(args, dir);
    command
        .env("CLAUDE_CONFIG_DIR", dir.join(".no-user-config"))
        .env_remove("ENABLE_TOOL_SEARCH")
        .env_remove("CLAUDE_CODE_SIMPLE");
    output_with_stdin(command, stdin)
}

/// The Cron tools of the `internal` build.
#[cfg(feature = "internal")]
const CRON_TOOLS: [&str; 3] = ["CronCreate", "CronDelete", "CronList"];

/// `toolwright tools` still lists the Cron tools of this build (a host that polls
/// `CronStore::due_jobs` can offer them, and `cargo xtask profiles` finds them there), but
/// says they are not offered and why: no command of this binary ever fires a job. Every
/// other tool is offered. They used to be listed, and offered, as any other.
#[cfg(feature = "internal")]
#[test]
fn tools_says_the_cron_tools_are_not_offered_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let out = toolwright(&["tools", "--json"], dir.path(), None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let tools: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tools = tools.as_array().unwrap();
    for name in CRON_TOOLS {
        let tool = tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} is not listed: {tools:?}"));
        assert_eq!(tool["offered"], false, "{tool}");
        let why = tool["not_offered"].as_str().unwrap_or_default();
        assert!(
            why.contains("never fire") && why.contains("due_jobs"),
            "{tool}"
        );
    }
    for tool in tools
        .iter()
        .filter(|t| !CRON_TOOLS.contains(&t["name"].as_str().unwrap()))
    {
        assert_eq!(tool["offered"], true, "{tool}");
        assert!(tool.get("not_offered").is_none(), "{tool}");
    }
    let out = toolwright(&["tools"], dir.path(), None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    let line = table
        .lines()
        .find(|l| l.starts_with("CronCreate "))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(line.contains("not offered"), "{line}");
    // Why, once, on standard error (the table's lines stay rows).
    let said = text(&out.stderr);
    assert!(
        said.contains("CronCreate, CronDelete, CronList are listed but not offered by `agent`, `run` or `serve`: the jobs they schedule would never fire"),
        "{said}"
    );
    let read = table.lines().find(|l| l.starts_with("Read ")).unwrap();
    assert!(!read.contains("not offered"), "{read}");
}

/// `toolwright run` answers a CronCreate call as a call of a tool it does not have (as the
/// agent loop's model, which was not offered it, would get it): nothing is scheduled and no
/// durable job is written for a later session. It used to answer "Scheduled ... Next fire:"
/// for a job nothing would ever fire.
#[cfg(feature = "internal")]
#[test]
fn run_answers_a_cron_call_as_a_tool_it_does_not_have() {
    let dir = tempfile::tempdir().unwrap();
    let call = json!({"type": "tool_use", "id": "t1", "name": "CronCreate",
        "input": {"cron": "* * * * *", "prompt": "check the build", "durable": true}});
    let out = toolwright(
        &["run", "--json", "--mode", "bypassPermissions", "-"],
        dir.path(),
        Some(&format!("{call}\n")),
    );
    let message: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", text(&out.stdout), text(&out.stderr)));
    assert_eq!(
        message["content"][0]["content"],
        "<tool_use_error>Error: No such tool available: CronCreate</tool_use_error>",
        "{message}"
    );
    assert!(!dir.path().join(".claude/scheduled_tasks.json").exists());
}

/// The agent loop's requests carry no Cron tool (neither in `tools` nor among the deferred
/// tools' names), while the other tools of the `internal` build (Sleep) are there; a
/// CronCreate call the model makes anyway is answered as a tool that does not exist. The
/// review saw a `* * * * *` job "scheduled", then never fired, its next fire time in the past.
#[cfg(feature = "internal")]
#[test]
fn the_agent_offers_no_cron_tool() {
    use crate::model_api::{Reply, agent, full, results, serve, stderr, turn};
    let dir = tempfile::tempdir().unwrap();
    let (url, seen) = serve(move |i, _| -> Reply {
        if i == 0 {
            full(turn(
                None,
                &[(
                    "toolu_c",
                    "CronCreate",
                    json!({"cron": "* * * * *", "prompt": "check"}),
                )],
            ))
        } else {
            full(turn(Some("Done."), &[]))
        }
    });
    let out = agent(&url, dir.path(), &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    // The whole request: its tools, and the deferred tools' names wherever they are.
    let first = seen[0].body.to_string();
    let offered = seen[0].tool_names();
    assert!(first.contains("Sleep"), "{offered:?}");
    for name in CRON_TOOLS {
        assert!(!first.contains(name), "{name} is offered: {offered:?}");
    }
    let answered = results(&seen[1].messages()[2]);
    assert_eq!(
        answered[0].1["content"],
        "<tool_use_error>Error: No such tool available: CronCreate</tool_use_error>",
        "{answered:?}"
    );
}

/// `toolwright serve` lists no Cron tool to its client (Sleep, of the same build, is
/// listed): nothing in it fires a job.
#[cfg(feature = "internal")]
#[test]
fn serve_lists_no_cron_tool() {
    use std::io::{BufRead, BufReader, Write};
    let dir = tempfile::tempdir().unwrap();
    let mut child = toolwright_command(&["serve", "--cwd"], dir.path())
        .arg(dir.path())
        .env("CLAUDE_CONFIG_DIR", dir.path().join(".no-user-config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "review30", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    let mut listed = None;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == 2 {
            listed = Some(message);
            break;
        }
    }
    drop(stdin);
    let _ = child.wait();
    let listed = listed.expect("no answer to tools/list");
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"Sleep"), "{names:?}");
    for name in CRON_TOOLS {
        assert!(!names.contains(&name), "{name} is listed: {names:?}");
    }
}

/// `run`'s line for a call shows every hidden character of what the model wrote there as
/// an escape: a zero-width space (U+200B) in a skill's name or a call's id as `\u{200b}`,
/// as the right-to-left override (U+202E) already was, so that `Skill(gr​eet)` cannot pass
/// for `Skill(greet)`. It used to print the zero-width space as it is.
#[test]
fn run_escapes_zero_width_characters_in_a_calls_line() {
    let dir = tempfile::tempdir().unwrap();
    let call = json!({"type": "tool_use", "id": "t\u{200b}1", "name": "Skill",
        "input": {"skill": "gr\u{200b}eet\u{202e}x\u{a0}y"}});
    let out = toolwright(&["run", "-"], dir.path(), Some(&format!("{call}\n")));
    let stdout = text(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.contains("Skill("))
        .unwrap_or_else(|| panic!("{stdout}\n{}", text(&out.stderr)));
    assert!(
        line.contains("Skill(gr\\u{200b}eet\\u{202e}x\\u{a0}y)"),
        "{line}"
    );
    assert!(line.contains("[t\\u{200b}1]"), "{line}");
    assert!(
        !line.contains(['\u{200b}', '\u{202e}', '\u{a0}']),
        "{line:?}"
    );
}
