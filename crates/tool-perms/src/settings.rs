//! Claude Code's settings files: where they are, their precedence, and the `permissions`
//! section.
//!
//! [`load_settings_files`] and [`merge_settings`] read and merge whole files and know nothing
//! of permissions, so other layers (hooks) can use them for their own sections;
//! [`load_permissions`] builds the [`ToolPermissionContext`] from them.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;
use tool_core::escape_hidden;
use tool_core::{
    PermissionMode, RuleBehavior, RuleSource, SourcedRule, ToolPermissionContext, expand_path,
};

use crate::engine::PermissionEngine;
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
    /// `deny` and `ask` rules and `disableBypassPermissionsMode` (any value: one other than
    /// `"disable"` is read as it) apply, everything
    /// else (allow rules, `additionalDirectories`, `defaultMode`, ...) is ignored and the
    /// files are listed in
    /// [`LoadedPermissions::untrusted_ignored`]. Inline values were given by the user and
    /// always apply. Default: untrusted.
    pub project_trusted: bool,
    /// The names of tools a host adds beside the built-in ones (`WordCount`, a test rig's
    /// `Faulty`): a deny or ask rule naming one is no typo ([`KNOWN_TOOL_NAMES`] holds the
    /// built-in ones).
    pub host_tools: Vec<String>,
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
    /// For inline JSON, what it is called where it was given (`--settings`, `--settings #2`);
    /// `None` for a file, or an inline value named by its source.
    pub origin: Option<String>,
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
    /// For a value without a file, what it is called where it was given (`--settings`,
    /// `--settings #2`, `--rules`); `None` names it by its source (`inline projectSettings
    /// value`).
    pub origin: Option<String>,
    /// The level.
    pub source: RuleSource,
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for SettingsDiagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let file = match (&self.file, &self.origin) {
            (Some(path), _) => path.display().to_string(),
            (None, Some(origin)) => origin.clone(),
            (None, None) => format!("inline {} value", source_name(self.source)),
        };
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        // What the message quotes (a key, a rule, a value) was written by someone else: a
        // zero-width space or a bidirectional control in it is shown as an escape, so that
        // `permissions\u{200b}` does not read as `permissions`.
        write!(
            f,
            "{}: {sev}: {}",
            escape_hidden(&file),
            escape_hidden(&self.message)
        )
    }
}

/// A source as Claude Code spells it (`userSettings`, `projectSettings`, ...).
pub fn source_name(source: RuleSource) -> String {
    serde_json::to_value(source)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{source:?}"))
}

/// Parses the text of a settings file or inline value into its object, with the keys
/// written twice in one object ([`duplicate_keys`]; [`Duplicates::messages`] says them): a
/// leading byte order mark is skipped and blank text (nothing but whitespace) is `{}`. The
/// error says what is wrong: invalid JSON with serde's reason, line and column, or valid
/// JSON that is not an object.
fn parse_settings_text(text: &str) -> Result<(Value, Duplicates), String> {
    let text = tool_core::without_bom(text);
    if text.trim().is_empty() {
        return Ok((Value::Object(serde_json::Map::new()), Duplicates::default()));
    }
    match tool_core::parse_config_json(text) {
        Ok(v @ Value::Object(_)) => Ok((v, duplicate_keys(text))),
        Ok(other) => Err(format!(
            "settings must be a JSON object, not {}",
            kind_of(&other)
        )),
        Err(e) => Err(format!("invalid JSON ({e})")),
    }
}

/// How many keys written twice [`duplicate_keys`] names; the rest are counted.
const DUPLICATES_NAMED: usize = 10;

/// The keys written more than once in one object of a text ([`duplicate_keys`]).
#[derive(Debug, Default)]
struct Duplicates {
    /// The first [`DUPLICATES_NAMED`] by their path (`permissions.deny`,
    /// `hooks.PreToolUse[0].matcher`), in the order they are written.
    named: Vec<String>,
    /// How many more there are.
    more: usize,
}

impl Duplicates {
    /// What is said of them, one message each and one for those not named: in a file a
    /// warning (the last value is read, as `JSON.parse` reads it); in a value given inline on
    /// the command line (`inline`) an error, that value having been written for this
    /// command: the rules under the first would be lost, failing open.
    fn messages(&self, inline: bool) -> Vec<String> {
        let mut said: Vec<String> = self
            .named
            .iter()
            .map(|key| duplicate_key_message(key, inline))
            .collect();
        if self.more > 0 {
            said.push(format!(
                "and {} more keys written twice (only the first {DUPLICATES_NAMED} are named); {}",
                self.more,
                if inline {
                    "a value given on the command line must write each key once"
                } else {
                    "of each only its last value is read (as Claude Code's JSON.parse reads it)"
                }
            ));
        }
        said
    }
}

/// What is said of a key written twice: in a file a warning (the last value is read, as
/// `JSON.parse` reads it); in a value given inline on the command line (`inline`) an error,
/// that value having been written for this command: the rules under the first would be
/// lost, failing open.
fn duplicate_key_message(key: &str, inline: bool) -> String {
    if inline {
        format!(
            "duplicate key `{key}`: a value given on the command line must write each key once (only the last would be read, as Claude Code's JSON.parse reads it)"
        )
    } else {
        format!(
            "duplicate key `{key}`: only its last value is read (as Claude Code's JSON.parse reads it)"
        )
    }
}

