//! Claude Code's settings files: where they are, their precedence, and the `permissions`
//! section.
//!
//! [`load_settings_files`] and [`merge_settings`] read and merge whole files and know nothing
//! of permissions, so other layers (hooks) can use them for their own sections;
//! [`load_permissions`] builds the [`ToolPermissionContext`] from them.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tool_core::{
    PermissionMode, RuleBehavior, RuleSource, SourcedRule, ToolPermissionContext, expand_path,
};

use crate::engine::{PermissionEngine, RuleDiagnostic};
use crate::path::PathRoots;

/// Where to look for settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SettingsSources {
    /// The project directory (`.claude/settings.json` lives below it;
    /// `.claude/settings.local.json` below the root of its git repository, or below it
    /// outside a repository).
    pub project_dir: PathBuf,
    /// The home directory (for `~` and the default user config dir).
    pub home: Option<PathBuf>,
    /// The user config dir (`$CLAUDE_CONFIG_DIR`, else `~/.claude`: what
    /// [`standard`](Self::standard) fills in); `None` reads no user settings (a session
    /// isolated from the user's configuration, as the demo's).
    pub user_config_dir: Option<PathBuf>,
    /// The managed settings dir (`/etc/claude-code` on Linux); `None` skips managed settings.
    pub managed_dir: Option<PathBuf>,
    /// `--settings` values: a file path, or inline JSON (starting with `{`).
    pub flag_settings: Vec<String>,
    /// Extra settings given inline, with the source they count as (the CLI's `--rules` counts
    /// as project settings).
    pub inline: Vec<(RuleSource, Value)>,
    /// Whether the project directory is trusted. An untrusted project's own files
    /// (`.claude/settings.json`, `.claude/settings.local.json`) may only restrict: their
    /// `deny` and `ask` rules and `disableBypassPermissionsMode: "disable"` apply, everything
    /// else (allow rules, `additionalDirectories`, `defaultMode`, ...) is ignored and the
    /// files are listed in
    /// [`LoadedPermissions::untrusted_ignored`]. Inline values were given by the user and
    /// always apply. Default: untrusted.
    pub project_trusted: bool,
}

impl SettingsSources {
    /// Sources for `project_dir` with the standard locations: home from `HOME`, the user
    /// config dir from `CLAUDE_CONFIG_DIR` (else `~/.claude`), managed settings from the
    /// platform's directory.
    pub fn standard(project_dir: impl Into<PathBuf>) -> Self {
        Self::standard_with_env(project_dir, |k| std::env::var_os(k))
    }

    /// [`standard`](Self::standard) with the environment read through `env` (`HOME`,
    /// `CLAUDE_CONFIG_DIR`).
    pub fn standard_with_env(
        project_dir: impl Into<PathBuf>,
        env: impl Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Self {
        let home = env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        let user_config_dir = env("CLAUDE_CONFIG_DIR")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".claude")));
        let managed_dir = Some(tool_core::managed_settings_dir());
        Self {
            project_dir: project_dir.into(),
            home,
            user_config_dir,
            managed_dir,
            ..Default::default()
        }
    }
}

/// One settings file (or inline JSON) that was read.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsFile {
    /// Which level it is.
    pub source: RuleSource,
    /// Its path; `None` for inline JSON.
    pub path: Option<PathBuf>,
    /// Its content.
    pub value: Value,
}

/// How bad a settings problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The file or value was ignored (unreadable, invalid JSON, malformed rule).
    Error,
    /// Kept, but probably not what was meant.
    Warning,
}

/// A problem found while loading settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsDiagnostic {
    /// The file, if any.
    pub file: Option<PathBuf>,
    /// The level.
    pub source: RuleSource,
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for SettingsDiagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let file = self.file.as_ref().map_or_else(
            || format!("{:?} (inline)", self.source),
            |p| p.display().to_string(),
        );
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{file}: {sev}: {}", self.message)
    }
}

/// Parses the text of a settings file or inline value into its object: a leading byte
/// order mark is skipped and blank text (nothing but whitespace) is `{}`. The error says
/// what is wrong: invalid JSON with serde's reason, line and column, or valid JSON that is
/// not an object.
fn parse_settings_text(text: &str) -> Result<Value, String> {
    let text = tool_core::without_bom(text);
    if text.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    match tool_core::parse_config_json(text) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(other) => Err(format!(
            "settings must be a JSON object, not {}",
            kind_of(&other)
        )),
        Err(e) => Err(format!("invalid JSON ({e})")),
    }
}

