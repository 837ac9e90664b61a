//! Configuration loading on real files in temporary directories, and the MCP server policy
//! of Claude Code's settings (`managed-mcp.json`, `managedMcpServers`, `allowedMcpServers`,
//! `deniedMcpServers`, `disabledMcpjsonServers`) that `ConfigLoader::load` applies.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tools_mcp::{
    ConfigLoader, ConfigScope, Diagnostic, EnvLookup, McpPolicy, Severity, TransportConfig,
};

fn env(pairs: &[(&str, &str)]) -> EnvLookup {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    Arc::new(move |k| map.get(k).cloned())
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn scopes_merge_with_claude_code_precedence() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let project_key = project.path().to_string_lossy().into_owned();
    write(
        &project.path().join(".mcp.json"),
        r#"{"mcpServers": {
            "shared": {"command": "from-project"},
            "proj": {"command": "p", "args": ["--x"]}
        }}"#,
    );
    let claude_json = serde_json::json!({
        "mcpServers": {
            "shared": {"command": "from-user"},
            "user-only": {"type": "http", "url": "https://u.example/mcp"}
        },
        "projects": {
            project_key: {"mcpServers": {"shared": {"command": "from-local", "env": {"A": "1"}}}}
        }
    });
    write(&home.path().join(".claude.json"), &claude_json.to_string());
    let flag_file = project.path().join("extra.json");
    write(
        &flag_file,
        r#"{"mcpServers": {"flagged": {"command": "f"}}}"#,
    );

    let loader = ConfigLoader::new(project.path())
        .with_env(env(&[("HOME", home.path().to_str().unwrap())]))
        .with_mcp_config([
            "extra.json",
            r#"{"mcpServers": {"inline": {"command": "i"}}}"#,
        ]);
    let (servers, diags) = loader.load();
    assert!(diags.is_empty(), "{diags:?}");
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["flagged", "inline", "proj", "shared", "user-only"]);
    let shared = &servers[3];
    assert_eq!(shared.scope, ConfigScope::Local);
    // Whole entry from the highest scope, no field merge.
    match &shared.transport {
        TransportConfig::Stdio { command, env, .. } => {
            assert_eq!(command, "from-local");
            assert_eq!(env.get("A").map(String::as_str), Some("1"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(servers[4].scope, ConfigScope::User);
    assert_eq!(servers[0].scope, ConfigScope::Dynamic);
    assert_eq!(servers[0].source.as_deref(), Some(flag_file.as_path()));
}

/// A name in several `--mcp-config` arguments comes from the last of them, as Claude Code
/// spreads its configs into one object in order; the scopes keep their precedence (a
/// dynamic entry still wins over a project one).
#[test]
fn the_last_mcp_config_naming_a_server_wins() {
    let project = tempfile::tempdir().unwrap();
    write(
        &project.path().join(".mcp.json"),
        r#"{"mcpServers": {"a": {"command": "from-project"}}}"#,
    );
    let file = project.path().join("second.json");
    write(
        &file,
        r#"{"mcpServers": {"a": {"command": "from-file"}, "b": {"command": "b2"}}}"#,
    );
    let loader = ConfigLoader::new(project.path())
        .with_env(env(&[("HOME", "/nonexistent-home")]))
        .with_mcp_config([
            r#"{"mcpServers": {"a": {"command": "first"}, "b": {"command": "b1"}}}"#,
            "second.json",
            r#"{"mcpServers": {"a": {"command": "third"}}}"#,
        ]);
    let (servers, diags) = loader.load();
    assert!(diags.is_empty(), "{diags:?}");
    let shown: Vec<(&str, &str, ConfigScope)> = servers
        .iter()
        .map(|s| match &s.transport {
            TransportConfig::Stdio { command, .. } => (s.name.as_str(), command.as_str(), s.scope),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        shown,
        [
            ("a", "third", ConfigScope::Dynamic),
            ("b", "b2", ConfigScope::Dynamic)
        ]
    );
    assert_eq!(servers[1].source.as_deref(), Some(file.as_path()));
}

#[test]
fn claude_config_dir_moves_claude_json_and_strict_ignores_scopes() {
    let cfg = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write(
        &cfg.path().join(".claude.json"),
        r#"{"mcpServers": {"from-config-dir": {"command": "x"}}}"#,
    );
    write(
        &project.path().join(".mcp.json"),
        r#"{"mcpServers": {"proj": {"command": "p"}}}"#,
    );
    let loader = ConfigLoader::new(project.path()).with_env(env(&[
        ("HOME", "/nonexistent-home"),
        ("CLAUDE_CONFIG_DIR", cfg.path().to_str().unwrap()),
    ]));
    let (servers, _) = loader.load();
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["from-config-dir", "proj"]);

    let mut strict = loader.with_mcp_config([r#"{"mcpServers": {"only": {"command": "o"}}}"#]);
    strict.strict = true;
    let (servers, _) = strict.load();
    assert_eq!(servers.len(), 1);
    assert_eq!(servers[0].name, "only");
}

#[test]
fn env_expansion_with_defaults_and_warnings() {
    let project = tempfile::tempdir().unwrap();
    write(
        &project.path().join(".mcp.json"),
        r#"{"mcpServers": {
            "s": {
                "command": "${BIN_DIR}/server",
                "args": ["--root", "${CLAUDE_PROJECT_DIR:-.}", "${MISSING}", "${X%suffix}"],
                "env": {"TOKEN": "${TOKEN:-none}", "HOME2": "${HOME}"}
            },
            "h": {
                "type": "http",
                "url": "https://${HOST}/mcp",
                "headers": {"Authorization": "Bearer ${API_KEY}"},
                "timeout": 45000
            }
        }}"#,
    );
    let loader = ConfigLoader::new(project.path()).with_env(env(&[
        ("HOME", "/h"),
        ("BIN_DIR", "/opt/bin"),
        ("HOST", "mcp.example.com"),
    ]));
    let (servers, diags) = loader.load();
    let h = servers.iter().find(|s| s.name == "h").unwrap();
    assert_eq!(
        h.transport,
        TransportConfig::Http {
            url: "https://mcp.example.com/mcp".into(),
            headers: [("Authorization".to_owned(), "Bearer ${API_KEY}".to_owned())].into(),
        }
    );
    assert_eq!(h.timeout, Some(Duration::from_secs(45)));
    let s = servers.iter().find(|s| s.name == "s").unwrap();
    match &s.transport {
        TransportConfig::Stdio { command, args, env } => {
            assert_eq!(command, "/opt/bin/server");
            assert_eq!(args, &["--root", ".", "${MISSING}", "${X%suffix}"]);
            assert_eq!(env["TOKEN"], "none");
            assert_eq!(env["HOME2"], "/h");
        }
        other => panic!("{other:?}"),
    }
    let warnings: Vec<String> = diags.iter().map(ToString::to_string).collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings
            .iter()
            .all(|w| w.starts_with("warning: MCP server"))
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("\"h\"") && w.contains("API_KEY"))
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("\"s\"") && w.contains("MISSING"))
    );
    assert!(!warnings.iter().any(|w| w.contains("X%suffix")));
}

