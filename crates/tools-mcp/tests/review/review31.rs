//! Client bugs from the 31st review, each against real processes or real configuration
//! files in temporary directories: a server `toolwright` starts is told how deep it sits in
//! a chain of MCP servers (`TOOLWRIGHT_MCP_DEPTH`) and, being one, loads no servers of the
//! configuration scopes (which would start it again without end); a `.mcp.json` in a
//! directory above the project counts, the nearest winning, as in Claude Code; and the
//! error of a server waiting for its next reconnection keeps the server's log out of the
//! parenthesis of its last error.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::common::{call, python_server, tool};
use serde_json::{Value, json};
use tools_mcp::{
    ConfigLoader, ConfigScope, Diagnostic, EnvLookup, McpManager, McpOptions, McpPolicy,
    ServerConfig, Severity, TransportConfig,
};

fn env(pairs: &[(&str, &str)]) -> EnvLookup {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    Arc::new(move |k| map.get(k).cloned())
}

fn write(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, value.to_string()).unwrap();
}

fn shown(diags: &[Diagnostic]) -> String {
    diags
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

fn names(servers: &[ServerConfig]) -> Vec<(&str, ConfigScope)> {
    servers.iter().map(|s| (s.name.as_str(), s.scope)).collect()
}

fn command(server: &ServerConfig) -> &str {
    match &server.transport {
        TransportConfig::Stdio { command, .. } => command,
        other => panic!("{other:?}"),
    }
}

fn opts(env: &[(&str, &str)]) -> McpOptions {
    let map: HashMap<String, String> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let mut o = McpOptions::from_lookup(std::env::temp_dir(), &|k| map.get(k).cloned());
    o.startup_timeout = Duration::from_secs(20);
    o.last_words_wait = Duration::from_secs(2);
    o
}

/// A stdio server whose one tool, `env`, answers the value of `TOOLWRIGHT_MCP_DEPTH` in its
/// environment (`<unset>` without one).
fn env_reporting_server(dir: &Path, name: &str) -> ServerConfig {
    python_server(
        dir,
        name,
        name,
        r#"import os
if m == "initialize":
    answer(i, init(msg, {"tools": {}}))
elif m == "tools/list":
    answer(i, {"tools": [{"name": "env", "inputSchema": {"type": "object"}}]})
elif m == "tools/call":
    seen = os.environ.get("TOOLWRIGHT_MCP_DEPTH", "<unset>")
    answer(i, {"content": [{"type": "text", "text": seen}]})"#,
    )
}

/// What the server `name` of `manager` saw as `TOOLWRIGHT_MCP_DEPTH`.
async fn depth_seen(manager: &McpManager, name: &str) -> String {
    call(&tool(manager, &format!("mcp__{name}__env")), json!({}))
        .await
        .unwrap()
        .data
        .content
        .joined_text()
}

/// A home whose `~/.claude.json` names a user server and a local one for `project`, the
/// project's `.mcp.json` naming one, and a managed directory: each scope holds a server
/// that would start another copy of the process loading them.
struct Chain {
    _dir: tempfile::TempDir,
    project: PathBuf,
    home: PathBuf,
    managed: PathBuf,
}

impl Chain {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let home = dir.path().join("home");
        let managed = dir.path().join("managed");
        std::fs::create_dir_all(&managed).unwrap();
        write(
            &home.join(".claude.json"),
            &json!({
                "mcpServers": {"again": {"command": "toolwright", "args": ["serve"]}},
                "projects": {project.to_str().unwrap(): {
                    "mcpServers": {"local-again": {"command": "toolwright", "args": ["serve"]}}
                }}
            }),
        );
        write(
            &project.join(".mcp.json"),
            &json!({"mcpServers": {"project-again": {"command": "toolwright", "args": ["serve"]}}}),
        );
        Self {
            _dir: dir,
            project,
            home,
            managed,
        }
    }

    /// A loader for the project, the process environment being `HOME` and `extra`, with
    /// `--mcp-config` naming the server `explicit` and the managed settings providing
    /// `provided`.
    fn loader(&self, extra: &[(&str, &str)]) -> ConfigLoader {
        let mut vars = vec![("HOME", self.home.to_str().unwrap())];
        vars.extend_from_slice(extra);
        let provided = json!({"managedMcpServers": {
            "provided": {"type": "http", "url": "https://provided.example.com/mcp"}
        }});
        let (policy, problems) = McpPolicy::from_settings([(true, None, &provided)]);
        assert!(problems.is_empty(), "{problems:?}");
        let mut loader = ConfigLoader::new(&self.project)
            .with_env(env(&vars))
            .with_mcp_config([r#"{"mcpServers": {"explicit": {"command": "x"}}}"#])
            .with_policy(policy);
        loader.managed_dir = Some(self.managed.clone());
        loader
    }
}

/// Every stdio server `toolwright` starts is told its depth in the chain of MCP servers:
/// `TOOLWRIGHT_MCP_DEPTH` one more than the starting process's own (0 when unset or
/// unreadable), and the server's own `env` cannot set it lower. A chain started for real:
/// the depth the first server saw, read as a process with that environment would read it,
/// makes its configuration leave out every scope but `--mcp-config`. Before the fix the
/// server saw no such variable, and a `toolwright serve` named in `~/.claude.json` started
/// copies of itself without end.
#[tokio::test]
async fn servers_are_told_their_depth_and_a_server_loads_no_scopes() {
    let dir = tempfile::tempdir().unwrap();
    let first = env_reporting_server(dir.path(), "first")
        // A configuration cannot reset the count.
        .with_env("TOOLWRIGHT_MCP_DEPTH", "0");
    let (manager, diags) = McpManager::connect(vec![first], opts(&[])).await;
    assert!(diags.is_empty(), "{}", shown(&diags));
    let seen = depth_seen(&manager, "first").await;
    manager.shutdown().await;
    assert_eq!(seen, "1");

    // The first server is itself a client: its configuration, in its environment.
    let chain = Chain::new();
    let (servers, diags) = chain.loader(&[("TOOLWRIGHT_MCP_DEPTH", &seen)]).load();
    assert_eq!(names(&servers), [("explicit", ConfigScope::Dynamic)]);
    let said = shown(&diags);
    assert_eq!(diags.len(), 1, "{said}");
    assert_eq!(diags[0].severity, Severity::Warning, "{said}");
    for part in [
        "TOOLWRIGHT_MCP_DEPTH=1",
        "--mcp-config",
        "\"again\"",
        "\"local-again\"",
        "\"project-again\"",
        "\"provided\"",
    ] {
        assert!(said.contains(part), "{part} not in: {said}");
    }
    assert!(!said.contains('\n'), "one line: {said}");

    // The servers that one starts are told they are one deeper.
    let second = env_reporting_server(dir.path(), "second");
    let (manager, diags) =
        McpManager::connect(vec![second], opts(&[("TOOLWRIGHT_MCP_DEPTH", &seen)])).await;
    assert!(diags.is_empty(), "{}", shown(&diags));
    assert_eq!(depth_seen(&manager, "second").await, "2");
    manager.shutdown().await;

    // An unreadable depth counts as none.
    for unreadable in ["", "deep", "-1", "1.5"] {
        let third = env_reporting_server(dir.path(), "third");
        let (manager, diags) =
            McpManager::connect(vec![third], opts(&[("TOOLWRIGHT_MCP_DEPTH", unreadable)])).await;
        assert!(diags.is_empty(), "{}", shown(&diags));
        assert_eq!(depth_seen(&manager, "third").await, "1", "{unreadable:?}");
        manager.shutdown().await;
    }
}

/// How deep a process is decides which servers it loads: at depth 0 (or an unreadable
/// value) every scope; from depth 1 to 3 only `--mcp-config`, with one warning naming the
/// variable and the servers left out (none without such servers, or with
/// `--strict-mcp-config`, which leaves them out anyway); from depth 4 on none at all, with
/// a warning saying why. An enterprise `managed-mcp.json`, which makes `--mcp-config`
/// ignored, leaves such a server with none. The names of an untrusted project's servers,
/// not read at that depth, are not reported as left out for the folder's trust.
#[test]
fn a_process_started_as_an_mcp_server_loads_only_explicit_servers() {
    let chain = Chain::new();
    let every = [
        ("again", ConfigScope::User),
        ("explicit", ConfigScope::Dynamic),
        ("local-again", ConfigScope::Local),
        ("project-again", ConfigScope::Project),
        ("provided", ConfigScope::Managed),
    ];
    for top in [
        &[][..],
        &[("TOOLWRIGHT_MCP_DEPTH", "0")],
        &[("TOOLWRIGHT_MCP_DEPTH", "x")],
    ] {
        let (servers, diags) = chain.loader(top).load();
        assert_eq!(names(&servers), every, "{top:?}");
        assert!(diags.is_empty(), "{top:?}: {}", shown(&diags));
    }

    for depth in ["1", "3", " 2 "] {
        let loader = chain.loader(&[("TOOLWRIGHT_MCP_DEPTH", depth)]);
        let (servers, diags) = loader.load();
        assert_eq!(
            names(&servers),
            [("explicit", ConfigScope::Dynamic)],
            "{depth}"
        );
        assert_eq!(diags.len(), 1, "{depth}: {}", shown(&diags));
        assert!(
            diags[0]
                .message
                .contains(&format!("TOOLWRIGHT_MCP_DEPTH={}", depth.trim())),
            "{}",
            diags[0]
        );
        // Untrusted, its project's servers were not read at all: nothing to report.
        assert!(
            loader
                .with_project_trusted(false)
                .untrusted_project_servers()
                .is_empty()
        );
        // Strict: the scopes are not read anyway; nothing to say.
        let mut strict = chain.loader(&[("TOOLWRIGHT_MCP_DEPTH", depth)]);
        strict.strict = true;
        let (servers, diags) = strict.load();
        assert_eq!(names(&servers), [("explicit", ConfigScope::Dynamic)]);
        assert!(diags.is_empty(), "{}", shown(&diags));
    }
    // Nothing in the scopes: nothing left out, nothing to say.
    let empty = tempfile::tempdir().unwrap();
    let loader = ConfigLoader::new(empty.path())
        .with_env(env(&[
            ("HOME", empty.path().to_str().unwrap()),
            ("TOOLWRIGHT_MCP_DEPTH", "1"),
        ]))
        .with_mcp_config([r#"{"mcpServers": {"explicit": {"command": "x"}}}"#]);
    let (servers, diags) = loader.load();
    assert_eq!(names(&servers), [("explicit", ConfigScope::Dynamic)]);
    assert!(diags.is_empty(), "{}", shown(&diags));

    // Four deep: not even the explicit ones (a chain of `serve --mcp-config` ends).
    for depth in ["4", "9", "99999999999999999999"] {
        let (servers, diags) = chain.loader(&[("TOOLWRIGHT_MCP_DEPTH", depth)]).load();
        assert!(servers.is_empty(), "{depth}: {servers:?}");
        let said = shown(&diags);
        assert_eq!(diags.len(), 1, "{said}");
        assert!(
            said.contains("TOOLWRIGHT_MCP_DEPTH=") && said.contains("no MCP server"),
            "{said}"
        );
    }

    // An enterprise configuration owns the server set, and --mcp-config does not count
    // beside it: a server started by toolwright loads none.
    std::fs::write(
        chain.managed.join("managed-mcp.json"),
        json!({"mcpServers": {"company": {"command": "toolwright", "args": ["serve"]}}})
            .to_string(),
    )
    .unwrap();
    let mut loader = chain.loader(&[("TOOLWRIGHT_MCP_DEPTH", "1")]);
    loader.mcp_config_args.clear();
    let (servers, diags) = loader.load();
    assert!(servers.is_empty(), "{servers:?}");
    let said = shown(&diags);
    assert!(
        said.contains("TOOLWRIGHT_MCP_DEPTH=1") && said.contains("\"company\""),
        "{said}"
    );
}

/// A `.mcp.json` in a directory above the project is read, as Claude Code reads them
/// walking up from the working directory: the nearest file wins for a server's name (the
/// whole entry), a file's servers name that file (in diagnostics and `source`), project
/// servers still lose to local ones and win over user ones, the project's trust and
/// `disabledMcpjsonServers` apply to them all, and an untrusted folder reports them all
/// as left out. Before the fix only the project directory's own file was read.
#[test]
fn a_mcp_json_above_the_project_counts_and_the_nearest_wins() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let src = repo.join("src");
    let project = src.join("deeper");
    std::fs::create_dir_all(&project).unwrap();
    let home = dir.path().join("home");
    write(
        &repo.join(".mcp.json"),
        &json!({"mcpServers": {
            "s": {"command": "repo-s"},
            "t": {"command": "repo-t"},
            "u": {"command": "repo-u"},
            "off": {"command": "repo-off"},
            "broken": {"args": ["no command"]},
        }}),
    );
    write(
        &src.join(".mcp.json"),
        &json!({"mcpServers": {"t": {"command": "src-t", "args": ["near"]}}}),
    );
    write(
        &home.join(".claude.json"),
        &json!({"mcpServers": {"u": {"command": "user-u"}, "mine": {"command": "user-mine"}}}),
    );
    let (policy, _) =
        McpPolicy::from_settings([(false, None, &json!({"disabledMcpjsonServers": ["off"]}))]);
    let loader = ConfigLoader::new(&project)
        .with_env(env(&[("HOME", home.to_str().unwrap())]))
        .with_policy(policy);
    let (servers, diags) = loader.load();
    assert_eq!(
        names(&servers),
        [
            ("mine", ConfigScope::User),
            ("s", ConfigScope::Project),
            ("t", ConfigScope::Project),
            ("u", ConfigScope::Project),
        ]
    );
    let by_name = |name: &str| servers.iter().find(|s| s.name == name).unwrap();
    assert_eq!(command(by_name("s")), "repo-s");
    assert_eq!(
        by_name("s").source.as_deref(),
        Some(&*repo.join(".mcp.json"))
    );
    // The nearest file's whole entry.
    assert_eq!(command(by_name("t")), "src-t");
    assert_eq!(
        by_name("t").source.as_deref(),
        Some(&*src.join(".mcp.json"))
    );
    assert_eq!(command(by_name("u")), "repo-u");
    // The broken entry is reported with the file it is in.
    assert_eq!(diags.len(), 1, "{}", shown(&diags));
    assert_eq!(diags[0].server.as_deref(), Some("broken"));
    assert_eq!(diags[0].file.as_deref(), Some(&*repo.join(".mcp.json")));
    assert!(
        diags[0]
            .to_string()
            .contains(&repo.join(".mcp.json").display().to_string())
    );

    // Untrusted: none of them, and all of them are named for the notice.
    let loader = loader.with_project_trusted(false);
    let (servers, _) = loader.load();
    assert_eq!(
        names(&servers),
        [("mine", ConfigScope::User), ("u", ConfigScope::User)]
    );
    let mut left_out = loader.untrusted_project_servers();
    left_out.sort();
    assert_eq!(left_out, ["off", "s", "t", "u"]);

    // From the repository itself, the nearer file below it does not count.
    let (servers, _) = ConfigLoader::new(&repo)
        .with_env(env(&[("HOME", home.to_str().unwrap())]))
        .load();
    let t = servers.iter().find(|s| s.name == "t").unwrap();
    assert_eq!(command(t), "repo-t");
}

/// A server that failed to reconnect and waits for its next attempt answers with its last
/// error in the parenthesis and the server's log after the notice of the next attempt, as
/// the failure itself was said: before the fix the log's lines stood inside the
/// parenthesis, the notice after them (`...refusing to start (attempt 2)); next
/// reconnection attempt in 1.0s`).
#[tokio::test]
async fn a_server_waiting_to_reconnect_says_its_log_after_the_notice() {
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("starts");
    let server = python_server(
        dir.path(),
        "f",
        "flaky",
        &format!(
            r#"import os
if m == "initialize":
    p = {count:?}
    n = int(open(p).read()) + 1 if os.path.exists(p) else 1
    open(p, "w").write(str(n))
    if n > 1:
        sys.stderr.write("dying now\nrefusing to start (attempt %d)\n" % n); sys.stderr.flush()
        sys.exit(4)
    answer(i, init(msg, {{"tools": {{}}}}))
elif m == "tools/list":
    answer(i, {{"tools": [{{"name": "die", "inputSchema": {{"type": "object"}}}}]}})
elif m == "tools/call":
    os._exit(3)"#,
            count = count.display().to_string()
        ),
    );
    let (manager, diags) = McpManager::connect(vec![server], opts(&[])).await;
    assert!(diags.is_empty(), "{}", shown(&diags));
    let die = tool(&manager, "mcp__f__die");
    let lost = call(&die, json!({})).await.unwrap_err().to_string();
    assert!(lost.contains("disconnected during tools/call"), "{lost}");
    // The reconnection fails: the log after the error.
    let failed = call(&die, json!({})).await.unwrap_err().to_string();
    assert!(
        failed.contains("could not be reconnected: initialization failed")
            && failed.contains("refusing to start (attempt 2)"),
        "{failed}"
    );
    // Then, while it waits: the notice on the first line, the log below it.
    let waiting = call(&die, json!({})).await.unwrap_err().to_string();
    let (first, log) = waiting.split_once('\n').unwrap_or((&waiting, ""));
    assert!(
        first.starts_with("MCP server \"f\" is not connected (last error: initialization failed")
            && first.contains("exited with status 4); next reconnection attempt in ")
            && first.ends_with('s'),
        "{waiting}"
    );
    assert!(
        log.starts_with("Server log (stderr and notifications/message, last lines):\n")
            && log.contains("dying now\nrefusing to start (attempt 2)")
            && !log.contains("next reconnection attempt"),
        "{waiting}"
    );
    manager.shutdown().await;
}

/// A `.mcp.json` above the project that another user may have written is not read, with a
/// warning naming it: one writable by every user, or one of another user (not root) in a
/// directory every user may write to, as `/tmp` is (which would otherwise name programs to
/// start for every project below it). The project directory's own file is read as before,
/// and a file of ours above the project is read.
#[test]
fn a_mcp_json_above_the_project_that_anyone_could_write_is_not_read() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let open = dir.path().join("open");
    let project = open.join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let planted = open.join(".mcp.json");
    write(
        &planted,
        &json!({"mcpServers": {"planted": {"command": "evil"}}}),
    );
    write(
        &project.join(".mcp.json"),
        &json!({"mcpServers": {"own": {"command": "own"}}}),
    );
    let home = dir.path().join("home");
    let load = || {
        ConfigLoader::new(&project)
            .with_env(env(&[("HOME", home.to_str().unwrap())]))
            .load()
    };

    // Ours, writable by us alone: read.
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (servers, diags) = load();
    assert_eq!(
        names(&servers),
        [
            ("own", ConfigScope::Project),
            ("planted", ConfigScope::Project)
        ]
    );
    assert!(diags.is_empty(), "{}", shown(&diags));

    // Writable by everyone: not read, and said.
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o666)).unwrap();
    let (servers, diags) = load();
    assert_eq!(names(&servers), [("own", ConfigScope::Project)]);
    assert_eq!(diags.len(), 1, "{}", shown(&diags));
    assert_eq!(diags[0].file.as_deref(), Some(&*planted));
    assert!(
        diags[0]
            .message
            .starts_with("not read: it is writable by users other than its owner"),
        "{}",
        diags[0]
    );

    // Another user's, in a directory anyone may write to (only root can give it away).
    if tool_core::process::effective_uid() == 0 {
        std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::os::unix::fs::chown(&planted, Some(65534), None).unwrap();
        let (servers, diags) = load();
        assert_eq!(names(&servers), [("own", ConfigScope::Project)]);
        assert_eq!(diags.len(), 1, "{}", shown(&diags));
        assert!(
            diags[0].message.contains("belongs to user id 65534"),
            "{}",
            diags[0]
        );
        // Wherever it is: another user's file names programs to start for us.
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        let (servers, diags) = load();
        assert_eq!(names(&servers), [("own", ConfigScope::Project)]);
        assert!(
            diags[0].message.contains("belongs to user id 65534"),
            "{}",
            diags[0]
        );
        std::os::unix::fs::chown(&planted, Some(0), None).unwrap();
    } else {
        eprintln!("NOTE: not root: a file of another user cannot be made for this test");
    }

    // A shared tree (group-writable, no sticky bit: `/srv/projects`, 2775): any member of
    // the group could have put or replaced it. Not read, though it is ours.
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o2775)).unwrap();
    let (servers, diags) = load();
    assert_eq!(names(&servers), [("own", ConfigScope::Project)]);
    assert!(
        diags[0].message.contains("its directory is writable"),
        "{}",
        diags[0]
    );
    // A group-writable file in a directory only its owner writes to: not read either.
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o664)).unwrap();
    let (servers, _) = load();
    assert_eq!(names(&servers), [("own", ConfigScope::Project)]);
    // Ours, in a directory only we write to: read.
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (servers, diags) = load();
    assert_eq!(servers.len(), 2, "{servers:?}");
    assert!(diags.is_empty(), "{}", shown(&diags));
}