/// A JSON value's kind, for messages.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn read_json(
    path: &Path,
    source: RuleSource,
    must_exist: bool,
    diags: &mut Vec<SettingsDiagnostic>,
) -> Option<Value> {
    let text = match tool_core::read_config_text(path) {
        Ok((t, repaired)) => {
            if repaired {
                diags.push(SettingsDiagnostic {
                    file: Some(path.to_path_buf()),
                    source,
                    severity: Severity::Warning,
                    message: tool_core::NOT_UTF8_NOTE.to_owned(),
                });
            }
            t
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !must_exist => return None,
        Err(e) => {
            diags.push(SettingsDiagnostic {
                file: Some(path.to_path_buf()),
                source,
                severity: Severity::Error,
                message: format!("cannot read the settings file: {e}"),
            });
            return None;
        }
    };
    match parse_settings_text(&text) {
        Ok(v) => Some(v),
        Err(problem) => {
            diags.push(SettingsDiagnostic {
                file: Some(path.to_path_buf()),
                source,
                severity: Severity::Error,
                message: format!("{problem}; file ignored"),
            });
            None
        }
    }
}

/// Reads every settings file that exists, highest precedence first: managed
/// (`managed-settings.d/*.json` in reverse name order, then `managed-settings.json`: the
/// drop-ins merge after the main file, the last one winning), `--settings`
/// values, inline values, `.claude/settings.local.json` (at the git repository's root),
/// `.claude/settings.json`, the user's `settings.json`. Missing optional files are skipped
/// silently; a UTF-8 byte order mark at the start of a file or value is skipped and a blank
/// file is `{}`; unreadable or invalid files are reported and skipped.
pub fn load_settings_files(
    sources: &SettingsSources,
) -> (Vec<SettingsFile>, Vec<SettingsDiagnostic>) {
    let mut files = Vec::new();
    let mut diags = Vec::new();
    let add = |source,
               path: PathBuf,
               must: bool,
               files: &mut Vec<SettingsFile>,
               diags: &mut Vec<SettingsDiagnostic>| {
        if let Some(value) = read_json(&path, source, must, diags) {
            files.push(SettingsFile {
                source,
                path: Some(path),
                value,
            });
        }
    };
    if let Some(dir) = &sources.managed_dir {
        // Drop-ins merge after the main file, alphabetically: the last one wins, so it
        // comes first here (highest precedence first).
        let mut paths = managed_drop_ins(dir, &mut diags);
        paths.reverse();
        for p in paths {
            add(RuleSource::PolicySettings, p, true, &mut files, &mut diags);
        }
        add(
            RuleSource::PolicySettings,
            dir.join("managed-settings.json"),
            false,
            &mut files,
            &mut diags,
        );
    }
    // The last `--settings` given wins: it comes first here.
    for flag in sources.flag_settings.iter().rev() {
        if tool_core::is_inline_json(flag) {
            match parse_settings_text(flag) {
                Ok(value) => files.push(SettingsFile {
                    source: RuleSource::FlagSettings,
                    path: None,
                    value,
                }),
                Err(problem) => diags.push(SettingsDiagnostic {
                    file: None,
                    source: RuleSource::FlagSettings,
                    severity: Severity::Error,
                    message: format!("the inline --settings value is not valid: {problem}"),
                }),
            }
        } else {
            let path = expand_path(flag, &sources.project_dir, sources.home.as_deref());
            add(RuleSource::FlagSettings, path, true, &mut files, &mut diags);
        }
    }
    for (source, value) in &sources.inline {
        if value.is_object() {
            files.push(SettingsFile {
                source: *source,
                path: None,
                value: value.clone(),
            });
        } else {
            diags.push(SettingsDiagnostic {
                file: None,
                source: *source,
                severity: Severity::Error,
                message: "inline settings must be a JSON object".into(),
            });
        }
    }
    let claude = sources.project_dir.join(".claude");
    let local = tool_core::local_settings_path(&sources.project_dir);
    let beside_project = claude.join("settings.local.json");
    if local != beside_project && beside_project.is_file() {
        // Claude Code does not read it either; its rules must not be lost unnoticed.
        diags.push(SettingsDiagnostic {
            file: Some(beside_project),
            source: RuleSource::LocalSettings,
            severity: Severity::Warning,
            message: format!(
                "not read: the local settings file is the git repository's, {}; move these settings there",
                local.display()
            ),
        });
    }
    add(
        RuleSource::LocalSettings,
        local,
        false,
        &mut files,
        &mut diags,
    );
    add(
        RuleSource::ProjectSettings,
        claude.join("settings.json"),
        false,
        &mut files,
        &mut diags,
    );
    if let Some(dir) = &sources.user_config_dir {
        add(
            RuleSource::UserSettings,
            dir.join("settings.json"),
            false,
            &mut files,
            &mut diags,
        );
    }
    for file in &mut files {
        drop_mistyped_sections(file, &mut diags);
    }
    // Stable: inline project values come before the project file; keep scan order otherwise.
    files.sort_by_key(|f| precedence(f.source));
    (files, diags)
}

/// The managed drop-ins ([`tool_core::managed_drop_ins`]), with the errors met reading
/// their directory reported.
fn managed_drop_ins(managed_dir: &Path, diags: &mut Vec<SettingsDiagnostic>) -> Vec<PathBuf> {
    let (paths, errors) = tool_core::managed_drop_ins(managed_dir);
    for e in errors {
        diags.push(SettingsDiagnostic {
            file: Some(managed_dir.join("managed-settings.d")),
            source: RuleSource::PolicySettings,
            severity: Severity::Error,
            message: format!("cannot read the managed settings drop-in directory: {e}"),
        });
    }
    paths
}

/// Sections that must be JSON objects (`env`, `permissions`): one of another type is
/// reported and left out of the file, so it cannot wipe out the same section of the levels
/// below when the files merge.
fn drop_mistyped_sections(file: &mut SettingsFile, diags: &mut Vec<SettingsDiagnostic>) {
    let Some(object) = file.value.as_object_mut() else {
        return;
    };
    for key in ["env", "permissions"] {
        let Some(section) = object.get(key) else {
            continue;
        };
        if section.is_object() {
            continue;
        }
        let kind = kind_of(section);
        diags.push(SettingsDiagnostic {
            file: file.path.clone(),
            source: file.source,
            severity: Severity::Error,
            message: format!("`{key}` must be an object, not {kind}; the section is left out"),
        });
        object.remove(key);
    }
}

fn precedence(source: RuleSource) -> u8 {
    match source {
        RuleSource::PolicySettings => 0,
        RuleSource::CliArg => 1,
        RuleSource::FlagSettings => 2,
        RuleSource::Command => 3,
        RuleSource::Session => 4,
        RuleSource::LocalSettings => 5,
        RuleSource::ProjectSettings => 6,
        RuleSource::UserSettings => 7,
    }
}

/// Merges settings given highest precedence first: objects merge key by key, arrays are
/// concatenated (highest level first), other values come from the highest level that has
/// them.
pub fn merge_settings(files: &[SettingsFile]) -> Value {
    let mut out = Value::Object(serde_json::Map::new());
    for f in files.iter().rev() {
        merge_into(&mut out, &f.value);
    }
    out
}

fn merge_into(low: &mut Value, high: &Value) {
    match (low, high) {
        (Value::Object(l), Value::Object(h)) => {
            for (k, hv) in h {
                match l.get_mut(k) {
                    Some(lv) => merge_into(lv, hv),
                    None => {
                        l.insert(k.clone(), hv.clone());
                    }
                }
            }
        }
        (Value::Array(l), Value::Array(h)) => {
            // Each value once, found by its JSON text: tens of thousands of rules merge in
            // linear time (a `contains` for each was quadratic: seconds at 90,000).
            let mut seen: std::collections::HashSet<String> =
                h.iter().map(Value::to_string).collect();
            let mut merged = h.clone();
            for v in l.iter() {
                if seen.insert(v.to_string()) {
                    merged.push(v.clone());
                }
            }
            *l = merged;
        }
        (l, h) => *l = h.clone(),
    }
}

/// The permission state read from settings.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedPermissions {
    /// Rules (each with its source), mode, additional directories.
    pub context: ToolPermissionContext,
    /// Where relative path rules are anchored.
    pub roots: PathRoots,
    /// The files that were read, highest precedence first.
    pub files: Vec<SettingsFile>,
    /// Problems: unreadable files, invalid JSON, malformed rules (with their file).
    pub diagnostics: Vec<SettingsDiagnostic>,
    /// Project files of an untrusted project from which grants were ignored.
    pub untrusted_ignored: Vec<PathBuf>,
    /// What those files set that was ignored, in the order met: `allow rules`, then the other
    /// `permissions` keys and the top-level keys by name (`defaultMode`, `env`,
    /// `disableAllHooks`, `allowedMcpServers`, ...).
    pub untrusted_ignored_keys: Vec<String>,
    /// `disableBypassPermissionsMode: "disable"` was set: bypassPermissions may not be
    /// entered, not even from a command-line flag.
    pub bypass_disabled: bool,
}

