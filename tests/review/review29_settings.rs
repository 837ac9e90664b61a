//! What the 29th black-box review found in the binary's settings handling: many malformed
//! rules in a repository's settings, a malformed `deniedMcpServers`, `toolwright tools`
//! saying nothing of broken settings, invisible characters in diagnostics, and the settings'
//! `model` (and `apiKeyHelper`) for `toolwright agent`. Each test runs the real binary on
//! real files in a temp dir.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::model_api;

use crate::binary;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A temp dir, by its real path, with an empty user configuration (`config/`).
fn temp_root() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join("config")).unwrap();
    (dir, root)
}

/// Runs the binary in `cwd` with `args`, `stdin` on its standard input (none: `/dev/null`),
/// the user configuration in `<cwd>/config` (`CLAUDE_CONFIG_DIR`), no trust record but the
/// one a test writes there.
fn toolwright(args: &[&str], cwd: &Path, stdin: Option<&str>) -> Output {
    let mut cmd = binary::toolwright_command(args, cwd);
    cmd.env("CLAUDE_CONFIG_DIR", cwd.join("config"))
        .env("HOME", cwd)
        .env_remove("ANTHROPIC_MODEL");
    binary::output_with_stdin(cmd, stdin)
}

/// One Bash call, as `run` reads it.
fn bash_call(name: &str, command: &str) -> String {
    format!(
        "{}\n",
        json!({"type": "tool_use", "id": "t1", "name": name, "input": {"command": command}})
    )
}

/// Found by review: 80,000 malformed deny rules in an untrusted repository's
/// `.claude/settings.json` made `run` take 38 s (10,000: 0.4 s), as each rule problem the
/// engine found was compared with every diagnostic of the settings loader to say it once.
/// The comparison is a set look-up now: this many rules took the old code minutes (a debug
/// build), and every problem is still said exactly once, with its file.
#[test]
fn many_malformed_rules_are_each_reported_once() {
    const RULES: usize = 60_000;
    let (_dir, root) = temp_root();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    let rules: Vec<String> = (0..RULES).map(|i| format!("Bash(x{i}")).collect();
    std::fs::write(
        root.join(".claude/settings.json"),
        json!({"permissions": {"deny": rules}}).to_string(),
    )
    .unwrap();
    let out = toolwright(
        &["run", "--json", "-"],
        &root,
        Some(&bash_call("Bash", "echo hi")),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    let said: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("mismatched parentheses"))
        .collect();
    assert_eq!(said.len(), RULES, "{}", &err[..err.len().min(2000)]);
    let mut rules_said: Vec<&str> = said
        .iter()
        .map(|l| {
            assert!(
                l.contains(".claude/settings.json: error: deny rule `"),
                "{l}"
            );
            l.split('`').nth(1).unwrap()
        })
        .collect();
    rules_said.sort_unstable();
    rules_said.dedup();
    assert_eq!(rules_said.len(), RULES, "a rule's problem was said twice");
}

/// An MCP configuration whose server `x` is this binary's `serve`, in `dir`, where it runs
/// commands without asking.
fn serve_config(dir: &Path) -> String {
    json!({"mcpServers": {"x": {
        "command": env!("CARGO_BIN_EXE_toolwright"),
        "args": ["serve", "--cwd", dir, "--mode", "bypassPermissions"],
    }}})
    .to_string()
}

/// `run` calling `mcp__x__Bash` to `touch ran` through [`serve_config`]'s server, with
/// `extra` flags.
fn run_through_server(root: &Path, extra: &[&str]) -> Output {
    let config = serve_config(root);
    let mut args = vec![
        "run",
        "--json",
        "--mode",
        "bypassPermissions",
        "--mcp-config",
        &config,
    ];
    args.extend_from_slice(extra);
    args.push("-");
    toolwright(&args, root, Some(&bash_call("mcp__x__Bash", "touch ran")))
}