#[test]
fn invalid_and_reserved_entries_are_reported_and_skipped() {
    let project = tempfile::tempdir().unwrap();
    let file = project.path().join(".mcp.json");
    write(
        &file,
        r#"{"mcpServers": {
            "good": {"command": "ok", "timeout": 500},
            "": {"command": "x"},
            "workspace": {"command": "x"},
            "url-no-type": {"url": "https://x"},
            "no-command": {"args": []},
            "empty-command": {"command": "  "},
            "weird": {"type": "carrier-pigeon", "url": "x"},
            "bad-args": {"command": "x", "args": "not-a-list"},
            "legacy": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
            "gh__admin": {"command": "x"},
            "not-a-url": {"type": "http", "url": "not a url"},
            "ftp": {"type": "http", "url": "ftp://example.com/mcp"},
            "ws-as-https": {"type": "ws", "url": "https://example.com/mcp"},
            "unset-host": {"type": "http", "url": "https://${UNSET_HOST}/mcp"}
        }}"#,
    );
    let (servers, diags) = ConfigLoader::new(project.path()).with_env(env(&[])).load();
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    // A URL still holding an unset variable loads, as in Claude Code (with a warning).
    assert_eq!(names, ["gh__admin", "good", "legacy", "unset-host"]);
    assert_eq!(servers[0].timeout, None, "timeouts under 1 s are ignored");
    let find = |server: &str| {
        diags
            .iter()
            .find(|d| d.server.as_deref() == Some(server))
            .unwrap_or_else(|| panic!("no diagnostic for {server}: {diags:?}"))
    };
    assert_eq!(find("").severity, Severity::Error);
    assert!(find("").message.contains("empty"));
    assert_eq!(find("workspace").severity, Severity::Warning);
    assert!(find("workspace").message.contains("reserved"));
    assert!(find("url-no-type").message.contains("no \"type\""));
    assert!(find("no-command").message.contains("\"command\""));
    assert_eq!(find("empty-command").severity, Severity::Error);
    assert!(find("empty-command").message.contains("empty"));
    assert!(find("weird").message.contains("carrier-pigeon"));
    assert!(find("bad-args").message.contains("\"args\""));
    assert!(find("good").message.contains("under 1000 ms"));
    assert_eq!(find("bad-args").file.as_deref(), Some(file.as_path()));
    // Kept, with a warning: its tool names read as server `gh`'s.
    assert_eq!(find("gh__admin").severity, Severity::Warning);
    assert!(find("gh__admin").message.contains("Rename the server"));
    // A URL that cannot be one says what is wrong, not the HTTP client's "builder error" at
    // connection time.
    assert_eq!(find("not-a-url").severity, Severity::Error);
    assert!(
        find("not-a-url")
            .message
            .contains("not a valid URL (relative URL without a base)"),
        "{:?}",
        find("not-a-url")
    );
    assert!(
        find("ftp").message.contains("scheme \"ftp\"")
            && find("ftp").message.contains("http or https"),
        "{:?}",
        find("ftp")
    );
    assert!(
        find("ws-as-https").message.contains("ws or wss"),
        "{:?}",
        find("ws-as-https")
    );
    assert_eq!(find("unset-host").severity, Severity::Warning);
    // Where loading goes on, an entry that cannot be used says it is skipped.
    assert!(
        find("no-command")
            .to_string()
            .ends_with("a stdio server needs a \"command\" string; the server is skipped"),
        "{}",
        find("no-command")
    );
}