impl LoadedPermissions {
    /// Whether any problem is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
    }

    /// Builds the engine for these settings (malformed rules were already reported).
    pub fn engine(&self) -> PermissionEngine {
        PermissionEngine::new_lenient(&self.context, self.roots.clone()).0
    }

    /// The errors in what the command line gave (`--settings` files or JSON, inline rules),
    /// which are bad input rather than problems of the ambient settings files.
    pub fn command_line_errors(&self) -> Vec<String> {
        self.diagnostics
            .iter()
            .filter(|d| {
                d.severity == Severity::Error
                    && (d.source == RuleSource::FlagSettings
                        || (d.source == RuleSource::ProjectSettings && d.file.is_none()))
            })
            // These stop the command: what a settings file's error says of itself ("…;
            // ignored") is not what happens to it here.
            .map(|d| d.to_string().trim_end_matches("; ignored").to_owned())
            .collect()
    }

    /// Applies a `--mode` flag to `permission` (loaded from these settings):
    /// `bypassPermissions` is refused when the settings disable it
    /// (`disableBypassPermissionsMode: "disable"` wins, as in Claude Code). The flag takes
    /// the place of `defaultMode`, and bypass is available only when the flag asks for it
    /// (as Claude Code works it out from the mode it starts in): `--mode plan` under a
    /// `defaultMode` of `bypassPermissions` is plan mode, not bypass.
    pub fn apply_mode_flag(
        &self,
        permission: &mut ToolPermissionContext,
        mode: Option<PermissionMode>,
    ) -> Result<(), String> {
        let Some(mode) = mode else { return Ok(()) };
        if mode == PermissionMode::BypassPermissions && self.bypass_disabled {
            return Err("--mode bypassPermissions: bypass is disabled by settings (`permissions.disableBypassPermissionsMode: \"disable\"`)".into());
        }
        permission.bypass_available = mode == PermissionMode::BypassPermissions;
        permission.mode = mode;
        Ok(())
    }
}

