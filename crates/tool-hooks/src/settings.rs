//! Reading the settings files Claude Code reads, for their hooks.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tool_core::RuleSource;

use crate::config::{Diagnostic, DiagnosticKind, HooksConfig, SettingsFile};

/// Where to look for settings files. [`SettingsPaths::discover`] fills it the way Claude
/// Code does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SettingsPaths {
    /// The managed settings directory (`/etc/claude-code` on Linux): its
    /// `managed-settings.json`, then `managed-settings.d/*.json` in name order.
    pub managed_dir: Option<PathBuf>,
    /// `--settings` arguments: a file path, or inline JSON (starting with `{`).
    pub flag_settings: Vec<String>,
    /// The project directory: `.claude/settings.json` there, and
    /// `.claude/settings.local.json` at the root of its git repository (there too outside a
    /// repository).
    pub project_dir: Option<PathBuf>,
    /// The user config dir (`$CLAUDE_CONFIG_DIR`, else `~/.claude`): `settings.json` there.
    pub user_config_dir: Option<PathBuf>,
    /// Whether the project directory is trusted. Hooks from an untrusted project's
    /// `.claude/settings.json` and `.claude/settings.local.json` are not loaded (a cloned
    /// repository must not run its own commands); they are listed in
    /// [`LoadedHooks::untrusted_ignored`]. Default: untrusted.
    pub project_trusted: bool,
}

impl SettingsPaths {
    /// Claude Code's locations for a session in `project_dir`: managed settings in
    /// [`tool_core::managed_settings_dir`], the user dir from `CLAUDE_CONFIG_DIR` or `$HOME/.claude`.
    pub fn discover(project_dir: impl Into<PathBuf>) -> Self {
        let managed = tool_core::managed_settings_dir();
        let user = std::env::var_os("CLAUDE_CONFIG_DIR")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|h| !h.is_empty())
                    .map(|h| PathBuf::from(h).join(".claude"))
            });
        Self {
            managed_dir: Some(managed),
            flag_settings: Vec::new(),
            project_dir: Some(project_dir.into()),
            user_config_dir: user,
            project_trusted: false,
        }
    }

    /// Marks the project directory trusted (or not).
    pub fn with_project_trusted(mut self, trusted: bool) -> Self {
        self.project_trusted = trusted;
        self
    }

    /// Adds a `--settings` argument (file path or inline JSON).
    pub fn with_flag_settings(mut self, arg: impl Into<String>) -> Self {
        self.flag_settings.push(arg.into());
        self
    }
}

/// The settings files read, the merged hooks configuration and every problem found.
#[derive(Debug, Clone, Default)]
pub struct LoadedHooks {
    /// The merged configuration.
    pub config: HooksConfig,
    /// Problems: unreadable or invalid files, bad hooks entries. Each names its file.
    pub diagnostics: Vec<Diagnostic>,
    /// The settings files that were read (missing files are not listed).
    pub files: Vec<SettingsFile>,
    /// Project settings files whose hooks were not loaded because the project is not
    /// trusted.
    pub untrusted_ignored: Vec<PathBuf>,
}

impl LoadedHooks {
    /// The problems the command line gave (`--settings` files or JSON) in the keys the hooks
    /// layer reads: every `Invalid` diagnostic of the hooks loader for such a value, whatever
    /// the key (a hook or a group of them that cannot be read, where running on without it
    /// would fail open, so a host stops the command instead; a `disableAllHooks` or
    /// `allowManagedHooksOnly` that is no boolean, a switch that was given and cannot be read;
    /// an `allowedHttpHookUrls` or `httpHookAllowedEnvVars` of the wrong type, a restriction
    /// likewise), and an `if` that matches no call (no valid permission rule, or a tool name
    /// no tool has), whose hook would never run. Each of those names the key it is about; a
    /// diagnostic that names none is about the value as a whole (it cannot be read, is no
    /// JSON, no object), which the permission settings loader reports. Worded as such
    /// ([`Diagnostic::stopping_the_command`]): without the `; group skipped` or `; ignored` of
    /// a load that goes on. What is not run by design ([`DiagnosticKind::NotRun`]: a handler
    /// type this layer does not run, a URL `allowedHttpHookUrls` keeps out,
    /// `allowManagedHooksOnly` outside managed settings) is not among them.
    pub fn command_line_errors(&self) -> Vec<String> {
        self.diagnostics
            .iter()
            .filter(|d| {
                d.source == Some(RuleSource::FlagSettings)
                    && ((d.kind == DiagnosticKind::Invalid && !d.location.is_empty())
                        || d.never_runs())
            })
            .map(Diagnostic::stopping_the_command)
            .collect()
    }
}

fn read_file(
    path: &Path,
    source: RuleSource,
    files: &mut Vec<SettingsFile>,
    diags: &mut Vec<Diagnostic>,
) {
    // Repaired bytes are reported with the file's permissions (the same file, read by the
    // permission settings loader): here its hooks are kept. Read again while it looks caught
    // mid-rewrite (blank, or cut short) by a program that saves it in place, as the
    // permission settings loader reads it: such a read would drop its hooks.
    let text = match tool_core::read_config_text_settled(path) {
        Ok((t, _)) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            diags.push(Diagnostic::new(
                DiagnosticKind::Invalid,
                Some(source),
                Some(path.to_path_buf()),
                "",
                format!("cannot read settings file: {e}"),
                "",
            ));
            return;
        }
    };
    parse_text(&text, Some(path.to_path_buf()), source, files, diags);
}