/// What `--mcp-config` gives is bad input when a server in it cannot be used, as when the
/// value is not JSON: a host stops rather than run without those servers. Warnings do not
/// stop it.
#[test]
fn an_mcp_config_with_a_malformed_server_is_unusable() {
    let project = tempfile::tempdir().unwrap();
    write(
        &project.path().join("bad-entry.json"),
        r#"{"mcpServers": {"x": {"type": "http", "url": "not a url"}}}"#,
    );
    write(
        &project.path().join("fine.json"),
        r#"{"mcpServers": {"x": {"command": "srv", "args": ["${UNSET_ARG}"], "oauth": {}}}}"#,
    );
    let errors = |arg: &str| {
        ConfigLoader::new(project.path())
            .with_env(env(&[]))
            .with_mcp_config([arg])
            .mcp_config_errors()
    };
    for bad in [
        r#"{"mcpServers": []}"#,
        r#"{"mcpServers": {"x": {"args": ["no command"]}}}"#,
        r#"{"mcpServers": {"x": {"type": "sse", "url": "ftp://h/x"}}}"#,
        "bad-entry.json",
    ] {
        let found = errors(bad);
        assert_eq!(found.len(), 1, "{bad}: {found:?}");
    }
    assert!(errors(r#"{"mcpServers": []}"#)[0].contains("must be an object"));
    assert!(errors("bad-entry.json")[0].contains("not a valid URL"));
    assert!(errors("bad-entry.json")[0].contains("bad-entry.json"));
    // The host stops: no "the server is skipped", as if it ran on without it.
    let found = errors(r#"{"mcpServers": {"x": {"args": ["no command"]}}}"#);
    assert!(
        found[0].ends_with("a stdio server needs a \"command\" string"),
        "{found:?}"
    );
    assert_eq!(errors("fine.json"), Vec::<String>::new());
    assert_eq!(errors(r#"{"mcpServers": {}}"#), Vec::<String>::new());
}

#[test]
fn broken_files_are_diagnostics_not_failures() {
    let project = tempfile::tempdir().unwrap();
    write(&project.path().join(".mcp.json"), "{ not json");
    let (servers, diags) = ConfigLoader::new(project.path())
        .with_env(env(&[]))
        .with_mcp_config(["missing.json"])
        .load();
    assert!(servers.is_empty());
    assert_eq!(diags.len(), 2, "{diags:?}");
    assert!(diags.iter().all(|d| d.severity == Severity::Error));
    assert!(diags.iter().any(|d| d.message.contains("not valid JSON")));
    assert!(diags.iter().any(|d| d.message.contains("cannot read")));
}

/// A blank `~/.claude.json` or `.mcp.json` (nothing but whitespace, as a tool that truncated
/// it leaves it) holds no servers and is not an error, as blank settings files are `{}`; a
/// blank `--mcp-config` file, which the user named on purpose, still is one.
#[test]
fn blank_optional_files_hold_no_servers_and_no_error() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write(&home.path().join(".claude.json"), "");
    write(&project.path().join(".mcp.json"), " \n\t\n");
    write(&project.path().join("blank.json"), "\n");
    let (servers, diags) = ConfigLoader::new(project.path())
        .with_env(env(&[("HOME", home.path().to_str().unwrap())]))
        .with_project_trusted(true)
        .load();
    assert!(servers.is_empty());
    assert!(diags.is_empty(), "{diags:?}");

    let (_, diags) = ConfigLoader::new(project.path())
        .with_env(env(&[("HOME", home.path().to_str().unwrap())]))
        .with_mcp_config(["blank.json"])
        .load();
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(diags[0].message.contains("empty"), "{diags:?}");
}

/// A file that loads nothing because of its shape says so: a top level that is not an
/// object, and a servers key that is not `mcpServers` (VS Code's `servers`, a typo).
#[test]
fn a_file_shaped_wrong_says_why_it_gives_no_servers() {
    let project = tempfile::tempdir().unwrap();
    write(
        &project.path().join(".mcp.json"),
        r#"{"mcpservers": {"gh": {"command": "gh-mcp"}}}"#,
    );
    let listed = project.path().join("listed.json");
    write(&listed, r#"[{"mcpServers": {}}]"#);
    let (servers, diags) = ConfigLoader::new(project.path())
        .with_env(env(&[]))
        .with_project_trusted(true)
        .with_mcp_config([
            listed.to_str().unwrap(),
            r#"{"servers": {}}"#,
            r#"{"py": {"command": "python3", "args": ["srv.py"]}, "web": {"url": "http://x"}, "other": 1}"#,
        ])
        .load();
    assert!(servers.is_empty());
    let messages: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("must be a JSON object") && m.contains("an array")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("\"mcpservers\" is not read")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("\"servers\" is not read")),
        "{messages:?}"
    );
    // Server entries without the wrapper are named.
    assert!(
        messages
            .iter()
            .any(|m| m.contains("no \"mcpServers\": \"py\", \"web\" look like servers, not read")),
        "{messages:?}"
    );
    // A file without servers at all is no problem.
    write(&project.path().join(".mcp.json"), "{}");
    let (_, diags) = ConfigLoader::new(project.path())
        .with_env(env(&[]))
        .with_project_trusted(true)
        .load();
    assert!(diags.is_empty(), "{diags:?}");
}

/// An untrusted folder's `.mcp.json` is left out before scopes merge: a user server of the
/// same name stays, and the project's server names are reported for the notice.
#[test]
fn an_untrusted_project_does_not_shadow_the_users_servers() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write(
        &project.path().join(".mcp.json"),
        r#"{"mcpServers": {"github": {"command": "evil-github"}, "proj": {"command": "p"}}}"#,
    );
    write(
        &home.path().join(".claude.json"),
        r#"{"mcpServers": {"github": {"command": "real-github"}}}"#,
    );
    let loader = ConfigLoader::new(project.path())
        .with_env(env(&[("HOME", home.path().to_str().unwrap())]))
        .with_project_trusted(false);
    let (servers, diags) = loader.load();
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(servers.len(), 1, "{servers:?}");
    assert_eq!(servers[0].scope, ConfigScope::User);
    match &servers[0].transport {
        TransportConfig::Stdio { command, .. } => assert_eq!(command, "real-github"),
        other => panic!("{other:?}"),
    }
    assert_eq!(loader.untrusted_project_servers(), ["github", "proj"]);
    // Trusted: the project's entry wins over the user's, as before.
    let loader = loader.with_project_trusted(true);
    assert!(loader.untrusted_project_servers().is_empty());
    let (servers, _) = loader.load();
    assert_eq!(servers.len(), 2);
    assert_eq!(servers[0].scope, ConfigScope::Project);
}

/// A project, a home with `~/.claude.json` and a managed directory, all temporary.
struct Setup {
    _dir: tempfile::TempDir,
    project: PathBuf,
    home: PathBuf,
    managed: PathBuf,
}

impl Setup {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let home = dir.path().join("home");
        let managed = dir.path().join("managed");
        for d in [&project, &home, &managed] {
            std::fs::create_dir_all(d).unwrap();
        }
        Self {
            _dir: dir,
            project,
            home,
            managed,
        }
    }

    fn user_servers(&self, servers: Value) -> &Self {
        write_json(
            &self.home.join(".claude.json"),
            &json!({"mcpServers": servers}),
        );
        self
    }

    fn project_servers(&self, servers: Value) -> &Self {
        write_json(
            &self.project.join(".mcp.json"),
            &json!({"mcpServers": servers}),
        );
        self
    }

    fn managed_mcp_json(&self, text: &str) -> &Self {
        std::fs::write(self.managed.join("managed-mcp.json"), text).unwrap();
        self
    }

    fn loader(&self, settings: &[(bool, Value)]) -> (ConfigLoader, Vec<Diagnostic>) {
        let (policy, diags) =
            McpPolicy::from_settings(settings.iter().map(|(managed, v)| (*managed, None, v)));
        let mut loader = ConfigLoader::new(&self.project)
            .with_env(env(&[
                ("HOME", self.home.to_str().unwrap()),
                ("TOOLS", "/opt/tools"),
            ]))
            .with_policy(policy);
        loader.managed_dir = Some(self.managed.clone());
        (loader, diags)
    }

    fn load(&self, settings: &[(bool, Value)]) -> (Vec<String>, Vec<Diagnostic>) {
        let (loader, mut diags) = self.loader(settings);
        let (servers, more) = loader.load();
        diags.extend(more);
        (servers.into_iter().map(|s| s.name).collect(), diags)
    }
}

fn write_json(path: &Path, value: &Value) {
    std::fs::write(path, value.to_string()).unwrap();
}

fn blocked(diags: &[Diagnostic]) -> Vec<(String, String)> {
    diags
        .iter()
        .filter(|d| d.message.starts_with("blocked by policy"))
        .map(|d| (d.server.clone().unwrap(), d.message.clone()))
        .collect()
}

/// The servers of Claude Code's examples: two stdio, three remote.
fn example_servers() -> Value {
    json!({
        "local-tool": {"command": "npx", "args": ["-y", "approved-package"]},
        "node-tool": {"command": "node", "args": ["server.js"]},
        "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"},
        "other-api": {"type": "http", "url": "https://external.example.com/mcp"},
        "internal": {"type": "sse", "url": "https://api.internal.example.com/mcp"}
    })
}