/// `--settings` values as every settings reader should take them: inline JSON as given, a
/// file named relative to where the command runs (the process's directory, else
/// `fallback`), with `~` expanded, so that permissions and hooks read the same file.
pub fn resolve_flag_settings(args: &[String], fallback: &Path) -> Vec<String> {
    let invoked_in = std::env::current_dir().unwrap_or_else(|_| fallback.to_path_buf());
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    args.iter()
        .map(|arg| {
            if tool_core::is_inline_json(arg) {
                arg.clone()
            } else {
                expand_path(arg, &invoked_in, home.as_deref())
                    .display()
                    .to_string()
            }
        })
        .collect()
}

/// Keeps only what restricts in an untrusted project file: `permissions.deny`,
/// `permissions.ask`, `permissions.disableBypassPermissionsMode: "disable"` and
/// `deniedMcpServers`; returns whether anything that grants was dropped (an `env` counts).
fn restrict_to_deny_and_ask(value: &mut Value) -> Vec<String> {
    let mut kept = serde_json::Map::new();
    let mut dropped = Vec::new();
    let set = |v: &Value| {
        !v.is_null()
            && v.as_array().is_none_or(|a| !a.is_empty())
            && v.as_object().is_none_or(|o| !o.is_empty())
    };
    if let Some(perms) = value.get("permissions").and_then(Value::as_object) {
        for (key, v) in perms {
            let restricts = key == "deny"
                || key == "ask"
                || (key == "disableBypassPermissionsMode" && v.as_str() == Some("disable"));
            if restricts {
                kept.insert(key.clone(), v.clone());
            } else if set(v) {
                dropped.push(if key == "allow" {
                    "allow rules".to_owned()
                } else {
                    key.clone()
                });
            }
        }
    }
    // The other keys a session reads from a project's files, which it would have applied:
    // its `env` (the binary's settings `env` reads trust itself), a switch that turns off
    // the user's hooks, an allowlist of MCP servers. (Its hooks are the hooks loader's to
    // report; `deniedMcpServers` restricts and is kept.)
    for key in ["env", "disableAllHooks", "allowedMcpServers"] {
        if value.get(key).is_some_and(set) {
            dropped.push(key.to_owned());
        }
    }
    let denied_servers = value.get("deniedMcpServers").cloned();
    *value = serde_json::json!({"permissions": kept});
    if let Some(denied) = denied_servers {
        value["deniedMcpServers"] = denied;
    }
    dropped
}

