//! The 34th review's finding on `.claude.json`: a malformed entry of `projects` (the local
//! scope of one folder) was reported as if the whole file were unusable ("the configuration
//! must be a JSON object with \"mcpServers\" ...; nothing is read from it") while the user
//! servers of that same file were read and used. The error now names the key at fault and
//! says what was skipped: that entry's servers. Real files in temporary directories.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use tools_mcp::{ConfigLoader, ConfigScope, Diagnostic, EnvLookup, Severity};

fn env(pairs: &[(&str, &str)]) -> EnvLookup {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    Arc::new(move |k| map.get(k).cloned())
}

/// Loads the servers of a project directory whose `$CLAUDE_CONFIG_DIR/.claude.json` is
/// `claude_json` (its `projects` key made with the project directory's path).
fn load_with(
    claude_json: impl Fn(&str) -> Value,
) -> (Vec<(String, ConfigScope)>, Vec<Diagnostic>, String) {
    let cfg = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let key = project.path().to_str().unwrap().to_owned();
    let file = cfg.path().join(".claude.json");
    std::fs::write(&file, claude_json(&key).to_string()).unwrap();
    let mut loader = ConfigLoader::new(project.path()).with_env(env(&[
        ("HOME", "/nonexistent-home"),
        ("CLAUDE_CONFIG_DIR", cfg.path().to_str().unwrap()),
    ]));
    loader.managed_dir = None;
    let (servers, diags) = loader.load();
    assert_eq!(loader.claude_json.as_deref(), Some(Path::new(&file)));
    let servers = servers.into_iter().map(|s| (s.name, s.scope)).collect();
    (servers, diags, key)
}

fn errors(diags: &[Diagnostic]) -> Vec<String> {
    diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(ToString::to_string)
        .collect()
}

#[test]
fn a_project_entry_that_is_no_object_is_named_and_the_user_servers_still_load() {
    let (servers, diags, key) = load_with(|key| {
        json!({
            "mcpServers": {"tw": {"command": "toolwright", "args": ["serve"]}},
            "projects": {key: true},
        })
    });
    // The user server of the same file is read, as before.
    assert_eq!(servers, [("tw".to_owned(), ConfigScope::User)]);
    let errors = errors(&diags);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    let error = &errors[0];
    // Names the key at fault, and says what it is.
    let at = format!("projects[{}]", serde_json::to_string(&key).unwrap());
    assert!(error.contains(&at), "{error}");
    assert!(error.contains("must be an object (found true)"), "{error}");
    // Says truthfully what was skipped: that entry's servers, not the whole file.
    assert!(!error.contains("nothing is read from it"), "{error}");
    assert!(!error.contains("with \"mcpServers\""), "{error}");
    assert!(
        error.contains("this folder's MCP servers (local scope) are not read from it")
            && error.contains("the user's servers in this file still are"),
        "{error}"
    );
}

#[test]
fn a_project_entry_whose_mcp_servers_is_no_object_names_that_key() {
    let (servers, diags, key) = load_with(|key| {
        json!({
            "mcpServers": {"tw": {"command": "toolwright"}},
            "projects": {key: {"mcpServers": ["local"]}},
        })
    });
    assert_eq!(servers, [("tw".to_owned(), ConfigScope::User)]);
    let errors = errors(&diags);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    let at = format!(
        "projects[{}].mcpServers",
        serde_json::to_string(&key).unwrap()
    );
    assert!(errors[0].contains(&at), "{}", errors[0]);
    assert!(
        errors[0].contains("this folder's MCP servers (local scope) are not read"),
        "{}",
        errors[0]
    );
}

#[test]
fn a_well_formed_project_entry_still_loads_its_servers_without_a_word() {
    let (servers, diags, _) = load_with(|key| {
        json!({
            "mcpServers": {"tw": {"command": "toolwright"}},
            "projects": {key: {"hasTrustDialogAccepted": true, "mcpServers": {"mine": {"command": "m"}}}},
        })
    });
    assert_eq!(
        servers,
        [
            ("mine".to_owned(), ConfigScope::Local),
            ("tw".to_owned(), ConfigScope::User)
        ]
    );
    assert!(diags.is_empty(), "{diags:#?}");
}

#[test]
fn a_misspelt_key_in_a_project_entry_is_said_to_be_in_that_entry() {
    let (servers, diags, key) = load_with(|key| {
        json!({
            "mcpServers": {"tw": {"command": "toolwright"}},
            "projects": {key: {"mcp_servers": {"mine": {"command": "m"}}}},
        })
    });
    assert_eq!(servers, [("tw".to_owned(), ConfigScope::User)]);
    let shown: Vec<String> = diags.iter().map(ToString::to_string).collect();
    let at = format!("projects[{}]", serde_json::to_string(&key).unwrap());
    assert_eq!(shown.len(), 1, "{shown:#?}");
    assert!(
        shown[0].contains(&format!("{at}: \"mcp_servers\" is not read")),
        "{}",
        shown[0]
    );
}
