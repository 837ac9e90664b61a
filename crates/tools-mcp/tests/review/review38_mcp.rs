//! The 38th review's findings on the MCP client, against real files in temporary
//! directories and real server processes:
//! - local-scope servers (`~/.claude.json` → `projects[...]`), which Claude Code keys by the
//!   repository's git root, were not loaded from a subdirectory of the repository;
//! - `disabledMcpjsonServers` compared names exactly, so `my_docs` (the name tools and
//!   permission rules spell) did not disable the `.mcp.json` server `my.docs`, which Claude
//!   Code's normalised comparison does;
//! - a result with only `structuredContent` gave PostToolUse hooks `[]` as `tool_response`
//!   while the model was shown the structured content.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::common::{call, python_server, tool};
use serde_json::{Value, json};
use tools_mcp::{
    ConfigLoader, ConfigScope, Diagnostic, EnvLookup, McpManager, McpOptions, McpPolicy,
};

fn env(pairs: &[(&str, &str)]) -> EnvLookup {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    Arc::new(move |k| map.get(k).cloned())
}

/// A loader for `project` whose `.claude.json` is in `config_dir`, with no managed
/// directory.
fn loader(project: &Path, config_dir: &Path) -> ConfigLoader {
    let mut loader = ConfigLoader::new(project).with_env(env(&[
        ("HOME", "/nonexistent-home"),
        ("CLAUDE_CONFIG_DIR", config_dir.to_str().unwrap()),
    ]));
    loader.managed_dir = None;
    loader
}

/// A real repository (`git init`) in a temporary directory, by its canonical path (as the
/// binary names its working directory), with a subdirectory `sub/deeper`.
fn repository() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let repo = std::fs::canonicalize(dir.path()).unwrap().join("repo");
    std::fs::create_dir_all(repo.join("sub/deeper")).unwrap();
    let status = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&repo)
        .status()
        .unwrap();
    assert!(status.success());
    (dir, repo)
}

/// Runs git in `repo`, sealed off from the user's and the system's configuration.
fn git(repo: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(repo)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "T")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "T")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn stdio_entry(tag: &str) -> Value {
    json!({"type": "stdio", "command": "python3", "args": [tag], "env": {}})
}

/// A loaded server: its name, scope and (stdio) arguments.
type Loaded = (String, ConfigScope, Vec<String>);

fn loaded(loader: &ConfigLoader) -> (Vec<Loaded>, Vec<Diagnostic>) {
    let (servers, diags) = loader.load();
    let servers = servers
        .into_iter()
        .map(|s| {
            let args = match s.transport {
                tools_mcp::TransportConfig::Stdio { args, .. } => args,
                _ => Vec::new(),
            };
            (s.name, s.scope, args)
        })
        .collect();
    (servers, diags)
}

/// `claude mcp add loc -- …` run anywhere in a repository writes the server under the
/// repository's root (Claude Code's `getProjectPathForConfig`), and Claude Code finds it from
/// every folder of the repository.
#[test]
fn local_servers_keyed_by_the_git_root_load_from_a_subdirectory() {
    let (dir, repo) = repository();
    let config = dir.path().join("config");
    std::fs::create_dir(&config).unwrap();
    let root_key = repo.to_str().unwrap();
    std::fs::write(
        config.join(".claude.json"),
        json!({"projects": {root_key: {"mcpServers": {"loc": stdio_entry("root")}}}}).to_string(),
    )
    .unwrap();
    for folder in [repo.clone(), repo.join("sub"), repo.join("sub/deeper")] {
        let (servers, diags) = loaded(&loader(&folder, &config));
        assert_eq!(
            servers,
            [(
                "loc".to_owned(),
                ConfigScope::Local,
                vec!["root".to_owned()]
            )],
            "from {}: {diags:?}",
            folder.display()
        );
        assert!(diags.is_empty(), "{diags:?}");
    }
}