/// Found by review: a malformed `deniedMcpServers` in an inline `--settings` value (an
/// object instead of an array, an entry with a misspelt key) was only warned about, without
/// naming `--settings`, and the server it meant to deny ran the command. In `--settings` it
/// stops the command (exit 2, naming `--settings`) before any server starts; in a settings
/// file it fails closed: no MCP server starts, and the warning says so.
#[test]
fn a_malformed_mcp_deny_list_stops_the_command_or_blocks_every_server() {
    let (_dir, root) = temp_root();
    // The server works: without a deny list its command runs.
    let out = run_through_server(&root, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(root.join("ran").exists(), "{}", text(&out.stdout));
    std::fs::remove_file(root.join("ran")).unwrap();
    for denied in [
        json!({"serverName": "x"}),
        json!([{"servername": "x"}]),
        json!("x"),
        json!([{"serverName": ""}]),
    ] {
        let settings = json!({"deniedMcpServers": denied}).to_string();
        let out = run_through_server(&root, &["--settings", &settings]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{settings}: {err}");
        assert!(
            err.contains("bad --settings")
                && err.contains("--settings: ")
                && err.contains("deniedMcpServers"),
            "{settings}: {err}"
        );
        assert!(
            !root.join("ran").exists(),
            "{settings}: the denied server ran"
        );
        // In the user's settings file: no server starts, and the call finds no such tool.
        std::fs::write(root.join("config/settings.json"), &settings).unwrap();
        let out = run_through_server(&root, &[]);
        let err = text(&out.stderr);
        assert!(out.status.success(), "{settings}: {err}");
        assert!(
            err.contains("config/settings.json") && err.contains("no MCP server starts"),
            "{settings}: {err}"
        );
        assert!(err.contains("MCP server \"x\""), "{settings}: {err}");
        let message: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(message["content"][0]["is_error"], true, "{message}");
        assert!(
            !root.join("ran").exists(),
            "{settings}: the denied server ran"
        );
        std::fs::remove_file(root.join("config/settings.json")).unwrap();
    }
}

/// The lines `toolwright` wrote to standard error.
fn notices(out: &Output) -> String {
    text(&out.stderr)
}

/// Found by review: `toolwright tools` (without `--mcp`) said nothing of broken settings:
/// invalid JSON in `~/.claude/settings.json`, a misspelt `permisions`, a malformed rule, an
/// untrusted folder whose `env` was ignored. It reports them as `run` does, the same
/// lines on standard error.
#[test]
fn tools_reports_the_settings_problems_run_reports() {
    let (_dir, root) = temp_root();
    let user = root.join("config/settings.json");
    let project = root.join(".claude/settings.json");
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    for (file, settings, said) in [
        (
            &user,
            r#"{"permissions":{"deny":["Bash"]},}"#,
            "invalid JSON",
        ),
        (
            &user,
            r#"{"permisions":{"deny":["Bash"]}}"#,
            "unknown key `permisions`",
        ),
        (&user, r#"{"permissions":{"deny":["Bash("]}}"#, "`Bash(`"),
        (
            &user,
            r#"{"permissions":{"deny":["Wirte(./x)"]}}"#,
            "did you mean `Write`?",
        ),
        (
            &project,
            r#"{"env":{"TW_PROBE":"1"}}"#,
            "this folder is not trusted",
        ),
    ] {
        std::fs::write(file, settings).unwrap();
        let tools = toolwright(&["tools"], &root, None);
        assert!(tools.status.success(), "{settings}: {}", notices(&tools));
        let said_by_tools = notices(&tools);
        assert!(said_by_tools.contains(said), "{settings}: {said_by_tools}");
        // Each problem once (the loader and the engine both find a rule's).
        let lines: Vec<&str> = said_by_tools.lines().collect();
        let mut unique = lines.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), lines.len(), "{said_by_tools}");
        assert_eq!(
            lines.iter().filter(|l| l.contains("Wirte")).count(),
            usize::from(settings.contains("Wirte")),
            "{said_by_tools}"
        );
        let glob = json!({"type": "tool_use", "id": "t1", "name": "Glob",
            "input": {"pattern": "nothing-here"}});
        let run = toolwright(&["run", "--json", "-"], &root, Some(&format!("{glob}\n")));
        assert!(run.status.success(), "{settings}: {}", notices(&run));
        assert_eq!(said_by_tools, notices(&run), "{settings}");
        std::fs::remove_file(file).unwrap();
    }
}

/// Found by review: a zero-width space in a key or a rule was printed raw, so that
/// ``unknown key `permissions​` (did you mean `permissions`?)`` read as nonsense, and
/// `Bash\u{200b}(rm:*)` was said to be an unsupported `Tool(param:value)` rule. Names and
/// values quoted in diagnostics show such characters escaped, and that rule is refused for
/// what it is: a tool name with an invisible character.
#[test]
fn invisible_characters_in_diagnostics_are_shown_escaped() {
    let (_dir, root) = temp_root();
    let out = toolwright(
        &[
            "run",
            "--json",
            "--settings",
            "{\"permissions\u{200b}\":{}}",
            "-",
        ],
        &root,
        Some(""),
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("`permissions\\u{200b}`"), "{err}");
    assert!(!err.contains('\u{200b}'), "{err:?}");
    std::fs::write(
        root.join("config/settings.json"),
        json!({"permissions": {"deny": ["Bash\u{200b}(rm:*)"], "ask\u{a0}": []}}).to_string(),
    )
    .unwrap();
    let out = toolwright(&["run", "--json", "-"], &root, Some(""));
    let err = text(&out.stderr);
    assert!(
        !err.contains('\u{200b}') && !err.contains('\u{a0}'),
        "{err:?}"
    );
    assert!(err.contains("`Bash\\u{200b}(rm:*)`"), "{err}");
    assert!(err.contains("invisible character"), "{err}");
    assert!(!err.contains("param:value"), "{err}");
    assert!(err.contains("`permissions.ask\\u{a0}`"), "{err}");
}

/// Runs `toolwright agent --print` against a stand-in for the Messages API that answers
/// "done", in `dir`, with `extra` flags and `env`: the model the request named, and the
/// run's standard error.
fn agent_model(dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> (String, String) {
    let (url, seen) = model_api::serve(|_, _| model_api::full(model_api::turn(Some("done"), &[])));
    let mut args = vec!["--print"];
    args.extend_from_slice(extra);
    let out = model_api::agent_command(&url, dir, &args, "say done")
        .env("CLAUDE_CONFIG_DIR", dir.join("config"))
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    let seen = seen.lock().unwrap();
    (seen[0].body["model"].as_str().unwrap().to_owned(), err)
}

/// Found by review: the settings' `model` was ignored by `toolwright agent` without a word.
/// It chooses the model as in Claude Code, last in line: `--model`, then `ANTHROPIC_MODEL`
/// (a settings `env` sets it too), then the settings' `model` (an alias such as `haiku`
/// resolved as `--model haiku` is). An `apiKeyHelper`, which this tool layer does not run, is
/// said once to be ignored; an untrusted folder's own `model` is not applied, and says so.
#[test]
fn the_settings_model_chooses_the_agents_model() {
    let (_dir, root) = temp_root();
    let settings = r#"{"model":"claude-opus-4-1"}"#;
    let (model, _) = agent_model(&root, &["--settings", settings], &[]);
    assert_eq!(model, "claude-opus-4-1");
    let (alias, _) = agent_model(&root, &["--settings", r#"{"model":"haiku"}"#], &[]);
    let (flag_alias, _) = agent_model(&root, &["--model", "haiku"], &[]);
    assert_eq!(alias, flag_alias);
    assert_ne!(alias, "haiku");
    let (model, _) = agent_model(
        &root,
        &["--settings", settings],
        &[("ANTHROPIC_MODEL", "from-env")],
    );
    assert_eq!(model, "from-env");
    let (model, _) = agent_model(
        &root,
        &[
            "--settings",
            r#"{"model":"claude-opus-4-1","env":{"ANTHROPIC_MODEL":"from-settings-env"}}"#,
        ],
        &[],
    );
    assert_eq!(model, "from-settings-env");
    let (model, _) = agent_model(
        &root,
        &["--settings", settings, "--model", "from-flag"],
        &[("ANTHROPIC_MODEL", "from-env")],
    );
    assert_eq!(model, "from-flag");
    // In the user's file too.
    std::fs::write(root.join("config/settings.json"), settings).unwrap();
    let (model, _) = agent_model(&root, &[], &[]);
    assert_eq!(model, "claude-opus-4-1");
    std::fs::write(
        root.join("config/settings.json"),
        r#"{"apiKeyHelper":"echo key"}"#,
    )
    .unwrap();
    let (_, err) = agent_model(&root, &[], &[]);
    assert_eq!(err.matches("apiKeyHelper").count(), 1, "{err}");
    assert!(err.contains("ignored"), "{err}");
    std::fs::remove_file(root.join("config/settings.json")).unwrap();
    // An untrusted folder's own `model` is not applied (its files may only restrict), and
    // one that is no string is not read: each said.
    let (default, _) = agent_model(&root, &[], &[]);
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(root.join(".claude/settings.json"), settings).unwrap();
    let (model, err) = agent_model(&root, &[], &[]);
    assert_eq!(model, default);
    assert!(
        err.contains(".claude/settings.json was not applied: this folder is not trusted"),
        "{err}"
    );
    let (model, err) = agent_model(&root, &["--settings", r#"{"model":5}"#], &[]);
    assert_eq!(model, default);
    assert!(err.contains("`model` must be a string"), "{err}");
}

/// The names a deny or ask rule may use without a word (`KNOWN_TOOL_NAMES`, which the
/// settings loader checks rules against) hold every built-in tool of this build, compiled
/// with every feature, and every alias of one, and the agent's Agent tool: a rule naming
/// one of them is never said to name no tool.
#[test]
fn every_tool_of_the_build_is_a_known_tool_name() {
    let known = toolwright::perms::settings::KNOWN_TOOL_NAMES;
    let mut names = vec!["Agent".to_owned(), "Task".to_owned()];
    for entry in toolwright::registry::BUILTIN_TOOLS {
        let tool = (entry.build)();
        names.push(tool.name().to_owned());
        names.extend(tool.aliases().iter().map(|a| (*a).to_owned()));
    }
    assert!(names.len() > 25, "{names:?}");
    for name in names {
        assert!(
            known.contains(&name.as_str()),
            "{name} is not a known tool name"
        );
    }
}