fn rule_list(perms: &Value, key: &str) -> Vec<Value> {
    perms
        .get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// The keys of a settings file's `permissions` object (Claude Code's; `disableAutoMode` is
/// read by nothing here, there being no auto mode).
const PERMISSIONS_KEYS: &[&str] = &[
    "allow",
    "deny",
    "ask",
    "defaultMode",
    "disableBypassPermissionsMode",
    "disableAutoMode",
    "additionalDirectories",
];

/// Loads the `permissions` sections: rule lists concatenated across levels (each rule keeps
/// its source), `defaultMode` and `disableBypassPermissionsMode` by precedence,
/// `additionalDirectories` concatenated. `allowManagedPermissionRulesOnly` in managed
/// settings keeps only managed rules.
pub fn load_permissions(sources: &SettingsSources) -> LoadedPermissions {
    let (mut files, mut diagnostics) = load_settings_files(sources);
    let mut untrusted_ignored = Vec::new();
    let mut untrusted_ignored_keys = Vec::new();
    if !sources.project_trusted {
        for file in &mut files {
            let from_project = matches!(
                file.source,
                RuleSource::ProjectSettings | RuleSource::LocalSettings
            );
            let Some(path) = file.path.clone().filter(|_| from_project) else {
                continue;
            };
            let dropped = restrict_to_deny_and_ask(&mut file.value);
            if !dropped.is_empty() {
                untrusted_ignored.push(path);
            }
            for key in dropped {
                if !untrusted_ignored_keys.contains(&key) {
                    untrusted_ignored_keys.push(key);
                }
            }
        }
    }
    let managed_only = files.iter().any(|f| {
        f.source == RuleSource::PolicySettings
            && f.value
                .get("allowManagedPermissionRulesOnly")
                .and_then(Value::as_bool)
                == Some(true)
    });
    let mut ctx = ToolPermissionContext::default();
    let mut mode: Option<PermissionMode> = None;
    let mut bypass_disabled = false;
    // The file that disabled it (the first read: the highest precedence), for the warning.
    let mut disabled_by: Option<(RuleSource, Option<PathBuf>)> = None;
    let mut settings_files: Vec<PathBuf> = files.iter().filter_map(|f| f.path.clone()).collect();
    if let Some(dir) = &sources.user_config_dir {
        settings_files.push(dir.join("settings.json"));
    }
    settings_files.extend(crate::engine::user_state_files(
        sources.home.as_deref(),
        sources.user_config_dir.as_deref(),
    ));
    // The managed files are protected before they exist too: a new one would be read by the
    // next session at the highest precedence.
    let mut settings_dirs = Vec::new();
    if let Some(dir) = &sources.managed_dir {
        let (files, drop_ins) = crate::engine::managed_paths(dir);
        settings_files.extend(files);
        settings_dirs.push(drop_ins);
    }
    let roots = PathRoots {
        settings_files,
        settings_dirs,
        cwd: sources.project_dir.clone(),
        home: sources.home.clone(),
        project_root: Some(sources.project_dir.clone()),
        user_config_dir: sources.user_config_dir.clone(),
        flag_settings_dir: files
            .iter()
            .find(|f| f.source == RuleSource::FlagSettings && f.path.is_some())
            .and_then(|f| {
                f.path
                    .as_ref()
                    .and_then(|p| p.parent())
                    .map(Path::to_path_buf)
            }),
    };
    for f in &files {
        let diag = |severity, message: String| SettingsDiagnostic {
            file: f.path.clone(),
            source: f.source,
            severity,
            message,
        };
        // Keys of `permissions` written beside it, or a misspelt `permissions`: their rules
        // would be dropped without a word.
        if let Some(top) = f.value.as_object() {
            for key in top.keys() {
                if PERMISSIONS_KEYS.contains(&key.as_str()) {
                    diagnostics.push(diag(
                        Severity::Warning,
                        format!("`{key}` belongs under `permissions`; ignored here"),
                    ));
                } else if key != "permissions"
                    && (key.eq_ignore_ascii_case("permission")
                        || key.eq_ignore_ascii_case("permissions"))
                {
                    diagnostics.push(diag(
                        Severity::Warning,
                        format!("unknown key `{key}`; ignored (did you mean `permissions`?)"),
                    ));
                }
            }
        }
        let Some(perms) = f.value.get("permissions") else {
            continue;
        };
        if let Some(perms) = perms.as_object() {
            for key in perms.keys() {
                if !PERMISSIONS_KEYS.contains(&key.as_str()) {
                    diagnostics.push(diag(
                        Severity::Warning,
                        format!(
                            "unknown key `permissions.{key}`; ignored (the keys read are {})",
                            PERMISSIONS_KEYS.join(", ")
                        ),
                    ));
                }
            }
        }
        let mut file_ctx = ToolPermissionContext::default();
        let rules_allowed = !managed_only || f.source == RuleSource::PolicySettings;
        for (key, behavior) in [
            ("allow", RuleBehavior::Allow),
            ("deny", RuleBehavior::Deny),
            ("ask", RuleBehavior::Ask),
        ] {
            for v in rule_list(perms, key) {
                let Some(rule) = v.as_str() else {
                    diagnostics.push(diag(
                        Severity::Error,
                        format!("`permissions.{key}` entries must be strings; `{v}` ignored"),
                    ));
                    continue;
                };
                if !rules_allowed {
                    diagnostics.push(diag(
                        Severity::Warning,
                        format!("rule `{rule}` ignored: managed settings allow managed permission rules only"),
                    ));
                    continue;
                }
                // `/x` in a `--settings` file is relative to that file's own directory, and
                // in an inline `--settings` value to the working directory (as on Claude
                // Code's command line); the engine anchors flag rules at the directory of
                // the highest-precedence file (the last `--settings` file given), so the
                // others are made absolute here.
                let own_dir = match &f.path {
                    Some(path) => path.parent(),
                    None => Some(roots.cwd.as_path()),
                };
                let rule = match own_dir {
                    Some(dir)
                        if f.source == RuleSource::FlagSettings
                            && roots.flag_settings_dir.is_some()
                            && roots.flag_settings_dir.as_deref() != Some(dir) =>
                    {
                        match anchored_in(rule, &roots.cwd.join(dir)) {
                            Ok(rule) => rule,
                            Err(why) => {
                                diagnostics.push(diag(Severity::Error, why));
                                continue;
                            }
                        }
                    }
                    _ => rule.to_owned(),
                };
                let sr = SourcedRule {
                    source: f.source,
                    rule,
                };
                match behavior {
                    RuleBehavior::Allow => file_ctx.allow.push(sr),
                    RuleBehavior::Deny => file_ctx.deny.push(sr),
                    RuleBehavior::Ask => file_ctx.ask.push(sr),
                }
            }
            if perms.get(key).is_some_and(|v| !v.is_array()) {
                diagnostics.push(diag(
                    Severity::Error,
                    format!("`permissions.{key}` must be an array; ignored"),
                ));
            }
        }
        let (_, rule_diags) = PermissionEngine::new_lenient(&file_ctx, roots.clone());
        diagnostics.extend(
            rule_diags
                .into_iter()
                .map(|d: RuleDiagnostic| SettingsDiagnostic {
                    file: f.path.clone(),
                    source: f.source,
                    severity: if d.error {
                        Severity::Error
                    } else {
                        Severity::Warning
                    },
                    message: format!("{:?} rule `{}`: {}", d.behavior, d.rule, d.reason)
                        .to_lowercase_first(),
                }),
        );
        ctx.allow.extend(file_ctx.allow);
        ctx.deny.extend(file_ctx.deny);
        ctx.ask.extend(file_ctx.ask);
        if mode.is_none()
            && let Some(m) = perms.get("defaultMode")
        {
            match m.as_str().map(parse_mode) {
                Some(Ok(m)) => mode = Some(m),
                _ => diagnostics.push(diag(
                    Severity::Error,
                    format!("unknown `defaultMode` {m}; ignored"),
                )),
            }
        }
        match perms.get("disableBypassPermissionsMode") {
            None => {}
            Some(v) if v.as_str() == Some("disable") => {
                bypass_disabled = true;
                disabled_by.get_or_insert((f.source, f.path.clone()));
            }
            // Claude Code's schema allows only "disable": a `true` that reads as "disable"
            // but does nothing must not pass unnoticed.
            Some(v) => diagnostics.push(diag(
                Severity::Error,
                format!(
                    "`permissions.disableBypassPermissionsMode` must be \"disable\", got {}; ignored",
                    tool_core::shown_setting(v)
                ),
            )),
        }
        if perms
            .get("additionalDirectories")
            .is_some_and(|v| !v.is_array())
        {
            diagnostics.push(diag(
                Severity::Error,
                "`permissions.additionalDirectories` must be an array; ignored".into(),
            ));
        }
        for d in rule_list(perms, "additionalDirectories") {
            match d.as_str() {
                Some(s) => {
                    let p = expand_path(s, &sources.project_dir, sources.home.as_deref());
                    if !ctx.additional_working_directories.contains(&p) {
                        ctx.additional_working_directories.push(p);
                    }
                }
                None => diagnostics.push(diag(
                    Severity::Error,
                    "`additionalDirectories` entries must be strings".into(),
                )),
            }
        }
    }
    let mut mode = mode.unwrap_or_default();
    if mode == PermissionMode::BypassPermissions && bypass_disabled {
        // Reported where the disabling comes from (`disableBypassPermissionsMode`).
        let (source, file) = disabled_by.unwrap_or((RuleSource::PolicySettings, None));
        diagnostics.push(SettingsDiagnostic {
            file,
            source,
            severity: Severity::Warning,
            message: "`disableBypassPermissionsMode: \"disable\"` here turns bypassPermissions off; using default mode".into(),
        });
        mode = PermissionMode::Default;
    }
    ctx.mode = mode;
    ctx.bypass_available = mode == PermissionMode::BypassPermissions && !bypass_disabled;
    ctx.managed_rules_only = managed_only;
    LoadedPermissions {
        context: ctx,
        roots,
        files,
        diagnostics,
        untrusted_ignored,
        untrusted_ignored_keys,
        bypass_disabled,
    }
}

trait LowerFirst {
    fn to_lowercase_first(self) -> String;
}

impl LowerFirst for String {
    fn to_lowercase_first(self) -> String {
        let mut c = self.chars();
        match c.next() {
            Some(f) => f.to_lowercase().chain(c).collect(),
            None => self,
        }
    }
}

/// Parses a mode name as settings and the CLI write it (`default`, `acceptEdits`, `plan`,
/// `dontAsk`, `bypassPermissions`, `auto`; `manual` is an alias of `default`).
pub fn parse_mode(name: &str) -> Result<PermissionMode, String> {
    Ok(match name {
        "default" | "manual" => PermissionMode::Default,
        "acceptEdits" => PermissionMode::AcceptEdits,
        "plan" => PermissionMode::Plan,
        "dontAsk" => PermissionMode::DontAsk,
        "bypassPermissions" => PermissionMode::BypassPermissions,
        "auto" => PermissionMode::Auto,
        other => {
            return Err(format!(
                "unknown permission mode `{other}` (expected default or its alias manual, acceptEdits, plan, dontAsk, bypassPermissions or auto)"
            ));
        }
    })
}

/// A path rule whose pattern is relative to its settings file (`Read(/secret.txt)`) made
/// absolute against `dir` (`Read(//dir/secret.txt)`); other rules unchanged.
/// A rule whose directory is not UTF-8 cannot be written so (a rule is text): an error
/// rather than a rule that would match nothing.
fn anchored_in(rule: &str, dir: &Path) -> Result<String, String> {
    let parsed = crate::rule::parse_rule_lenient(rule);
    match parsed.content.as_deref().map(str::trim) {
        Some(pattern)
            if pattern.starts_with('/')
                && !pattern.starts_with("//")
                // Only Read and Edit rules are path patterns (the engine's anchoring).
                && matches!(parsed.tool_name.as_str(), "Read" | "Edit") =>
        {
            let Some(dir_text) = dir.to_str() else {
                return Err(format!(
                    "rule `{rule}` cannot be used: it is relative to {}, whose name is not valid UTF-8, and a rule is text",
                    dir.display()
                ));
            };
            // The directory is a literal: its glob characters (`{` `}` too) are escaped.
            let literal = crate::path::escape_glob(dir_text);
            let absolute = format!("/{literal}{pattern}");
            Ok(crate::rule::format_rule(&parsed.tool_name, Some(&absolute)))
        }
        _ => Ok(rule.to_owned()),
    }
}