#[test]
fn without_lists_every_server_loads() {
    let s = Setup::new();
    s.user_servers(example_servers());
    let (names, diags) = s.load(&[(true, json!({})), (false, json!({"env": {}}))]);
    assert_eq!(names.len(), 5, "{names:?}");
    assert!(diags.is_empty(), "{diags:?}");
}

#[test]
fn allowlists_follow_claude_codes_examples() {
    let s = Setup::new();
    s.user_servers(example_servers());
    let cases: [(Value, &[&str]); 5] = [
        // URL-only: remote servers must match a URL; stdio servers have nothing to match.
        (
            json!([{"serverUrl": "https://mcp.example.com/*"},
                   {"serverUrl": "https://*.internal.example.com/*"}]),
            &["internal"],
        ),
        // Command-only: stdio servers must match a command; remote ones have no name entry.
        (
            json!([{"serverCommand": ["npx", "-y", "approved-package"]}]),
            &["local-tool"],
        ),
        // Mixed name and command: a stdio server must match the command even when its name
        // is listed; a remote server matches by name.
        (
            json!([{"serverName": "github"}, {"serverName": "node-tool"},
                   {"serverCommand": ["npx", "-y", "approved-package"]}]),
            &["github", "local-tool"],
        ),
        // Name-only: names count for both kinds.
        (
            json!([{"serverName": "github"}, {"serverName": "node-tool"}]),
            &["github", "node-tool"],
        ),
        // Empty: nothing.
        (json!([]), &[]),
    ];
    for (allow, expected) in cases {
        let (names, diags) = s.load(&[(true, json!({"allowedMcpServers": allow}))]);
        assert_eq!(names, expected, "allowlist {allow}");
        assert_eq!(blocked(&diags).len(), 5 - expected.len(), "{diags:?}");
        assert!(
            blocked(&diags)
                .iter()
                .all(|(_, m)| m.contains("no allowedMcpServers entry matches")),
            "{diags:?}"
        );
    }
}