/// In a linked worktree (`git worktree add`, `EnterWorktree`), the servers `claude mcp add`
/// wrote under the main checkout's root load too: Claude Code keys project configuration by
/// the canonical root (`findCanonicalGitRoot` follows the worktree's `.git` file to the main
/// repository). Found by code review 38: only the worktree's own root was looked up.
#[test]
fn local_servers_of_the_main_checkout_load_in_its_worktrees() {
    let (dir, repo) = repository();
    let git = |args: &[&str]| git(&repo, args);
    git(&["commit", "-q", "--allow-empty", "-m", "first"]);
    let worktree = repo.join(".claude/worktrees/feat");
    git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "feat",
        worktree.to_str().unwrap(),
    ]);
    std::fs::create_dir(worktree.join("inner")).unwrap();
    let config = dir.path().join("config");
    std::fs::create_dir(&config).unwrap();
    std::fs::write(
        config.join(".claude.json"),
        json!({"projects": {repo.to_str().unwrap(): {"mcpServers": {"loc": stdio_entry("main")}}}})
            .to_string(),
    )
    .unwrap();
    for folder in [worktree.clone(), worktree.join("inner")] {
        let (servers, diags) = loaded(&loader(&folder, &config));
        assert_eq!(
            servers,
            [(
                "loc".to_owned(),
                ConfigScope::Local,
                vec!["main".to_owned()]
            )],
            "from {}: {diags:?}",
            folder.display()
        );
    }
    // A `.git` file that names a directory that is no worktree of a repository (a cloned
    // project's own file pointing anywhere) gives no other root than the folder's.
    let fake = dir.path().join("fake");
    std::fs::create_dir(&fake).unwrap();
    std::fs::write(
        fake.join(".git"),
        format!("gitdir: {}\n", repo.join(".git").display()),
    )
    .unwrap();
    let (servers, _) = loaded(&loader(&fake, &config));
    assert!(servers.is_empty(), "{servers:?}");
    // A forged admin directory outside the repository whose `commondir` leads to it: not
    // one the repository lists in its `worktrees/`.
    let admin = dir.path().join("forged/worktrees/w");
    std::fs::create_dir_all(&admin).unwrap();
    std::fs::write(
        admin.join("commondir"),
        format!("{}\n", repo.join(".git").display()),
    )
    .unwrap();
    std::fs::write(
        admin.join("gitdir"),
        format!("{}\n", fake.join(".git").display()),
    )
    .unwrap();
    std::fs::write(fake.join(".git"), format!("gitdir: {}\n", admin.display())).unwrap();
    let (servers, _) = loaded(&loader(&fake, &config));
    assert!(servers.is_empty(), "forged admin directory: {servers:?}");
}

/// A folder that names a real worktree's admin directory (`.git/worktrees/feat`) in its
/// `.git` file, absolute or relative, or whose `.git` is a symlink to the worktree's `.git`
/// file, is no worktree: git's back-link (`.git/worktrees/feat/gitdir`) names the worktree's
/// `.git`, not this folder's. The main checkout's local servers (with their env and
/// secrets) do not load there. Found by review 39: any folder naming a worktree of a
/// repository got its servers.
#[test]
fn local_servers_of_a_repository_do_not_load_in_a_folder_naming_its_worktree() {
    let (dir, repo) = repository();
    let git = |args: &[&str]| git(&repo, args);
    git(&["commit", "-q", "--allow-empty", "-m", "first"]);
    let worktree = repo.join(".claude/worktrees/feat");
    git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "feat",
        worktree.to_str().unwrap(),
    ]);
    let config = dir.path().join("config");
    std::fs::create_dir(&config).unwrap();
    std::fs::write(
        config.join(".claude.json"),
        json!({"projects": {repo.to_str().unwrap(): {"mcpServers": {"loc": stdio_entry("main")}}}})
            .to_string(),
    )
    .unwrap();
    let base = repo.parent().unwrap();
    let admin = repo.join(".git/worktrees/feat");
    let absolute = base.join("absolute");
    std::fs::create_dir(&absolute).unwrap();
    std::fs::write(
        absolute.join(".git"),
        format!("gitdir: {}\n", admin.display()),
    )
    .unwrap();
    let relative = base.join("relative");
    std::fs::create_dir(&relative).unwrap();
    std::fs::write(
        relative.join(".git"),
        "gitdir: ../repo/.git/worktrees/feat\n",
    )
    .unwrap();
    let linked = base.join("linked");
    std::fs::create_dir(&linked).unwrap();
    std::os::unix::fs::symlink(worktree.join(".git"), linked.join(".git")).unwrap();
    let loaded_in: Vec<_> = [absolute, relative, linked]
        .into_iter()
        .map(|folder| (loaded(&loader(&folder, &config)).0, folder))
        .filter(|(servers, _)| !servers.is_empty())
        .collect();
    assert!(loaded_in.is_empty(), "{loaded_in:#?}");
    // The real worktree still gets them.
    let (servers, diags) = loaded(&loader(&worktree, &config));
    assert_eq!(servers.len(), 1, "{servers:?} {diags:?}");
}

/// A folder's own entry (which Toolwright read before) is still read, and wins over the
/// repository's for a name, as the nearer `.mcp.json` does; the repository's other servers
/// load beside it, and a malformed server there is reported as in any entry.
#[test]
fn a_subdirectorys_own_entry_still_loads_and_wins_for_its_names() {
    let (dir, repo) = repository();
    let config = dir.path().join("config");
    std::fs::create_dir(&config).unwrap();
    let sub = repo.join("sub");
    std::fs::write(
        config.join(".claude.json"),
        json!({"projects": {
            repo.to_str().unwrap(): {"mcpServers": {
                "both": stdio_entry("root"), "rootonly": stdio_entry("root"), "bad": {}}},
            sub.to_str().unwrap(): {"mcpServers": {
                "both": stdio_entry("sub"), "subonly": stdio_entry("sub")}},
        }})
        .to_string(),
    )
    .unwrap();
    let (servers, diags) = loaded(&loader(&sub, &config));
    let local = |name: &str, tag: &str| (name.to_owned(), ConfigScope::Local, vec![tag.to_owned()]);
    assert_eq!(
        servers,
        [
            local("both", "sub"),
            local("rootonly", "root"),
            local("subonly", "sub")
        ]
    );
    // The malformed entry of the repository's folder is reported, naming that entry.
    let text: Vec<String> = diags.iter().map(ToString::to_string).collect();
    assert!(
        text.len() == 1 && text[0].contains("\"bad\"") && text[0].contains("\"command\""),
        "{text:?}"
    );
    assert!(
        diags[0]
            .file
            .as_deref()
            .is_some_and(|f| f.ends_with(".claude.json")),
        "{diags:?}"
    );
}

