//! How settings files are read for their hooks, from real files in a temp dir: a UTF-8 byte
//! order mark, blank files, where `.claude/settings.local.json` is (the git repository's
//! root, the same file the permissions read), and what bad inline `--settings` JSON is
//! reported as.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Env;
use serde_json::{Value, json};
use tool_core::RuleSource;
use tool_hooks::{HandlerKind, LoadedHooks, SettingsPaths, load_hooks};

const BOM: &[u8] = b"\xEF\xBB\xBF";

fn write_bytes(env: &Env, rel: &str, bytes: &[u8]) {
    let p = env.path(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

fn with_bom(v: &Value) -> Vec<u8> {
    [BOM, v.to_string().as_bytes()].concat()
}

fn hook(tag: &str) -> Value {
    json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": format!("echo {tag}")}]}]}})
}

/// The tags of the PreToolUse Bash hooks loaded, in configuration order.
fn tags(loaded: &LoadedHooks) -> Vec<String> {
    loaded
        .config
        .matching("PreToolUse", Some("Bash"))
        .into_iter()
        .filter_map(|h| match &h.kind {
            HandlerKind::Command(c) => c.command.split_whitespace().nth(1).map(str::to_owned),
            _ => None,
        })
        .collect()
}

fn messages(loaded: &LoadedHooks) -> Vec<String> {
    loaded.diagnostics.iter().map(ToString::to_string).collect()
}

fn paths(env: &Env, project: &str) -> SettingsPaths {
    SettingsPaths {
        managed_dir: Some(env.path("managed")),
        flag_settings: Vec::new(),
        project_dir: Some(env.path(project)),
        user_config_dir: Some(env.path("user")),
        project_trusted: true,
    }
}

// --- 1. A UTF-8 byte order mark -------------------------------------------------------------

/// Hooks from a settings file with a byte that is not UTF-8 load (the byte replaced, as
/// Claude Code reads the file): a PreToolUse guard is not lost to an editor's Latin-1 `é`.
#[test]
fn hooks_from_a_file_with_a_stray_byte_load() {
    let env = Env::new();
    let mut text = hook("user").to_string().into_bytes();
    text.pop();
    text.extend_from_slice(b", \"env\": {\"G\": \"caf\xe9\"}}");
    write_bytes(&env, "user/settings.json", &text);
    let loaded = load_hooks(&paths(&env, "project"));
    assert_eq!(tags(&loaded), ["user"], "{:?}", messages(&loaded));
}

/// A settings file holding half a surrogate pair (`"\ud83d"`, which Claude Code's
/// `JSON.parse` takes) keeps its hooks.
#[test]
fn hooks_from_a_file_with_half_a_surrogate_pair_load() {
    let env = Env::new();
    let mut text = hook("user").to_string();
    text.pop();
    text.push_str(r#", "env": {"G": "cut \ud83d"}}"#);
    write_bytes(&env, "user/settings.json", text.as_bytes());
    let loaded = load_hooks(&paths(&env, "project"));
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    assert_eq!(tags(&loaded), ["user"]);
}

/// Hooks from a BOM'd settings file load; they used to be thrown away as invalid JSON.
#[test]
fn hooks_from_a_bom_prefixed_file_load() {
    let env = Env::new();
    write_bytes(&env, "user/settings.json", &with_bom(&hook("user")));
    write_bytes(
        &env,
        "managed/managed-settings.json",
        &with_bom(&hook("managed")),
    );
    write_bytes(
        &env,
        "managed/managed-settings.d/10-a.json",
        &with_bom(&hook("dropin")),
    );
    write_bytes(
        &env,
        "project/.claude/settings.json",
        &with_bom(&hook("project")),
    );
    write_bytes(
        &env,
        "project/.claude/settings.local.json",
        &with_bom(&hook("local")),
    );
    write_bytes(&env, "flag.json", &with_bom(&hook("flagfile")));
    let mut p = paths(&env, "project");
    p.flag_settings
        .push(env.path("flag.json").display().to_string());
    let loaded = load_hooks(&p);
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    assert_eq!(
        tags(&loaded),
        ["user", "project", "local", "flagfile", "managed", "dropin"]
    );
}

/// Inline `--settings` JSON may start with a BOM too.
#[test]
fn inline_settings_json_may_start_with_a_bom() {
    let env = Env::new();
    let mut p = paths(&env, "project");
    p.flag_settings.push(format!("\u{feff}{}", hook("inline")));
    let loaded = load_hooks(&p);
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    assert_eq!(tags(&loaded), ["inline"]);
    assert_eq!(loaded.files[0].source, RuleSource::FlagSettings);
}

// --- 2. `.claude/settings.local.json` at the git repository's root --------------------------

/// From `repo/sub`, hooks come from `repo/.claude/settings.local.json` and
/// `repo/sub/.claude/settings.json`; not from `repo/.claude/settings.json` nor from a local
/// file below the root.
#[test]
fn the_local_settings_file_is_read_from_the_git_root() {
    let env = Env::new();
    std::fs::create_dir_all(env.path("repo/.git")).unwrap();
    write_bytes(
        &env,
        "repo/.claude/settings.local.json",
        hook("root-local").to_string().as_bytes(),
    );
    write_bytes(
        &env,
        "repo/.claude/settings.json",
        hook("root-shared").to_string().as_bytes(),
    );
    write_bytes(
        &env,
        "repo/sub/.claude/settings.json",
        hook("sub-shared").to_string().as_bytes(),
    );
    write_bytes(
        &env,
        "repo/sub/.claude/settings.local.json",
        hook("sub-local").to_string().as_bytes(),
    );
    let loaded = load_hooks(&paths(&env, "repo/sub"));
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    assert_eq!(tags(&loaded), ["sub-shared", "root-local"]);
    let local: Vec<_> = loaded
        .files
        .iter()
        .filter(|f| f.source == RuleSource::LocalSettings)
        .filter_map(|f| f.path.clone())
        .collect();
    assert_eq!(local, [env.path("repo/.claude/settings.local.json")]);
}

/// A worktree's `.git` is a file; an untrusted repository's root local file is listed as
/// ignored, like the project's own.
#[test]
fn a_worktree_root_local_file_is_the_local_file_and_trust_still_applies() {
    let env = Env::new();
    write_bytes(&env, "wt/.git", b"gitdir: /elsewhere/.git/worktrees/wt\n");
    write_bytes(
        &env,
        "wt/.claude/settings.local.json",
        hook("wt-local").to_string().as_bytes(),
    );
    std::fs::create_dir_all(env.path("wt/a/b")).unwrap();
    let loaded = load_hooks(&paths(&env, "wt/a/b"));
    assert_eq!(tags(&loaded), ["wt-local"]);
    let mut untrusted = paths(&env, "wt/a/b");
    untrusted.project_trusted = false;
    let loaded = load_hooks(&untrusted);
    assert!(tags(&loaded).is_empty());
    assert_eq!(
        loaded.untrusted_ignored,
        [env.path("wt/.claude/settings.local.json")]
    );
}

/// Outside a repository, the project directory's local file, as before.
#[test]
fn without_a_repository_the_local_file_is_the_project_dirs() {
    let env = Env::new();
    assert!(tool_core::git_root(env.root()).is_none());
    write_bytes(
        &env,
        "project/.claude/settings.local.json",
        hook("local").to_string().as_bytes(),
    );
    let loaded = load_hooks(&paths(&env, "project"));
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    assert_eq!(tags(&loaded), ["local"]);
}

// --- 3. Blank files --------------------------------------------------------------------------

/// Empty, whitespace-only and BOM-only files are `{}`: nothing reported.
#[test]
fn blank_settings_files_are_empty_objects() {
    let env = Env::new();
    write_bytes(&env, "managed/managed-settings.json", b"");
    write_bytes(&env, "user/settings.json", b" \n\t\r\n");
    write_bytes(&env, "project/.claude/settings.json", BOM);
    write_bytes(
        &env,
        "project/.claude/settings.local.json",
        b"\xEF\xBB\xBF\n",
    );
    write_bytes(&env, "flag.json", b"\n");
    let mut p = paths(&env, "project");
    p.flag_settings
        .push(env.path("flag.json").display().to_string());
    let loaded = load_hooks(&p);
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    assert!(tags(&loaded).is_empty());
}

// --- 4. Bad JSON -----------------------------------------------------------------------------

/// Bad inline JSON says where and what; a bad file is named with its path.
#[test]
fn bad_json_says_where_and_what() {
    let env = Env::new();
    write_bytes(&env, "user/settings.json", b"{\n  \"hooks\": {},\n}");
    let mut p = paths(&env, "project");
    p.flag_settings.push("{\"hooks\": {}} extra".into());
    let loaded = load_hooks(&p);
    let msgs = messages(&loaded);
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    let user = env.path("user/settings.json").display().to_string();
    assert!(
        msgs.iter().any(|m| m.starts_with(&user)
            && m.contains("invalid JSON")
            && m.contains("trailing comma at line 3 column 1")),
        "{msgs:?}"
    );
    assert!(
        msgs.iter().any(|m| m.contains("--settings")
            && m.contains("invalid JSON")
            && m.contains("trailing characters at line 1 column")),
        "{msgs:?}"
    );
}