/// The keys written more than once in one object of `text`, JSON that parsed, each once per
/// object: the first [`DUPLICATES_NAMED`] by their path (`permissions.deny`,
/// `hooks.PreToolUse[0].matcher`), the others counted. `JSON.parse` and serde_json keep the
/// last value, so the rules under the first are lost without a word. This is no second
/// parser: it only follows strings, brackets and commas of text already known to be JSON.
/// A key's escapes are read as JSON reads them (`"\u0061"` is `a`). It takes time linear in
/// the text (a repository's settings file may be large): each object's keys are in a set
/// while it is open, and a path is built only for a duplicate named, from the open
/// containers (each knows where its key is in the text, or its index).
fn duplicate_keys(text: &str) -> Duplicates {
    use std::collections::{HashMap, HashSet};
    /// Where an open container is in its parent: after a key (its place in the text, quotes
    /// included) or at an index.
    #[derive(Clone, Copy)]
    enum Place {
        Top,
        Key(usize, usize),
        Index(usize),
    }
    /// An open object (its keys so far, each with whether it was found written twice;
    /// whether a key comes next; the last key's place) or array (the current index).
    enum Open {
        Object {
            keys: HashMap<String, bool>,
            key_next: bool,
            last: (usize, usize),
        },
        Array {
            index: usize,
        },
    }
    let key_at = |(start, end): (usize, usize)| -> String {
        let raw = text.get(start..end).unwrap_or_default();
        serde_json::from_str::<String>(raw).unwrap_or_else(|_| raw.trim_matches('"').to_owned())
    };
    let bytes = text.as_bytes();
    // Each open container with where it is in its parent.
    let mut stack: Vec<(Place, Open)> = Vec::new();
    let mut found = Duplicates::default();
    let mut named = HashSet::new();
    let mut built = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                let end = (i + 1).min(bytes.len());
                let Some((
                    _,
                    Open::Object {
                        keys,
                        key_next,
                        last,
                    },
                )) = stack.last_mut()
                else {
                    i += 1;
                    continue;
                };
                if *key_next {
                    *key_next = false;
                    *last = (start, end);
                    let key = key_at((start, end));
                    let reported = match keys.get_mut(&key) {
                        None => {
                            keys.insert(key, false);
                            true
                        }
                        Some(reported) => std::mem::replace(reported, true),
                    };
                    if !reported {
                        // Names are built for the first few only (a name repeated is said
                        // once, but still counts: the same long path may repeat).
                        if built < DUPLICATES_NAMED {
                            built += 1;
                            let mut name = String::new();
                            for (place, _) in &stack {
                                match *place {
                                    Place::Top => {}
                                    Place::Key(s, e) => {
                                        if !name.is_empty() {
                                            name.push('.');
                                        }
                                        name.push_str(&key_at((s, e)));
                                    }
                                    Place::Index(n) => name.push_str(&format!("[{n}]")),
                                }
                            }
                            if !name.is_empty() {
                                name.push('.');
                            }
                            name.push_str(&key_at((start, end)));
                            if named.insert(name.clone()) {
                                found.named.push(name);
                            }
                        } else {
                            found.more += 1;
                        }
                    }
                }
            }
            b'{' | b'[' => {
                let place = match stack.last() {
                    None => Place::Top,
                    Some((_, Open::Object { last, .. })) => Place::Key(last.0, last.1),
                    Some((_, Open::Array { index })) => Place::Index(*index),
                };
                let open = if bytes[i] == b'{' {
                    Open::Object {
                        keys: HashMap::new(),
                        key_next: true,
                        last: (0, 0),
                    }
                } else {
                    Open::Array { index: 0 }
                };
                stack.push((place, open));
            }
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some((_, Open::Object { key_next, .. })) => *key_next = true,
                Some((_, Open::Array { index })) => *index += 1,
                None => {}
            },
            _ => {}
        }
        i += 1;
    }
    found
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
    // Read again while it looks caught mid-rewrite (blank, or cut short) by a program that
    // saves it in place: such a read would drop its deny rules for the whole session.
    let text = match tool_core::read_config_text_settled(path) {
        Ok((t, repaired)) => {
            if repaired {
                diags.push(SettingsDiagnostic {
                    file: Some(path.to_path_buf()),
                    origin: None,
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
                origin: None,
                source,
                severity: Severity::Error,
                message: format!("cannot read the settings file: {e}"),
            });
            return None;
        }
    };
    match parse_settings_text(&text) {
        Ok((v, duplicates)) => {
            diags.extend(duplicates.messages(false).into_iter().map(|message| {
                SettingsDiagnostic {
                    file: Some(path.to_path_buf()),
                    origin: None,
                    source,
                    severity: Severity::Warning,
                    message,
                }
            }));
            Some(v)
        }
        Err(problem) => {
            diags.push(SettingsDiagnostic {
                file: Some(path.to_path_buf()),
                origin: None,
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
/// file is `{}`; unreadable or invalid files are reported and skipped; an `env` entry no
/// environment can hold is reported (a warning: it is not set). A file that reads as blank
/// or as no valid JSON is read again for a moment first
/// ([`tool_core::read_config_text_settled`]): one caught in the middle of an in-place
/// rewrite is read once written, not taken as `{}` or skipped.
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
                origin: None,
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
    // An inline value is named by its flag, and by its place among the `--settings` given
    // when there are several inline ones.
    let inline_count = sources
        .flag_settings
        .iter()
        .filter(|f| tool_core::is_inline_json(f))
        .count();
    // The last `--settings` given wins: it comes first here.
    for (i, flag) in sources.flag_settings.iter().enumerate().rev() {
        if tool_core::is_inline_json(flag) {
            let origin = if inline_count > 1 {
                format!("--settings #{}", i + 1)
            } else {
                "--settings".to_owned()
            };
            let diag = |severity, message| SettingsDiagnostic {
                file: None,
                origin: Some(origin.clone()),
                source: RuleSource::FlagSettings,
                severity,
                message,
            };
            match parse_settings_text(flag) {
                Ok((value, duplicates)) => {
                    diags.extend(
                        duplicates
                            .messages(true)
                            .into_iter()
                            .map(|message| diag(Severity::Error, message)),
                    );
                    files.push(SettingsFile {
                        source: RuleSource::FlagSettings,
                        path: None,
                        origin: Some(origin.clone()),
                        value,
                    });
                }
                Err(problem) => diags.push(diag(
                    Severity::Error,
                    format!("the inline value is not valid: {problem}"),
                )),
            }
        } else if flag.trim().is_empty() {
            // Read as a name, it would be the directory the command runs in.
            diags.push(SettingsDiagnostic {
                file: None,
                origin: Some("--settings".into()),
                source: RuleSource::FlagSettings,
                severity: Severity::Error,
                message: "the file name is blank: give a settings file, or '{}' for none".into(),
            });
        } else {
            let path = flag_file_path(flag, &sources.project_dir, sources.home.as_deref());
            add(RuleSource::FlagSettings, path, true, &mut files, &mut diags);
        }
    }
    for (source, value) in &sources.inline {
        if value.is_object() {
            files.push(SettingsFile {
                source: *source,
                path: None,
                origin: None,
                value: value.clone(),
            });
        } else {
            diags.push(SettingsDiagnostic {
                file: None,
                origin: None,
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
            origin: None,
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
    let project = claude.join("settings.json");
    let user = sources
        .user_config_dir
        .as_ref()
        .map(|dir| dir.join("settings.json"));
    // With the project directory at the home directory (or the config directory in the
    // project), the project's file is the user's own: read once, as the user's (it is no
    // repository's to be trusted or not).
    let same_file = |a: &Path, b: &Path| match (std::fs::canonicalize(a), std::fs::canonicalize(b))
    {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if !user
        .as_deref()
        .is_some_and(|user| same_file(&project, user))
    {
        add(
            RuleSource::ProjectSettings,
            project,
            false,
            &mut files,
            &mut diags,
        );
    }
    if let Some(user) = user {
        add(
            RuleSource::UserSettings,
            user,
            false,
            &mut files,
            &mut diags,
        );
    }
    for file in &mut files {
        drop_mistyped_sections(file, &mut diags);
        report_env_entries_not_set(file, &mut diags);
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
            origin: None,
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
            origin: file.origin.clone(),
            source: file.source,
            severity: Severity::Error,
            message: format!("`{key}` must be an object, not {kind}; the section is left out"),
        });
        object.remove(key);
    }
}

/// Warns of each `env` entry no environment can hold, which is therefore not set: a name
/// that is empty or holds `=` or a NUL byte, a value that holds a NUL byte (the binary
/// leaves these out when it sets the settings' `env`).
fn report_env_entries_not_set(file: &SettingsFile, diags: &mut Vec<SettingsDiagnostic>) {
    let Some(env) = file.value.get("env").and_then(Value::as_object) else {
        return;
    };
    for (key, value) in env {
        let why = if key.is_empty() {
            "a variable's name cannot be empty"
        } else if key.contains('=') {
            "a variable's name cannot hold `=`"
        } else if key.contains('\0') {
            "a variable's name cannot hold a NUL byte"
        } else if value.as_str().is_some_and(|v| v.contains('\0')) {
            "its value holds a NUL byte, which no environment variable can hold"
        } else {
            continue;
        };
        diags.push(SettingsDiagnostic {
            file: file.path.clone(),
            origin: file.origin.clone(),
            source: file.source,
            severity: Severity::Warning,
            message: format!("`env.{key}` is not set: {why}"),
        });
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
    /// `disableBypassPermissionsMode` was set (to `"disable"`, or to a value of the wrong
    /// type, which is read as `"disable"` and reported): bypassPermissions may not be
    /// entered, not even from a command-line flag.
    pub bypass_disabled: bool,
    /// The rules (with their source, as written in the context) whose problems
    /// [`diagnostics`](Self::diagnostics) already say: a host that builds an engine over
    /// [`context`](Self::context) finds the same problems again, and looks each one up here
    /// (in constant time: a repository's file may hold tens of thousands of rules) to say it
    /// once.
    pub rules_reported: HashSet<(RuleSource, String)>,
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

    /// The errors in what the command line gave (`--settings` files or JSON, inline
    /// values such as the CLI's rules), which are bad input rather than problems of the
    /// ambient settings files.
    pub fn command_line_errors(&self) -> Vec<String> {
        self.diagnostics
            .iter()
            .filter(|d| {
                d.severity == Severity::Error
                    && (d.source == RuleSource::FlagSettings || d.file.is_none())
            })
            // These stop the command: what a settings file's error says of itself ("…; file
            // ignored") is not what happens to it here.
            .map(|d| {
                SettingsDiagnostic {
                    message: without_consequence(&d.message),
                    ..d.clone()
                }
                .to_string()
            })
            .collect()
    }

    /// The diagnostics to show for a session started with the `--mode` flag `mode` (`None`:
    /// none given): all of them, except that under a flag the warning that the settings'
    /// `defaultMode` of bypassPermissions was turned off is left out, the mode being the
    /// flag's.
    pub fn diagnostics_under_mode(
        &self,
        mode: Option<PermissionMode>,
    ) -> impl Iterator<Item = &SettingsDiagnostic> {
        self.diagnostics
            .iter()
            .filter(move |d| mode.is_none() || d.message != BYPASS_OFF)
    }

    /// Applies a `--mode` flag to `permission` (loaded from these settings):
    /// `bypassPermissions` is refused when the settings disable it
    /// (`disableBypassPermissionsMode: "disable"` wins, as in Claude Code; so does a value of
    /// the wrong type, read as `"disable"`), naming the file that disables it. The flag takes
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
            // The file that disables it, the highest in precedence, with the value it
            // holds (one of the wrong type is read as "disable").
            let found = self.files.iter().find_map(|f| {
                f.value
                    .pointer("/permissions/disableBypassPermissionsMode")
                    .map(|v| (f, v))
            });
            let value = match found {
                Some((_, v)) if v.as_str() != Some("disable") => {
                    format!("{}`, read as `\"disable\"", tool_core::shown_setting(v))
                }
                _ => "\"disable\"".to_owned(),
            };
            let by = found
                .map(|(f, _)| match (&f.path, &f.origin) {
                    (Some(path), _) => path.display().to_string(),
                    (None, Some(origin)) => origin.clone(),
                    (None, None) => format!("the inline {} value", source_name(f.source)),
                })
                .map(|file| format!(" in {}", escape_hidden(&file)))
                .unwrap_or_default();
            return Err(format!(
                "--mode bypassPermissions: bypass is disabled by settings (`permissions.disableBypassPermissionsMode: {value}`{by})"
            ));
        }
        permission.bypass_available = mode == PermissionMode::BypassPermissions;
        permission.mode = mode;
        Ok(())
    }
}

/// A problem's words without the consequence a loader that goes on gives it at its end (`…;
/// file ignored`, `…; ignored`, `…; group skipped`, `…; the section is left out`, a
/// `disableBypassPermissionsMode` of the wrong type `…; read as "disable" …`, a `deny` or
/// `ask` written as one string `…; read as a list of its one rule …`, a restricting switch
/// of the wrong type `…; read as true …`), for where the
/// problem stops the command instead; a value named as ignored (`…; \`3\` ignored`) is kept
/// (`…, not \`3\``). Other words are returned as they are.
pub fn without_consequence(message: &str) -> String {
    let Some((said, tail)) = message.rsplit_once("; ") else {
        return message.to_owned();
    };
    if [BYPASS_WRONG_TYPE, LONE_RULE, SWITCH_WRONG_TYPE].contains(&tail) {
        return said.to_owned();
    }
    if let Some(value) = tail
        .strip_suffix(" ignored")
        .filter(|v| v.len() > 1 && v.starts_with('`') && v.ends_with('`'))
    {
        return format!("{said}, not {value}");
    }
    let consequence = ["ignored", "skipped", "left out"]
        .iter()
        .any(|end| tail.ends_with(end))
        && tail.split_whitespace().count() <= 5
        && !tail.contains('`');
    if consequence {
        said.to_owned()
    } else {
        message.to_owned()
    }
}

/// `--settings` values as every settings reader should take them: inline JSON as given, a
/// file named relative to where the command runs (the process's directory, else
/// `fallback`), with `~` expanded, so that permissions and hooks read the same file. A name
/// is taken as written (` s.json` is not `s.json`: `flag_file_path`); a blank one is kept
/// as it is, for the loader to refuse.
pub fn resolve_flag_settings(args: &[String], fallback: &Path) -> Vec<String> {
    let invoked_in = std::env::current_dir().unwrap_or_else(|_| fallback.to_path_buf());
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    args.iter()
        .map(|arg| {
            if tool_core::is_inline_json(arg) || arg.trim().is_empty() {
                arg.clone()
            } else {
                flag_file_path(arg, &invoked_in, home.as_deref())
                    .display()
                    .to_string()
            }
        })
        .collect()
}

/// A file name given on the command line, as written: relative to `cwd`, `~` or a leading
/// `~/` for the home directory, `.` and `..` taken lexically; its spaces are part of the name
/// (what [`expand_path`] trims is a model's, not a person's).
fn flag_file_path(name: &str, cwd: &Path, home: Option<&Path>) -> PathBuf {
    let path = match (name, home) {
        ("~", Some(home)) => home.to_path_buf(),
        (_, Some(home)) if name.starts_with("~/") => home.join(name[2..].trim_start_matches('/')),
        _ => PathBuf::from(name),
    };
    tool_core::normalize_lexically(&cwd.join(path))
}

/// Reads the CLI's `--rules` value (`permissions check --rules`): the keys of a settings
/// file's `permissions` (`{"allow":[..],"deny":[..]}`) or a whole `{"permissions":{..}}`,
/// read as settings text is (a byte order mark skipped, a number out of range read as the
/// largest one). Returns the settings value to load as an inline project value
/// (`{"permissions":{..}}`, whose keys the loader checks: an unknown one is an error there),
/// or the errors, each a line naming `--rules`: blank text, invalid JSON, not an object, a
/// key written twice (the rules under the first would be lost), and in the
/// `{"permissions":..}` form another top-level key (`--rules` reads `permissions` only). A
/// value given for this command that lost a rule would fail open, so none is a warning.
pub fn parse_rules_flag(text: &str) -> Result<Value, Vec<String>> {
    let error = |message: String| {
        SettingsDiagnostic {
            file: None,
            origin: Some("--rules".into()),
            source: RuleSource::ProjectSettings,
            severity: Severity::Error,
            message,
        }
        .to_string()
    };
    let text = tool_core::without_bom(text);
    if text.trim().is_empty() {
        return Err(vec![error(
            "the value is blank (give '{}' for no rules)".into(),
        )]);
    }
    let value = tool_core::parse_config_json(text)
        .map_err(|e| vec![format!("--rules is not valid JSON: {e}")])?;
    if !value.is_object() {
        return Err(vec![format!(
            "--rules must be a JSON object like {{\"allow\":[...],\"deny\":[...]}}, not {}",
            kind_of(&value)
        )]);
    }
    let duplicates = duplicate_keys(text);
    let mut errors: Vec<String> = duplicates.messages(true).into_iter().map(error).collect();
    let whole = value.get("permissions").is_some();
    if let (true, Some(top)) = (whole, value.as_object()) {
        for key in top.keys() {
            // What the loader reports itself: a key of `permissions` beside it, a misspelt
            // `permissions`.
            if key == "permissions"
                || PERMISSIONS_KEYS.contains(&key.as_str())
                || near_miss_of_restricting_key(key) == Some("permissions")
            {
                continue;
            }
            errors.push(error(format!(
                "unknown key `{key}`: --rules reads only `permissions` (or its keys at the top: {})",
                PERMISSIONS_KEYS.join(", ")
            )));
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(if whole {
        value
    } else {
        serde_json::json!({ "permissions": value })
    })
}

/// The `permissions` keys that grant: what an untrusted project's files may not set.
const GRANTING_KEYS: &[&str] = &["allow", "defaultMode", "additionalDirectories"];

/// Keeps only what may restrict in an untrusted project file: `permissions` without its
/// grants (`allow`, `defaultMode`, `additionalDirectories`), and `deniedMcpServers`; returns
/// what was set that grants (`allow rules`, the other `permissions` keys and the top-level
/// keys by name; an `env` counts). What grants nothing is not listed: a `deny` in the wrong
/// place, an unknown key or a `disableBypassPermissionsMode` that is not `"disable"` is the
/// loader's to report, trusted or not.
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
            if !GRANTING_KEYS.contains(&key.as_str()) {
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

/// The keys of a settings file's `permissions` object (Claude Code's; `disableAutoMode`,
/// which Claude Code also reads at the top level, is read by nothing here, there being no
/// auto mode).
const PERMISSIONS_KEYS: &[&str] = &[
    "allow",
    "deny",
    "ask",
    "defaultMode",
    "disableBypassPermissionsMode",
    "disableAutoMode",
    "additionalDirectories",
    "blockReadsOutsideWorkingDirectories",
    "blockWritesOutsideWorkingDirectories",
    "denyInsteadOfPrompting",
];

/// Claude Code's `permissions` switches that restrict (its 2.1.257 and later): each is on
/// when any level sets it, so that a repository cannot turn off what the user or an
/// administrator turned on.
const RESTRICTING_SWITCHES: &[&str] = &[
    "blockReadsOutsideWorkingDirectories",
    "blockWritesOutsideWorkingDirectories",
    "denyInsteadOfPrompting",
];

/// The top-level keys whose loss fails open, whose near misses ([`near_miss_of_restricting_key`])
/// are reported: the deny and ask rules (`permissions`); the hooks, whose PreToolUse guards
/// block calls, and the switch and allowlists that govern them (`disableAllHooks`, since a
/// hook may also allow a call; `allowedHttpHookUrls`, `httpHookAllowedEnvVars`: without
/// them every URL and variable is allowed); the MCP servers' allow and deny lists
/// (`allowedMcpServers`, `deniedMcpServers`, `disabledMcpjsonServers`); the `env` every
/// command runs with (a `PATH`, a variable that turns tools off); and the keys read from
/// managed settings only ([`MANAGED_ONLY_KEYS`]), each a restriction. Others (`model`,
/// `statusLine`, ...) change no decision: an unknown key near them stays accepted.
const RESTRICTING_KEYS: &[&str] = &[
    "permissions",
    "hooks",
    "env",
    "disableAllHooks",
    "allowedHttpHookUrls",
    "httpHookAllowedEnvVars",
    "allowedMcpServers",
    "deniedMcpServers",
    "disabledMcpjsonServers",
    "allowManagedPermissionRulesOnly",
    "allowManagedHooksOnly",
    "allowManagedMcpServersOnly",
    "managedMcpServers",
];

/// Claude Code's top-level keys near a key of [`RESTRICTING_KEYS`] that are keys in their own
/// right, never taken for a misspelling.
const KEYS_NOT_MISSPELT: &[&str] = &["enabledMcpjsonServers", "enableAllProjectMcpServers"];

/// The key of [`RESTRICTING_KEYS`] that `key`, not itself a settings key, is a near miss of:
/// the same but for case or surrounding whitespace (`PERMISSIONS`, `"env "`), or at most two
/// edits away (one for a key of four letters or fewer: `evn`, `hoks`, `permisions`).
fn near_miss_of_restricting_key(key: &str) -> Option<&'static str> {
    if RESTRICTING_KEYS.contains(&key) || KEYS_NOT_MISSPELT.contains(&key) {
        return None;
    }
    let given = key.trim().to_lowercase();
    RESTRICTING_KEYS.iter().copied().find(|meant| {
        let meant_lower = meant.to_lowercase();
        let most = if meant.len() <= 4 { 1 } else { 2 };
        given == meant_lower || edit_distance_within(&given, &meant_lower, most)
    })
}

/// Whether `a` becomes `b` in at most `most` insertions, deletions or substitutions of a
/// character or swaps of two neighbours (`evn` is one edit from `env`: the optimal string
/// alignment distance). Texts whose lengths differ by more than `most` are not compared at
/// all, so a long key costs no more than a short one. (Grep's suggestions for a misspelt
/// `type` use it too.)
pub fn edit_distance_within(a: &str, b: &str, most: usize) -> bool {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > most {
        return false;
    }
    // Rows of the distance table: the one before the previous, the previous, the current.
    let mut before: Vec<usize> = Vec::new();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for i in 0..a.len() {
        let mut current = vec![i + 1; b.len() + 1];
        for j in 0..b.len() {
            let substitution = previous[j] + usize::from(a[i] != b[j]);
            let mut best = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
            if i > 0 && j > 0 && a[i] == b[j - 1] && a[i - 1] == b[j] {
                best = best.min(before[j - 1] + 1);
            }
            current[j + 1] = best;
        }
        before = std::mem::replace(&mut previous, current);
    }
    previous[b.len()] <= most
}

/// The top-level keys read from managed settings only: `allowManagedPermissionRulesOnly`
/// (here), `allowManagedHooksOnly` (the hooks layer), `allowManagedMcpServersOnly` and
/// `managedMcpServers` (the MCP policy). Anywhere else they do nothing.
const MANAGED_ONLY_KEYS: &[&str] = &[
    "allowManagedPermissionRulesOnly",
    "allowManagedHooksOnly",
    "allowManagedMcpServersOnly",
    "managedMcpServers",
];

/// The warning that a `defaultMode` of bypassPermissions was turned off: about the
/// settings' own mode, so not said under a `--mode` flag
/// ([`LoadedPermissions::diagnostics_under_mode`]).
const BYPASS_OFF: &str = "`disableBypassPermissionsMode: \"disable\"` here turns bypassPermissions off; using default mode";

/// What becomes of a `disableBypassPermissionsMode` that is not `"disable"`: the end of its
/// error, which [`without_consequence`] leaves out where the value stops the command.
const BYPASS_WRONG_TYPE: &str = "read as \"disable\" (a restriction of the wrong type never fails open): bypassPermissions is off";

/// What becomes of a restricting switch ([`RESTRICTING_SWITCHES`]) that is not a boolean:
/// the end of its error, which [`without_consequence`] leaves out where the value stops the
/// command.
const SWITCH_WRONG_TYPE: &str = "read as true (a restriction of the wrong type never fails open)";

/// What becomes of a `deny` or `ask` list written as one string: the end of its error, which
/// [`without_consequence`] leaves out where the value stops the command.
const LONE_RULE: &str =
    "read as a list of its one rule (a restriction of the wrong type never fails open)";

/// Loads the `permissions` sections: rule lists concatenated across levels (each rule keeps
/// its source; a `deny` or `ask` written as one string, an error, is read as a list of that
/// rule), `defaultMode` by precedence, `blockReadsOutsideWorkingDirectories`,
/// `blockWritesOutsideWorkingDirectories` and `denyInsteadOfPrompting` on when any level
/// turns them on (an untrusted project's files too; a value that is not a boolean is an
/// error and read as true), the last also setting `avoid_prompts`, `disableBypassPermissionsMode` from any level
/// (a value other than `"disable"` is an error and read as `"disable"`: a restriction of the
/// wrong type never fails open),
/// `additionalDirectories` concatenated. `allowManagedPermissionRulesOnly` in managed
/// settings keeps only managed rules (a value there that is not a boolean, an error, drops
/// only the other levels' allow rules, stricter than either reading, and no rule is added
/// during the session; the key anywhere else is reported and ignored). An untrusted project's
/// own files are checked as a trusted one's (the same warnings and errors), and only their
/// grants are left out.
pub fn load_permissions(sources: &SettingsSources) -> LoadedPermissions {
    let (mut files, mut diagnostics) = load_settings_files(sources);
    // A project file whose grants do not apply (the project is not trusted).
    let untrusted = |f: &SettingsFile| {
        !sources.project_trusted
            && f.path.is_some()
            && matches!(
                f.source,
                RuleSource::ProjectSettings | RuleSource::LocalSettings
            )
    };
    let managed_switch = |pick: fn(&Value) -> bool| {
        files.iter().any(|f| {
            f.source == RuleSource::PolicySettings
                && f.value
                    .get("allowManagedPermissionRulesOnly")
                    .is_some_and(pick)
        })
    };
    let managed_only = managed_switch(|v| v.as_bool() == Some(true));
    // A switch that is not a boolean, true or false meant: stricter than either reading, the
    // other levels' allow rules are dropped and their deny and ask rules kept.
    let managed_allows_only = managed_switch(|v| !v.is_null() && !v.is_boolean());
    let mut ctx = ToolPermissionContext::default();
    let mut mode: Option<PermissionMode> = None;
    let mut bypass_disabled = false;
    // The file that disabled it (the first read: the highest precedence), for the warning.
    let mut disabled_by: Option<(RuleSource, Option<PathBuf>)> = None;
    let mut rules_reported = HashSet::new();
    // The restricting switches some level turned on ([`RESTRICTING_SWITCHES`]).
    let mut switches_on: HashSet<&str> = HashSet::new();
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
            origin: f.origin.clone(),
            source: f.source,
            severity,
            message,
        };
        // Whether its grants apply; a file whose grants do not is still checked in full.
        let grants = !untrusted(f);
        // A key that does nothing where it is written is a warning in a file (it may be
        // shared with a Claude Code that reads newer keys) and an error in a value given
        // inline on the command line, which was written for this command: running without
        // the rule meant would fail open.
        let (unknown, ignored) = if f.path.is_none() {
            (Severity::Error, "")
        } else {
            (Severity::Warning, "; ignored")
        };
        // Keys of `permissions` written beside it, or a misspelt key whose loss fails open
        // (`permisions`, `Hooks`, `env `): what is under them would be dropped without a
        // word.
        if let Some(top) = f.value.as_object() {
            for key in top.keys() {
                // Claude Code's `Settings` has `disableAutoMode` at the top level as well as
                // under `permissions` (its documentation puts it there): in its place at both.
                if key == "disableAutoMode" {
                    continue;
                }
                if PERMISSIONS_KEYS.contains(&key.as_str()) {
                    diagnostics.push(diag(
                        unknown,
                        format!("`{key}` belongs under `permissions`{ignored} here"),
                    ));
                } else if let Some(meant) = near_miss_of_restricting_key(key) {
                    diagnostics.push(diag(
                        unknown,
                        format!("unknown key `{key}`{ignored} (did you mean `{meant}`?)"),
                    ));
                }
            }
        }
        match f.value.get("allowManagedPermissionRulesOnly") {
            None | Some(Value::Null) => {}
            Some(Value::Bool(_)) if f.source == RuleSource::PolicySettings => {}
            Some(other) if f.source == RuleSource::PolicySettings => diagnostics.push(diag(
                Severity::Error,
                format!(
                    "`allowManagedPermissionRulesOnly` must be true or false, got {}; until it is, the other levels' allow rules are dropped and their deny and ask rules kept (stricter than either), and no rule is added during the session",
                    tool_core::shown_setting(other)
                ),
            )),
            Some(_) if f.path.is_some() => diagnostics.push(diag(
                Severity::Warning,
                "`allowManagedPermissionRulesOnly` is read from managed settings only; ignored"
                    .into(),
            )),
            Some(_) => {}
        }
        // In a value given inline every key read from managed settings only is an error, as
        // an unknown key there is: the restriction meant would not be (the hooks and MCP
        // layers report the others' keys in files, where they stay warnings).
        if f.path.is_none() && f.source != RuleSource::PolicySettings {
            for key in MANAGED_ONLY_KEYS {
                if f.value.get(key).is_some_and(|v| !v.is_null()) {
                    diagnostics.push(diag(
                        Severity::Error,
                        format!(
                            "`{key}` is read from managed settings only: it does nothing in a value given on the command line"
                        ),
                    ));
                }
            }
        }
        // Settings of Claude Code's that would confine or restrict, which nothing here
        // reads: said, so that nobody counts on them (an error in an inline value, whose
        // restriction was meant for this command).
        if f.value.pointer("/sandbox/enabled") == Some(&Value::Bool(true)) {
            diagnostics.push(diag(
                unknown,
                "`sandbox.enabled` is true, but Toolwright has no sandbox: `sandbox` is not read, so it does not confine commands (Bash runs them with the permissions the rules give)"
                    .into(),
            ));
        }
        for key in ["availableModels", "deniedModels"] {
            if f.value.get(key).is_some_and(|v| !v.is_null()) {
                diagnostics.push(diag(
                    unknown,
                    format!(
                        "`{key}` is not read: Toolwright does not restrict which model `agent` (or its Agent tool) uses"
                    ),
                ));
            }
        }
        let Some(perms) = f.value.get("permissions") else {
            continue;
        };
        if let Some(perms) = perms.as_object() {
            for key in perms.keys() {
                if !PERMISSIONS_KEYS.contains(&key.as_str()) {
                    diagnostics.push(diag(
                        unknown,
                        format!(
                            "unknown key `permissions.{key}`{ignored} (the keys read are {})",
                            PERMISSIONS_KEYS.join(", ")
                        ),
                    ));
                }
            }
        }
        let mut file_ctx = ToolPermissionContext::default();
        let managed = f.source == RuleSource::PolicySettings;
        for (key, behavior) in [
            ("allow", RuleBehavior::Allow),
            ("deny", RuleBehavior::Deny),
            ("ask", RuleBehavior::Ask),
        ] {
            // A deny or ask list written as one string is that one rule: a restriction of
            // the wrong type never fails open (an allow list so written grants nothing).
            let lone =
                behavior != RuleBehavior::Allow && perms.get(key).is_some_and(Value::is_string);
            let rules = match perms.get(key) {
                Some(one) if lone => vec![one.clone()],
                _ => rule_list(perms, key),
            };
            for v in rules {
                let Some(rule) = v.as_str() else {
                    diagnostics.push(diag(
                        Severity::Error,
                        format!("`permissions.{key}` entries must be strings; `{v}` ignored"),
                    ));
                    continue;
                };
                if !managed && managed_only {
                    diagnostics.push(diag(
                        Severity::Warning,
                        format!("rule `{rule}` ignored: managed settings allow managed permission rules only"),
                    ));
                    continue;
                }
                if !managed && managed_allows_only && behavior == RuleBehavior::Allow {
                    diagnostics.push(diag(
                        Severity::Warning,
                        format!("allow rule `{rule}` ignored: managed settings' `allowManagedPermissionRulesOnly` is not a boolean"),
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
                let what = if lone { LONE_RULE } else { "ignored" };
                diagnostics.push(diag(
                    Severity::Error,
                    format!("`permissions.{key}` must be an array; {what}"),
                ));
            }
        }
        // Deny and ask rules naming no tool (`Bsah`, `Wirte(./x)`), as Claude Code warns of
        // them: said here, with the tool meant when one is close.
        let mut unknown_names = HashSet::new();
        let mut name_diags = Vec::new();
        for (behavior, rules) in [
            (RuleBehavior::Deny, &file_ctx.deny),
            (RuleBehavior::Ask, &file_ctx.ask),
        ] {
            for sr in rules {
                if let Some(problem) = unknown_tool_name(&sr.rule, &sources.host_tools) {
                    // In a value given for this command the deny meant would not hold: an
                    // error there, as a misspelt key is.
                    name_diags.push(diag(
                        unknown,
                        format!("{} rule `{}`: {problem}", behavior_name(behavior), sr.rule),
                    ));
                    unknown_names.insert((behavior, sr.rule.clone()));
                }
            }
        }
        let (_, rule_diags) = PermissionEngine::new_lenient(&file_ctx, roots.clone());
        for d in rule_diags {
            // Said here (or by the unknown name): an engine over the merged rules finds it
            // again, and the host leaves it out.
            rules_reported.insert((f.source, d.rule.clone()));
            let named_unknown = unknown_names.contains(&(d.behavior, d.rule.clone()));
            // The engine's "`Tool(param:value)` rules are not supported" of a rule whose tool
            // no tool is: the unknown name says it.
            if named_unknown && !d.error && d.reason.contains("(param:value)") {
                continue;
            }
            // A known tool written with other capitals (`bash(rm:*)`), which the engine
            // warns of: in an inline value a deny or ask rule so written is an error too.
            let miscapitalised = !d.error
                && d.behavior != RuleBehavior::Allow
                && d.reason.contains("tool names are case-sensitive");
            // A deny or ask rule that does nothing (`Bash(command:rm*)`, a path rule on a tool
            // other than Read and Edit, `Write(./x)`, content that names no input field on an
            // MCP tool, `mcp__gh__x(prod)`): in an inline value an error too,
            // unless its tool is the host's own (which may match the content).
            let does_nothing = !d.error
                && d.behavior != RuleBehavior::Allow
                && d.reason.contains(crate::engine::DOES_NOTHING)
                && !crate::rule::parse_rule(&d.rule)
                    .is_ok_and(|p| sources.host_tools.contains(&p.tool_name));
            let severity =
                if d.error || ((miscapitalised || does_nothing) && unknown == Severity::Error) {
                    Severity::Error
                } else {
                    Severity::Warning
                };
            diagnostics.push(SettingsDiagnostic {
                file: f.path.clone(),
                origin: f.origin.clone(),
                source: f.source,
                severity,
                message: format!("{:?} rule `{}`: {}", d.behavior, d.rule, d.reason)
                    .to_lowercase_first(),
            });
        }
        diagnostics.extend(name_diags);
        // The allow rules of an untrusted project's file were checked (above), not applied.
        if grants {
            ctx.allow.extend(file_ctx.allow);
        }
        ctx.deny.extend(file_ctx.deny);
        ctx.ask.extend(file_ctx.ask);
        if let Some(m) = perms.get("defaultMode") {
            match m.as_str().map(parse_mode) {
                Some(Ok(m)) => {
                    if grants && mode.is_none() {
                        mode = Some(m);
                    }
                }
                _ => diagnostics.push(diag(
                    Severity::Error,
                    format!("unknown `defaultMode` {m}; ignored"),
                )),
            }
        }
        if let Some(v) = perms.get("disableBypassPermissionsMode") {
            // Claude Code's schema allows only "disable". Any other value (`true`,
            // `"disabled"`, `null`) was still written to turn bypass off: a restriction of
            // the wrong type never fails open, so it is read as "disable", and said.
            bypass_disabled = true;
            disabled_by.get_or_insert((f.source, f.path.clone()));
            if v.as_str() != Some("disable") {
                diagnostics.push(diag(
                    Severity::Error,
                    format!(
                        "`permissions.disableBypassPermissionsMode` must be \"disable\", got {}; {BYPASS_WRONG_TYPE}",
                        tool_core::shown_setting(v)
                    ),
                ));
            }
        }
        // A restricting switch is on when any level turns it on (an untrusted project's
        // files too: it restricts); a value of the wrong type is read as true.
        for key in RESTRICTING_SWITCHES {
            let on = match perms.get(key) {
                None | Some(Value::Null | Value::Bool(false)) => false,
                Some(Value::Bool(true)) => true,
                Some(other) => {
                    diagnostics.push(diag(
                        Severity::Error,
                        format!(
                            "`permissions.{key}` must be true or false, got {}; {SWITCH_WRONG_TYPE}",
                            tool_core::shown_setting(other)
                        ),
                    ));
                    true
                }
            };
            if on {
                switches_on.insert(*key);
            }
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
                    // One that names no directory adds nothing: said, as `--add-dir` says it
                    // (trusted or not, as every problem of a project's file is).
                    if s.trim().is_empty() {
                        diagnostics.push(diag(
                            Severity::Warning,
                            format!(
                                "`permissions.additionalDirectories` entry {} is empty: it adds nothing a session could use",
                                if s.is_empty() { "\"\"".to_owned() } else { format!("{s:?}") }
                            ),
                        ));
                        continue;
                    }
                    let p = expand_path(s, &sources.project_dir, sources.home.as_deref());
                    if !p.is_dir() {
                        diagnostics.push(diag(Severity::Warning, no_directory_entry(s, &p)));
                    }
                    if grants && !ctx.additional_working_directories.contains(&p) {
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
            origin: None,
            source,
            severity: Severity::Warning,
            message: BYPASS_OFF.into(),
        });
        mode = PermissionMode::Default;
    }
    // What an untrusted project's files set that grants is left out of what the session
    // reads from them (the MCP policy reads these values), and said once.
    let mut untrusted_ignored = Vec::new();
    let mut untrusted_ignored_keys = Vec::new();
    for file in &mut files {
        if !untrusted(&*file) {
            continue;
        }
        let dropped = restrict_to_deny_and_ask(&mut file.value);
        if !dropped.is_empty() {
            untrusted_ignored.extend(file.path.clone());
        }
        for key in dropped {
            if !untrusted_ignored_keys.contains(&key) {
                untrusted_ignored_keys.push(key);
            }
        }
    }
    ctx.mode = mode;
    ctx.bypass_available = mode == PermissionMode::BypassPermissions && !bypass_disabled;
    ctx.managed_rules_only = managed_only || managed_allows_only;
    ctx.block_reads_outside_working_dirs =
        switches_on.contains("blockReadsOutsideWorkingDirectories");
    ctx.block_writes_outside_working_dirs =
        switches_on.contains("blockWritesOutsideWorkingDirectories");
    // Nobody is asked: the hosts that read `avoid_prompts` refuse an ask themselves, and the
    // engine refuses one even where a host turns prompts back on.
    ctx.deny_instead_of_prompting = switches_on.contains("denyInsteadOfPrompting");
    ctx.avoid_prompts |= ctx.deny_instead_of_prompting;
    LoadedPermissions {
        context: ctx,
        roots,
        files,
        diagnostics,
        untrusted_ignored,
        untrusted_ignored_keys,
        bypass_disabled,
        rules_reported,
    }
}

/// The warning for an `additionalDirectories` entry `entry` (read as `path`) that is no
/// directory: what it is instead, where it was read (a relative entry is taken in the
/// project directory), and that a `$VAR` in it is not expanded (as in Claude Code).
fn no_directory_entry(entry: &str, path: &Path) -> String {
    let what = if path.exists() {
        ""
    } else {
        " (it does not exist)"
    };
    let shown = path.display().to_string();
    let read_as = if shown == entry {
        String::new()
    } else {
        format!(" ({shown})")
    };
    let variable = if entry.trim_start().starts_with('$') {
        "; a variable in it is not expanded (nor is it by Claude Code): write the directory itself"
    } else {
        ""
    };
    format!(
        "`permissions.additionalDirectories` entry `{entry}`{read_as} is no directory{what}: it adds nothing a session could use{variable}"
    )
}

/// A rule list's name as messages say it (`deny`, `ask`, `allow`).
fn behavior_name(behavior: RuleBehavior) -> &'static str {
    match behavior {
        RuleBehavior::Allow => "allow",
        RuleBehavior::Deny => "deny",
        RuleBehavior::Ask => "ask",
    }
}

/// The names of the tools a rule may name without a word: the built-in tools of every build
/// of Toolwright (every Cargo profile and runtime gate, the agent's Agent tool, the example
/// WordCount), their old names, and Claude Code's tools (its `BUILTIN_TOOL_NAMES` and those
/// its documentation lists), which a settings file shared with it may name. MCP tools
/// (`mcp__<server>__<tool>`) are not listed: a name with `_` is never checked.
pub const KNOWN_TOOL_NAMES: &[&str] = &[
    "Agent",
    "AgentOutputTool",
    "Artifact",
    "AskUserQuestion",
    "Bash",
    "BashOutput",
    "BashOutputTool",
    "Brief",
    "ClaudeDesign",
    "Config",
    "CronCreate",
    "CronDelete",
    "CronList",
    "Edit",
    "EndConversation",
    "EnterPlanMode",
    "EnterWorktree",
    "ExitPlanMode",
    "ExitWorktree",
    "Glob",
    "Grep",
    "KillShell",
    "LS",
    "LSP",
    "LSTool",
    "ListAgents",
    "ListMcpResourcesTool",
    "MCPSearch",
    "Monitor",
    "MultiEdit",
    "NotebookEdit",
    "NotebookRead",
    "OfferChromeSetup",
    "PowerShell",
    "Projects",
    "ProposeGoal",
    "PushNotification",
    "REPL",
    "Read",
    "ReadMcpResourceDirTool",
    "ReadMcpResourceTool",
    "ReadNotifications",
    "RefreshMcpTools",
    "RemoteTrigger",
    "ReportFindings",
    "ScheduleWakeup",
    "SendFeedback",
    "SendMessage",
    "SendUserFile",
    "SendUserMessage",
    "SetGoal",
    "ShareOnboardingGuide",
    "ShowOnboardingRolePicker",
    "Skill",
    "Sleep",
    "StructuredOutput",
    "SubagentHandback",
    "Task",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskOutput",
    "TaskStop",
    "TaskUpdate",
    "TeamCreate",
    "TeamDelete",
    "TodoWrite",
    "ToolSearch",
    "View",
    "WaitForMcpServers",
    "WebFetch",
    "WebSearch",
    "WordCount",
    "Workflow",
    "Write",
];

/// The known tool ([`KNOWN_TOOL_NAMES`]) a name that is none is a typo of: the closest
/// within one edit, or two for a name over four letters, in any case (`Bsah`, `Wirte`,
/// `WebFecth` -> `Bash`, `Write`, `WebFetch`). `None` for a known name and for one no known
/// name is that close to.
pub fn tool_name_meant(name: &str) -> Option<&'static str> {
    if KNOWN_TOOL_NAMES.contains(&name) {
        return None;
    }
    let given = name.to_lowercase();
    (1..=2).find_map(|edits| {
        KNOWN_TOOL_NAMES.iter().copied().find(|known| {
            (edits == 1 || known.len() > 4)
                && edit_distance_within(&given, &known.to_lowercase(), edits)
        })
    })
}

/// What is wrong with the tool name of a deny or ask rule that names no tool
/// ([`KNOWN_TOOL_NAMES`]), with the tool meant when one is a typo away (`Bsah`, `Wirte`,
/// `WebFecth`); `None` for a known name, a malformed rule (reported for its syntax), a name
/// with `_` or `*` (MCP tools, globs: Claude Code exempts them too) and a known name with
/// other capitals (`bash`), which the engine reports itself.
fn unknown_tool_name(rule: &str, host_tools: &[String]) -> Option<String> {
    let parsed = crate::rule::parse_rule(rule).ok()?;
    let name = parsed.tool_name.as_str();
    if name.contains(['_', '*'])
        || KNOWN_TOOL_NAMES
            .iter()
            .copied()
            .chain(host_tools.iter().map(String::as_str))
            .any(|known| known.eq_ignore_ascii_case(name))
    {
        return None;
    }
    Some(match tool_name_meant(name) {
        Some(meant) => format!(
            "no tool is named `{name}` (did you mean `{meant}`?): as written, this rule matches nothing"
        ),
        None => format!(
            "no tool is named `{name}`: as written, this rule matches nothing (MCP tools are named `mcp__<server>__<tool>`)"
        ),
    })
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