/// Outside any repository only the folder's own entry counts, as before: a parent folder's
/// entry is not the project's.
#[test]
fn outside_a_repository_a_parent_folders_entry_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let top = std::fs::canonicalize(dir.path()).unwrap().join("top");
    std::fs::create_dir_all(top.join("sub")).unwrap();
    let config = dir.path().join("config");
    std::fs::create_dir(&config).unwrap();
    std::fs::write(
        config.join(".claude.json"),
        json!({"projects": {top.to_str().unwrap(): {"mcpServers": {"loc": stdio_entry("top")}}}})
            .to_string(),
    )
    .unwrap();
    let (servers, diags) = loaded(&loader(&top.join("sub"), &config));
    assert!(
        servers.is_empty() && diags.is_empty(),
        "{servers:?} {diags:?}"
    );
}

/// `disabledMcpjsonServers` names match as Claude Code's `getProjectMcpServerStatus`
/// compares them: both normalised (`normalizeNameForMCP`), so the name the tools and rules
/// spell (`my_docs`) disables `my.docs`, and the raw name still does.
#[test]
fn disabled_mcpjson_servers_compare_normalised_names() {
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap().join("proj");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(
        project.join(".mcp.json"),
        json!({"mcpServers": {
            "my.docs": stdio_entry("a"), "team docs": stdio_entry("b"),
            "raw.name": stdio_entry("c"), "under_score": stdio_entry("d"),
            "kept": stdio_entry("e"),
        }})
        .to_string(),
    )
    .unwrap();
    let settings =
        json!({"disabledMcpjsonServers": ["my_docs", "team_docs", "raw.name", "under.score"]});
    let (policy, problems) = McpPolicy::from_settings([(false, None, &settings)]);
    assert!(problems.is_empty(), "{problems:?}");
    let config = dir.path().join("config");
    std::fs::create_dir(&config).unwrap();
    let loader = loader(&project, &config).with_policy(policy);
    let (servers, diags) = loaded(&loader);
    let names: Vec<&str> = servers.iter().map(|(n, ..)| n.as_str()).collect();
    assert_eq!(names, ["kept"], "{diags:?}");
}

/// A result whose `content` is empty and whose data is in `structuredContent` gives
/// PostToolUse hooks (`ToolOutput::structured`, their `tool_response`) what the model is
/// shown: the JSON text of the structured content, as Claude Code's `transformMCPResult`
/// does. The same holds for a legacy `toolResult`. A result with content keeps the raw
/// `content` array for hooks.
#[tokio::test]
async fn a_result_with_only_structured_content_gives_hooks_what_the_model_sees() {
    let dir = tempfile::tempdir().unwrap();
    let server = python_server(
        dir.path(),
        "s",
        "structured",
        r#"if m == "initialize":
    answer(i, init(msg, {"tools": {}}))
elif m == "tools/list":
    answer(i, {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in ("only", "legacy", "both")]})
elif m == "tools/call":
    n = msg["params"]["name"]
    if n == "only":
        answer(i, {"content": [], "structuredContent": {"customer": "ACME", "card": "4111"}})
    elif n == "legacy":
        answer(i, {"toolResult": {"total": 3}})
    else:
        answer(i, {"content": [{"type": "text", "text": "ACME"}], "structuredContent": {"customer": "ACME"}})
elif i is not None:
    answer(i, {})"#,
    );
    let mut opts = McpOptions::from_lookup(std::env::temp_dir(), &|_: &str| None);
    opts.startup_timeout = Duration::from_secs(20);
    let (manager, diags) = McpManager::connect(vec![server], opts).await;
    assert!(diags.is_empty(), "{diags:?}");

    let only = call(&tool(&manager, "mcp__s__only"), json!({}))
        .await
        .unwrap();
    let shown = only.data.content.joined_text();
    assert_eq!(
        serde_json::from_str::<Value>(&shown).unwrap(),
        json!({"customer": "ACME", "card": "4111"})
    );
    assert_eq!(only.data.structured, Value::String(shown));

    let legacy = call(&tool(&manager, "mcp__s__legacy"), json!({}))
        .await
        .unwrap();
    let shown = legacy.data.content.joined_text();
    assert_eq!(
        serde_json::from_str::<Value>(&shown).unwrap(),
        json!({"total": 3})
    );
    assert_eq!(legacy.data.structured, Value::String(shown));

    let both = call(&tool(&manager, "mcp__s__both"), json!({}))
        .await
        .unwrap();
    assert_eq!(both.data.content.joined_text(), "ACME");
    assert_eq!(
        both.data.structured,
        json!([{"type": "text", "text": "ACME"}])
    );
    manager.shutdown().await;
}
