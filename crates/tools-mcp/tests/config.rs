//! Configuration loading on real files in temporary directories.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tools_mcp::{ConfigLoader, ConfigScope, EnvLookup, Severity, TransportConfig};

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
            "bad name!": {"command": "x"},
            "workspace": {"command": "x"},
            "url-no-type": {"url": "https://x"},
            "no-command": {"args": []},
            "weird": {"type": "carrier-pigeon", "url": "x"},
            "bad-args": {"command": "x", "args": "not-a-list"},
            "legacy": {"type": "sse", "url": "http://127.0.0.1:1/sse"}
        }}"#,
    );
    let (servers, diags) = ConfigLoader::new(project.path()).with_env(env(&[])).load();
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["good", "legacy"]);
    assert_eq!(servers[0].timeout, None, "timeouts under 1 s are ignored");
    let find = |server: &str| {
        diags
            .iter()
            .find(|d| d.server.as_deref() == Some(server))
            .unwrap_or_else(|| panic!("no diagnostic for {server}: {diags:?}"))
    };
    assert_eq!(find("bad name!").severity, Severity::Error);
    assert!(find("bad name!").message.contains("invalid server name"));
    assert_eq!(find("workspace").severity, Severity::Warning);
    assert!(find("workspace").message.contains("reserved"));
    assert!(find("url-no-type").message.contains("no \"type\""));
    assert!(find("no-command").message.contains("\"command\""));
    assert!(find("weird").message.contains("carrier-pigeon"));
    assert!(find("bad-args").message.contains("\"args\""));
    assert!(find("good").message.contains("under 1000 ms"));
    assert_eq!(find("bad-args").file.as_deref(), Some(file.as_path()));
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