#[test]
fn the_denylist_wins_and_names_the_entry() {
    let s = Setup::new();
    s.user_servers(example_servers());
    let (names, diags) = s.load(&[(
        true,
        json!({
            "allowedMcpServers": [{"serverUrl": "https://*.example.com/*"}],
            "deniedMcpServers": [{"serverUrl": "https://api.*.example.com/*"}],
        }),
    )]);
    assert_eq!(names, ["other-api"]);
    let internal = blocked(&diags)
        .into_iter()
        .find(|(name, _)| name == "internal")
        .unwrap();
    assert!(
        internal
            .1
            .contains(r#"deniedMcpServers entry {"serverUrl": "https://api.*.example.com/*"}"#),
        "{internal:?}"
    );
}

#[test]
fn lists_merge_across_levels_unless_managed_only() {
    let s = Setup::new();
    s.user_servers(example_servers());
    let managed = json!({"allowedMcpServers": [{"serverName": "github"}]});
    let user = json!({
        "allowedMcpServers": [{"serverName": "other-api"}],
        "deniedMcpServers": [{"serverCommand": ["node", "server.js"]}],
    });
    // A soft allowlist: the user broadens it.
    let (names, _) = s.load(&[(true, managed.clone()), (false, user.clone())]);
    assert_eq!(names, ["github", "other-api"]);
    // allowManagedMcpServersOnly keeps the managed allowlist only.
    let mut hard = managed;
    hard["allowManagedMcpServersOnly"] = json!(true);
    let (names, _) = s.load(&[(true, hard), (false, user.clone())]);
    assert_eq!(names, ["github"]);
    // From user settings the switch means nothing.
    let mut own = user;
    own["allowManagedMcpServersOnly"] = json!(true);
    let (names, diags) = s.load(&[(false, own)]);
    assert_eq!(names, ["other-api"]);
    assert!(
        diags
            .iter()
            .any(|d| d.message.contains("read from managed settings only")),
        "{diags:?}"
    );
    // A user's denylist applies on its own: node-tool is the one blocked.
    let (names, diags) = s.load(&[(
        false,
        json!({"deniedMcpServers": [{"serverCommand": ["node", "server.js"]}]}),
    )]);
    assert_eq!(names.len(), 4);
    assert_eq!(blocked(&diags)[0].0, "node-tool");
}

#[test]
fn spelling_a_host_differently_does_not_dodge_a_deny() {
    let s = Setup::new();
    s.user_servers(json!({
        "a": {"type": "http", "url": "https://EVIL.example.COM./mcp"},
        "b": {"type": "http", "url": "https://%65vil.example.com:443/mcp"},
        "c": {"type": "http", "url": "https://someone@evil.example.com/mcp"},
        "d": {"type": "http", "url": "https://evil.example.com.elsewhere.net/mcp"},
    }));
    let (names, diags) = s.load(&[(
        false,
        json!({"deniedMcpServers": [{"serverUrl": "https://evil.example.com"}]}),
    )]);
    assert_eq!(names, ["d"], "{diags:?}");
}

#[test]
fn commands_match_exactly_after_expansion() {
    let s = Setup::new();
    s.user_servers(json!({
        "exact": {"command": "${TOOLS}/server", "args": ["--port", "1"]},
        "more-args": {"command": "/opt/tools/server", "args": ["--port", "1", "--flag"]},
        "fewer-args": {"command": "/opt/tools/server", "args": ["--port"]},
    }));
    let (names, diags) = s.load(&[(
        true,
        json!({"allowedMcpServers": [{"serverCommand": ["/opt/tools/server", "--port", "1"]}]}),
    )]);
    assert_eq!(names, ["exact"], "{diags:?}");
    // The entry expands too.
    let (names, _) = s.load(&[(
        true,
        json!({"allowedMcpServers": [{"serverCommand": ["${TOOLS}/server", "--port", "1"]}]}),
    )]);
    assert_eq!(names, ["exact"]);
}

#[test]
fn an_allow_entry_that_a_variable_could_widen_is_ignored() {
    let s = Setup::new();
    s.user_servers(json!({"remote": {"type": "http", "url": "https://mcp.example.com/api"}}));
    for entry in ["https://${HOST}/*", "https://mcp.example.com/${ANY}"] {
        let (loader, _) = s.loader(&[(true, json!({"allowedMcpServers": [{"serverUrl": entry}]}))]);
        let home = s.home.to_str().unwrap();
        let loader = loader.with_env(env(&[
            ("HOME", home),
            ("HOST", "mcp.example.com"),
            ("ANY", "*"),
        ]));
        let (servers, diags) = loader.load();
        assert!(servers.is_empty(), "{entry}: {servers:?}");
        assert!(
            diags.iter().any(|d| d.message.contains("could widen")),
            "{entry}: {diags:?}"
        );
    }
    // A variable in the path that adds no wildcard is fine.
    let (loader, _) = s.loader(&[(
        true,
        json!({"allowedMcpServers": [{"serverUrl": "https://mcp.example.com/${P}"}]}),
    )]);
    let home = s.home.to_str().unwrap();
    let (servers, _) = loader.with_env(env(&[("HOME", home), ("P", "api")])).load();
    assert_eq!(servers.len(), 1);
}

#[test]
fn broken_entries_fail_closed_for_allow_and_block_for_deny() {
    let s = Setup::new();
    s.user_servers(example_servers());
    // Not an array: allows nothing.
    let (names, diags) = s.load(&[(true, json!({"allowedMcpServers": {"serverName": "github"}}))]);
    assert!(names.is_empty());
    assert!(diags.iter().any(|d| d.severity == Severity::Error
        && d.message.contains("no server is allowed until it is fixed")));
    // Two keys in one allow entry, even one of them malformed: ignored, and said so.
    for entry in [
        json!({"serverName": "github", "serverUrl": "https://x/*"}),
        json!({"serverName": "git hub", "serverUrl": "https://api.githubcopilot.com/*"}),
    ] {
        let (names, diags) = s.load(&[(true, json!({"allowedMcpServers": [entry]}))]);
        assert!(names.is_empty(), "{names:?}");
        assert!(
            diags.iter().any(|d| d.message.contains("give one of")),
            "{diags:?}"
        );
    }
    // Two keys in one deny entry: each blocks.
    let (names, diags) = s.load(&[(
        false,
        json!({"deniedMcpServers": [{"serverName": "github", "serverCommand": ["node", "server.js"]}]}),
    )]);
    assert_eq!(names, ["internal", "local-tool", "other-api"]);
    assert!(diags.iter().any(|d| d.message.contains("each one blocks")));
    // An allow name outside the name alphabet never matches; a deny name may be anything.
    let (names, diags) = s.load(&[(
        true,
        json!({"allowedMcpServers": [{"serverName": "git hub"}]}),
    )]);
    assert!(names.is_empty());
    assert!(diags.iter().any(|d| d.message.contains("is ignored")));
}

#[test]
fn managed_mcp_json_has_exclusive_control() {
    let s = Setup::new();
    s.user_servers(json!({"mine": {"command": "mine"}, "company": {"command": "user-copy"}}));
    s.project_servers(json!({"proj": {"command": "p"}}));
    s.managed_mcp_json(
        &json!({"mcpServers": {
            "company": {"command": "/usr/local/bin/company-mcp"},
            "per-user": {"type": "http", "url": "https://${TEAM:-x}.example.com/mcp"},
        }})
        .to_string(),
    );
    let (loader, _) = s.loader(&[]);
    let (servers, diags) = loader.load();
    let names: Vec<_> = servers.iter().map(|s| (s.name.as_str(), s.scope)).collect();
    assert_eq!(
        names,
        [
            ("company", ConfigScope::Enterprise),
            ("per-user", ConfigScope::Enterprise)
        ]
    );
    assert!(diags.is_empty(), "{diags:?}");

    // The allowlist does not apply to its literal entries, but does to one using ${VAR}.
    let (names, diags) = s.load(&[(true, json!({"allowedMcpServers": []}))]);
    assert_eq!(names, ["company"]);
    assert_eq!(blocked(&diags)[0].0, "per-user");
    // The denylist applies to all of them, a user's own too.
    let (names, _) = s.load(&[(
        false,
        json!({"deniedMcpServers": [{"serverName": "company"}]}),
    )]);
    assert_eq!(names, ["per-user"]);

    // --mcp-config is refused (and ignored by load on its own).
    let (loader, _) = s.loader(&[]);
    let loader = loader.with_mcp_config([r#"{"mcpServers": {"dyn": {"command": "d"}}}"#]);
    let refused = loader.dynamic_config_refused().unwrap();
    assert!(refused.starts_with(
        "You cannot dynamically configure MCP servers when an enterprise MCP config is present"
    ));
    let (servers, diags) = loader.load();
    assert_eq!(servers.len(), 2);
    assert!(diags.iter().any(|d| d.severity == Severity::Error));
}

#[test]
fn a_broken_managed_mcp_json_loads_nothing_else() {
    let s = Setup::new();
    s.user_servers(json!({"mine": {"command": "mine"}}));
    s.managed_mcp_json("{ not json");
    let (names, diags) = s.load(&[]);
    assert!(names.is_empty(), "{names:?}");
    assert!(
        diags
            .iter()
            .any(|d| d.message.contains("no other configured server loads")),
        "{diags:?}"
    );
    // An empty map disables MCP.
    s.managed_mcp_json(r#"{"mcpServers": {}}"#);
    let (names, diags) = s.load(&[]);
    assert!(names.is_empty() && diags.is_empty(), "{names:?} {diags:?}");
}

#[test]
fn managed_settings_provide_remote_servers_only() {
    let s = Setup::new();
    s.user_servers(json!({"search": {"command": "user-search"}, "mine": {"command": "mine"}}));
    let provided = json!({"managedMcpServers": {
        "search": {"type": "http", "url": "https://search.example.com/mcp"},
        "records": {"type": "streamable-http", "url": "https://records.example.com/mcp",
                    "headers": {"X-Key": "k"}},
        "runs": {"type": "http", "url": "https://r.example.com/mcp", "command": "sh"},
        "plain": {"type": "http", "url": "http://localhost:1/mcp"},
        "expands": {"type": "http", "url": "https://${HOST}/mcp"},
        "hidden": {"type": "http", "url": "https://a.example.com/mcp\u{200B}"},
        "local": {"command": "x"},
    }});
    // Provided servers need no allow entry, take precedence over the user's, and pass the
    // denylist only when it does not match.
    let (loader, _) = s.loader(&[
        (true, provided.clone()),
        (true, json!({"allowedMcpServers": [{"serverName": "mine"}]})),
    ]);
    let (servers, diags) = loader.load();
    let names: Vec<_> = servers.iter().map(|s| (s.name.as_str(), s.scope)).collect();
    assert_eq!(
        names,
        [
            ("mine", ConfigScope::User),
            ("records", ConfigScope::Managed),
            ("search", ConfigScope::Managed)
        ]
    );
    let mut rejected: Vec<_> = diags
        .iter()
        .filter(|d| d.message.starts_with("managedMcpServers entry rejected"))
        .map(|d| d.server.as_deref().unwrap())
        .collect();
    rejected.sort_unstable();
    assert_eq!(rejected, ["expands", "hidden", "local", "plain", "runs"]);

    // Outside managed settings the key is ignored.
    let (names, diags) = s.load(&[(false, provided)]);
    assert_eq!(names, ["mine", "search"]);
    assert!(
        diags
            .iter()
            .any(|d| d.message.contains("read from managed settings only"))
    );
    // Claude Desktop's array form is refused as a whole.
    let (names, diags) = s.load(&[(true, json!({"managedMcpServers": [{"name": "x"}]}))]);
    assert_eq!(names, ["mine", "search"]);
    assert!(diags.iter().any(|d| d.message.contains("array form")));
}

/// Settings documents come highest precedence first (as tool-perms loads them: the last
/// `managed-settings.d` drop-in, ..., `managed-settings.json`): the first to provide a
/// server is the one used.
#[test]
fn the_highest_managed_document_provides_a_server_named_twice() {
    let s = Setup::new();
    let provides = |host: &str| json!({"managedMcpServers": {"search": {"type": "http", "url": format!("https://{host}/mcp")}}});
    let (loader, _) = s.loader(&[
        (true, provides("new.example")),
        (true, provides("old.example")),
    ]);
    let (servers, diags) = loader.load();
    assert!(diags.is_empty(), "{diags:?}");
    let search = servers.iter().find(|s| s.name == "search").unwrap();
    let shown = format!("{search:?}");
    assert!(
        shown.contains("new.example") && !shown.contains("old.example"),
        "{shown}"
    );
}

#[test]
fn rejected_project_servers_are_left_out_before_scopes_merge() {
    let s = Setup::new();
    s.user_servers(json!({"github": {"command": "real-github"}}));
    s.project_servers(json!({"github": {"command": "project-github"}, "proj": {"command": "p"}}));
    let (loader, _) = s.loader(&[(false, json!({"disabledMcpjsonServers": ["github"]}))]);
    let (servers, diags) = loader.load();
    assert!(diags.is_empty(), "{diags:?}");
    let found: Vec<_> = servers.iter().map(|s| (s.name.as_str(), s.scope)).collect();
    assert_eq!(
        found,
        [
            ("github", ConfigScope::User),
            ("proj", ConfigScope::Project)
        ]
    );
}

/// A `disabledMcpjsonServers` that cannot be read cannot say which project servers the
/// user rejected: every `.mcp.json` server is left out until it is fixed, and the error
/// says so (it was "ignored", and the rejected server ran); an entry that is no name is
/// named in a warning (it was dropped without a word). Servers of other scopes still run.
#[test]
fn an_unreadable_rejection_list_leaves_out_every_project_server() {
    let s = Setup::new();
    s.user_servers(json!({"user": {"command": "u"}}));
    s.project_servers(json!({"github": {"command": "project-github"}, "proj": {"command": "p"}}));
    for (value, shown) in [
        (json!("github"), "\"github\""),
        (json!({"github": true}), "an object"),
    ] {
        let (found, diags) = s.load(&[(false, json!({"disabledMcpjsonServers": value}))]);
        assert_eq!(found, ["user"], "{value}");
        assert!(
            diags.iter().any(|d| d.severity == Severity::Error
                && d.message
                    .contains("\"disabledMcpjsonServers\" must be an array of server names")
                && d.message.contains(shown)
                && d.message
                    .contains("every project (.mcp.json) server is left out")),
            "{diags:?}"
        );
    }
    let (found, diags) = s.load(&[(false, json!({"disabledMcpjsonServers": ["github", 7]}))]);
    assert_eq!(found, ["proj", "user"]);
    assert!(
        diags
            .iter()
            .any(|d| d.message.contains("7") && d.message.contains("not a server name")),
        "{diags:?}"
    );
}

#[test]
fn an_unusable_url_entry_still_binds_remote_servers_to_urls() {
    let s = Setup::new();
    s.user_servers(example_servers());
    // The URL entry is dropped (a variable in its host), but it still means remote servers
    // must match a URL: the name entry lets no remote server through.
    let (names, diags) = s.load(&[(
        true,
        json!({"allowedMcpServers": [{"serverName": "github"}, {"serverUrl": "https://${CORP}/*"}]}),
    )]);
    assert!(names.is_empty(), "{names:?}");
    assert!(diags.iter().any(|d| d.message.contains("could widen")));
}

#[test]
fn ports_hosts_paths_and_queries_are_compared_as_a_client_sees_them() {
    let s = Setup::new();
    s.user_servers(json!({
        "default-port": {"type": "http", "url": "http://localhost/mcp"},
        "explicit-default": {"type": "http", "url": "http://localhost:80/mcp"},
        "other-port": {"type": "http", "url": "http://localhost:8080/mcp"},
        "idna": {"type": "http", "url": "https://BÜCHER.example/mcp"},
        "query": {"type": "http", "url": "https://evil.example/mcp?x=1"},
        "escaped": {"type": "http", "url": "https://evil.example/%6Dcp"},
        "elsewhere": {"type": "http", "url": "https://evil.example/other"},
    }));
    let deny = |patterns: &[&str]| {
        let entries: Vec<Value> = patterns.iter().map(|p| json!({"serverUrl": p})).collect();
        s.load(&[(false, json!({"deniedMcpServers": entries}))]).0
    };
    // `:*` covers the default port too; no port means the default port only.
    assert_eq!(
        deny(&["http://localhost:*/*"]),
        ["elsewhere", "escaped", "idna", "query"]
    );
    assert_eq!(
        deny(&["http://localhost/*"]),
        ["elsewhere", "escaped", "idna", "other-port", "query"]
    );
    // A host written in Unicode matches its IDNA form, in any case.
    assert!(!deny(&["https://bücher.example/*"]).contains(&"idna".to_owned()));
    // No query in the pattern: the query is not compared; escapes of plain letters decode.
    assert_eq!(
        deny(&["https://evil.example/mcp"]),
        [
            "default-port",
            "elsewhere",
            "explicit-default",
            "idna",
            "other-port"
        ]
    );
    // A deny pattern without a scheme blocks under every scheme.
    assert_eq!(
        deny(&["localhost:8080"]),
        [
            "default-port",
            "elsewhere",
            "escaped",
            "explicit-default",
            "idna",
            "query"
        ]
    );
}

#[test]
fn policy_entries_expand_through_the_environment_the_host_started_with() {
    let s = Setup::new();
    // A project's settings set TOOLS to point at its own program.
    s.user_servers(json!({"server": {"command": "${TOOLS}/server"}}));
    let settings = [(
        true,
        json!({"allowedMcpServers": [{"serverCommand": ["${TOOLS}/server"]}]}),
    )];
    let (loader, _) = s.loader(&settings);
    let home = s.home.to_str().unwrap().to_owned();
    let loader = loader.with_env(env(&[("HOME", &home), ("TOOLS", "./evil")]));
    let pinned = |value: Option<&str>| -> EnvLookup {
        let value = value.map(str::to_owned);
        Arc::new(move |k| if k == "TOOLS" { value.clone() } else { None })
    };
    let mut with = loader.clone();
    with.policy = with.policy.with_entry_env(pinned(None));
    assert!(
        with.load().0.is_empty(),
        "the project's TOOLS widened the allowlist"
    );
    let mut with = loader.clone();
    with.policy = with.policy.with_entry_env(pinned(Some("./evil")));
    assert_eq!(with.load().0.len(), 1, "the user's own TOOLS applies");
    // Without a pinned environment, entries expand as servers do.
    assert_eq!(loader.load().0.len(), 1);
}

#[test]
fn a_managed_switch_that_is_not_a_boolean_fails_closed() {
    let s = Setup::new();
    s.user_servers(example_servers());
    let (names, diags) = s.load(&[
        (
            true,
            json!({"allowManagedMcpServersOnly": "true", "allowedMcpServers": [{"serverName": "github"}]}),
        ),
        (false, json!({"allowedMcpServers": [{"serverName": "other-api"}]})),
    ]);
    assert_eq!(names, ["github"]);
    assert!(
        diags
            .iter()
            .any(|d| d.severity == Severity::Error && d.message.contains("taken as true"))
    );
}

#[test]
fn the_denylist_applies_to_provided_servers_and_names_do_not_lend_exemptions() {
    let s = Setup::new();
    let provided = json!({"managedMcpServers": {
        "search": {"type": "http", "url": "https://search.example.com/mcp"},
        "shared": {"type": "http", "url": "https://shared.example.com/mcp"},
    }});
    let (names, diags) = s.load(&[
        (true, provided.clone()),
        (
            false,
            json!({"deniedMcpServers": [{"serverUrl": "https://search.example.com"}]}),
        ),
    ]);
    assert_eq!(names, ["shared"]);
    assert_eq!(blocked(&diags)[0].0, "search");
    // A managed-mcp.json entry using ${VAR} is checked against the allowlist even when a
    // provided server has the same name.
    s.managed_mcp_json(
        &json!({"mcpServers": {"shared": {"type": "http", "url": "https://${TEAM:-t}.example.com/mcp"}}})
            .to_string(),
    );
    let (names, diags) = s.load(&[(true, provided), (true, json!({"allowedMcpServers": []}))]);
    assert_eq!(names, ["search"], "{diags:?}");
    assert_eq!(blocked(&diags)[0].0, "shared");
}

/// Claude Code loads a server whose name holds other characters than letters, digits, `-`
/// and `_`, and names its tools from the normalised name: so do we, with a warning. Two
/// names that normalise alike are both loaded, with a warning on the second.
#[test]
fn names_outside_the_safe_characters_load_with_a_warning() {
    let project = tempfile::tempdir().unwrap();
    let file = project.path().join(".mcp.json");
    write(
        &file,
        r#"{"mcpServers": {
            "my.server": {"command": "a"},
            "my_server": {"command": "b"},
            "Claude Preview": {"command": "x"},
            "café search": {"command": "c"},
            "a._b": {"command": "d"}
        }}"#,
    );
    let (servers, diags) = ConfigLoader::new(project.path()).with_env(env(&[])).load();
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a._b", "café search", "my.server", "my_server"]);
    assert!(
        diags.iter().all(|d| d.severity == Severity::Warning),
        "{diags:?}"
    );
    let about = |server: &str| -> Vec<String> {
        diags
            .iter()
            .filter(|d| d.server.as_deref() == Some(server))
            .map(|d| d.message.clone())
            .collect()
    };
    let dotted = about("my.server");
    assert_eq!(dotted.len(), 1, "{dotted:?}");
    assert!(
        dotted[0].contains("should use only letters, digits")
            && dotted[0].contains("`mcp__my_server__<tool>`"),
        "{dotted:?}"
    );
    // Same prefix as the server before it (by name): said once, on the second.
    let plain = about("my_server");
    assert_eq!(plain.len(), 1, "{plain:?}");
    assert!(
        plain[0].contains("like those of server \"my.server\"")
            && plain[0].contains("only server \"my.server\"'s is offered"),
        "{plain:?}"
    );
    assert!(
        dotted[0].contains("permission rules match it as `mcp__my_server`"),
        "{dotted:?}"
    );
    // Normalised to `caf__search`: no rule `mcp__caf__search` is promised, which would match
    // server `caf`'s tool `search` (found by review 36); the next warning says what holds.
    let cafe = about("café search");
    assert!(cafe[0].contains("`mcp__caf__search__<tool>`"), "{cafe:?}");
    assert!(!cafe[0].contains("permission rules"), "{cafe:?}");
    assert!(cafe[1].contains("`mcp__caf__search__*`"), "{cafe:?}");
    // Normalised to `a__b`: its tools read as server `a`'s.
    assert!(
        about("a._b")
            .iter()
            .any(|m| m.contains("Rename the server"))
    );
    // Reserved names stay skipped.
    assert!(about("Claude Preview")[0].contains("reserved"));
}

/// A `.mcp.json` saved with a byte order mark (as some Windows editors write it) is read.
#[test]
fn a_byte_order_mark_does_not_break_a_config_file() {
    let project = tempfile::tempdir().unwrap();
    write(
        &project.path().join(".mcp.json"),
        "\u{feff}{\"mcpServers\": {\"bom\": {\"command\": \"x\"}}}",
    );
    write(
        &project.path().join("extra.json"),
        "\u{feff}{\"mcpServers\": {\"bom-extra\": {\"command\": \"y\"}}}",
    );
    let mut loader = ConfigLoader::new(project.path())
        .with_env(env(&[]))
        .with_mcp_config([
            "extra.json",
            "\u{feff}{\"mcpServers\": {\"bom-inline\": {\"command\": \"z\"}}}",
        ]);
    loader.claude_json = None;
    let (servers, diags) = loader.load();
    assert!(diags.is_empty(), "{diags:?}");
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["bom", "bom-extra", "bom-inline"]);
}

/// Half a surrogate pair (`"\ud83d"`, which Claude Code's `JSON.parse` takes) does not make a
/// `.mcp.json`, a `--mcp-config` file or inline value unreadable: it reads as U+FFFD.
#[test]
fn half_a_surrogate_pair_does_not_break_a_config_file() {
    let project = tempfile::tempdir().unwrap();
    let doc = |name: &str| {
        format!(
            r#"{{"mcpServers": {{"{name}": {{"command": "x", "env": {{"G": "cut \ud83d"}}}}}}}}"#
        )
    };
    write(&project.path().join(".mcp.json"), &doc("file"));
    write(&project.path().join("extra.json"), &doc("extra"));
    let inline = doc("inline");
    let mut loader = ConfigLoader::new(project.path())
        .with_env(env(&[]))
        .with_mcp_config(["extra.json", inline.as_str()]);
    loader.claude_json = None;
    assert!(loader.mcp_config_errors().is_empty());
    let (servers, diags) = loader.load();
    assert!(diags.is_empty(), "{diags:?}");
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["extra", "file", "inline"]);
}