/// Parses a settings file's text (`path`) or an inline `--settings` value (no path): a
/// leading byte order mark is skipped and blank text is `{}`.
fn parse_text(
    text: &str,
    path: Option<PathBuf>,
    source: RuleSource,
    files: &mut Vec<SettingsFile>,
    diags: &mut Vec<Diagnostic>,
) {
    let text = tool_core::without_bom(text);
    let ignored = if path.is_some() {
        "file ignored"
    } else {
        "the inline --settings value is ignored"
    };
    if text.trim().is_empty() {
        files.push(SettingsFile {
            source,
            path,
            value: Value::Object(serde_json::Map::new()),
        });
        return;
    }
    match tool_core::parse_config_json(text) {
        Ok(value @ Value::Object(_)) => files.push(SettingsFile {
            source,
            path,
            value,
        }),
        Ok(other) => diags.push(Diagnostic::new(
            DiagnosticKind::Invalid,
            Some(source),
            path,
            "",
            format!(
                "settings must be a JSON object, got {}",
                crate::config_type_name(&other)
            ),
            format!("; {ignored}"),
        )),
        Err(e) => diags.push(Diagnostic::new(
            DiagnosticKind::Invalid,
            Some(source),
            path,
            "",
            format!("invalid JSON, {ignored}: {e}"),
            "",
        )),
    }
}

/// The managed drop-ins ([`tool_core::managed_drop_ins`]), with the errors met reading
/// their directory reported.
fn managed_drop_ins(managed_dir: &Path, diags: &mut Vec<Diagnostic>) -> Vec<PathBuf> {
    let (paths, errors) = tool_core::managed_drop_ins(managed_dir);
    for e in errors {
        diags.push(Diagnostic::new(
            DiagnosticKind::Invalid,
            Some(RuleSource::PolicySettings),
            Some(managed_dir.join("managed-settings.d")),
            "",
            format!("cannot read the managed settings drop-in directory: {e}"),
            "",
        ));
    }
    paths
}

/// Reads the settings files at `paths` and merges their hooks (see
/// [`HooksConfig::from_settings`]). Missing files are fine, a leading UTF-8 byte order mark
/// is skipped and a blank file is `{}`; unreadable or invalid ones and bad hooks entries are
/// reported in `diagnostics`. A file that reads as blank or as no valid JSON is read
/// again for a moment first ([`tool_core::read_config_text_settled`]): one caught in the
/// middle of an in-place rewrite is read once written.
pub fn load_hooks(paths: &SettingsPaths) -> LoadedHooks {
    let mut files = Vec::new();
    let mut diags = Vec::new();
    if let Some(dir) = &paths.managed_dir {
        read_file(
            &dir.join("managed-settings.json"),
            RuleSource::PolicySettings,
            &mut files,
            &mut diags,
        );
        for p in managed_drop_ins(dir, &mut diags) {
            read_file(&p, RuleSource::PolicySettings, &mut files, &mut diags);
        }
    }
    for arg in &paths.flag_settings {
        if tool_core::is_inline_json(arg) {
            parse_text(arg, None, RuleSource::FlagSettings, &mut files, &mut diags);
        } else {
            let p = PathBuf::from(arg);
            if p.exists() {
                read_file(&p, RuleSource::FlagSettings, &mut files, &mut diags);
            } else {
                diags.push(Diagnostic::new(
                    DiagnosticKind::Invalid,
                    Some(RuleSource::FlagSettings),
                    Some(p),
                    "",
                    "--settings file not found",
                    "",
                ));
            }
        }
    }
    let mut untrusted_ignored = Vec::new();
    if let Some(project) = &paths.project_dir {
        let mut project_files = Vec::new();
        read_file(
            &tool_core::local_settings_path(project),
            RuleSource::LocalSettings,
            &mut project_files,
            &mut diags,
        );
        // With the project directory at the home directory (or the config directory in
        // the project), the project's file is the user's own: read once, as the user's, as
        // the permissions read it (it is no repository's to be trusted or not).
        let project_file = project.join(".claude/settings.json");
        let user_file = paths
            .user_config_dir
            .as_ref()
            .map(|dir| dir.join("settings.json"));
        let same_file = |a: &Path, b: &Path| {
            matches!(
                (std::fs::canonicalize(a), std::fs::canonicalize(b)),
                (Ok(a), Ok(b)) if a == b
            )
        };
        if !user_file
            .as_deref()
            .is_some_and(|user| same_file(&project_file, user))
        {
            read_file(
                &project_file,
                RuleSource::ProjectSettings,
                &mut project_files,
                &mut diags,
            );
        }
        if paths.project_trusted {
            files.extend(project_files);
        } else {
            untrusted_ignored.extend(
                project_files
                    .into_iter()
                    .filter(|f| {
                        f.value
                            .get("hooks")
                            .is_some_and(|h| h.as_object().is_some_and(|o| !o.is_empty()))
                    })
                    .filter_map(|f| f.path),
            );
        }
    }
    if let Some(user) = &paths.user_config_dir {
        read_file(
            &user.join("settings.json"),
            RuleSource::UserSettings,
            &mut files,
            &mut diags,
        );
    }
    let (config, more) = HooksConfig::from_settings(&files);
    diags.extend(more);
    LoadedHooks {
        config,
        diagnostics: diags,
        files,
        untrusted_ignored,
    }
}
