//! The decision engine: Claude Code's `hasPermissionsToUseTool` order, matched generically
//! through [`Tool::permission_subject`].

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::{Arc, RwLock};

use serde_json::Value;
use tool_core::{
    DecisionReason, FileAccess, PermissionMode, PermissionResult, PermissionSubject,
    PermissionUpdate, RuleBehavior, RuleSource, RuleValue, SourcedRule, Tool,
    ToolPermissionContext, ToolUseContext, UpdateDestination, normalize_lexically,
    normalize_mcp_name,
};

use crate::bash::commands::{
    Backups, Destination, GitConfigRead, GitContent, LinkOptions, PathUse, WrappedPaths,
    accept_edits_allows, awk_may_use_other_files, backups, candidates, changes_directory,
    changes_trees, deletes_in_destination, destination, effective_name, effective_words,
    git_config_files, git_content, git_read_only_but_for, git_repository_elsewhere, has_option,
    has_path_operands, inherited_git_variable, is_read_only, is_transparent, link_options,
    lists_the_cwd_by_default, lists_trees_through_links, options_after_operands, path_args,
    path_use, read_path_args, reads_listed_files, reads_only_whatever_is_appended, reads_trees,
    safe_wrapper_len, sed_in_place, sed_script_note, sed_unseen, wrapped_command_starts,
    wrapped_readings, xargs_arg_files,
};
use crate::bash::file_uses::{config_variables, file_uses};
use crate::bash::parse::{
    Analysis, INPUT_SUBCOMMAND, MAX_ANALYZED_CHARS, REDIRECT_BEFORE_NAME, Redirect, RedirectKind,
    SimpleCommand, UNKNOWN_DIR, Word, analyze, basename, behind_wrappers, trim_command,
};
use crate::bash::pattern::{ShellPattern, escape_stars, first_word};
use crate::bash::values::{plain_word, substituted};
use crate::domain::{DomainPattern, url_host};
use crate::path::{
    CriticalDirs, FindNameFilter, PathRoots, PathRuleSet, escape_glob, find_name_filter,
    protected_glob_reason, protected_reason, resolve_symlinks, resolved_anchor,
    suspicious_windows_pattern, through_proc,
};
use crate::rule::{RuleValueParsed, format_rule, parse_rule};
use crate::settings::KNOWN_TOOL_NAMES;

/// Where relative path patterns are anchored and where `~` is: see [`PathRoots`].
pub type EngineOptions = PathRoots;

impl PathRoots {
    /// Options for a session in `cwd`: home from `HOME`, the user config dir from
    /// `CLAUDE_CONFIG_DIR` (else `~/.claude`), the project root = `cwd`.
    pub fn for_cwd(cwd: impl Into<PathBuf>) -> Self {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let user_config_dir = std::env::var_os("CLAUDE_CONFIG_DIR")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".claude")));
        let (managed_files, managed_dir) = managed_paths(&tool_core::managed_settings_dir());
        let settings_files = user_config_dir
            .iter()
            .map(|d| d.join("settings.json"))
            .chain(managed_files)
            .chain(user_state_files(
                home.as_deref(),
                user_config_dir.as_deref(),
            ))
            .collect();
        Self {
            cwd: cwd.into(),
            home,
            project_root: None,
            user_config_dir,
            flag_settings_dir: None,
            settings_files,
            settings_dirs: vec![managed_dir],
        }
    }
}

/// What the managed settings directory `managed` holds that a session reads, protected
/// whether or not it exists yet (a new one would be read by the next session, at the
/// highest precedence): the files `managed-settings.json` and `managed-mcp.json` (which
/// takes over the MCP server set, its commands run unasked), and the drop-in directory
/// `managed-settings.d`.
pub(crate) fn managed_paths(managed: &Path) -> ([PathBuf; 2], PathBuf) {
    (
        [
            managed.join("managed-settings.json"),
            managed.join("managed-mcp.json"),
        ],
        managed.join("managed-settings.d"),
    )
}

/// The user's state file, `.claude.json`, wherever a session may read it: beside the user
/// config dir (`$CLAUDE_CONFIG_DIR/.claude.json`) and in the home (`~/.claude.json`, when
/// that variable is not set). It records which folders are trusted and holds the user's and
/// local MCP servers, whose commands the next session runs unasked: writing it, or the file
/// it links to, is a safety check as writing a settings file is.
pub(crate) fn user_state_files(
    home: Option<&Path>,
    user_config_dir: Option<&Path>,
) -> Vec<PathBuf> {
    user_config_dir
        .into_iter()
        .chain(home)
        .map(|dir| dir.join(".claude.json"))
        .collect()
}

/// Whether `path` is this session's plan file ([`ToolUseContext::plan_file`]), the file
/// itself ([`plain_plan_file`]).
fn own_plan_file(path: &Path, ctx: &ToolUseContext) -> bool {
    ctx.plan_file().is_some_and(|plan| plan == path) && plain_plan_file(path)
}

/// Whether the plan file `path` is the file itself, or not there yet: no symbolic or hard
/// link of it, and no symbolic link for its directory (a write there must land in the
/// plans directory, on no other file).
fn plain_plan_file(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    let absent = |e: std::io::Error| e.kind() == std::io::ErrorKind::NotFound;
    let dir_plain = path.parent().is_some_and(|dir| {
        std::fs::symlink_metadata(dir).map_or_else(absent, |m| m.file_type().is_dir())
    });
    dir_plain
        && std::fs::symlink_metadata(path)
            .map_or_else(absent, |m| m.file_type().is_file() && m.nlink() == 1)
}

/// Why the session's plan file `path` is not [`plain_plan_file`]: the link plan mode does
/// not write through (of the plans directory, or of the file), said to the model in place of
/// the plain plan-mode refusal, which would leave it no way to tell why the one file it was
/// told to write is refused. `None` when it is plain.
fn plan_file_link(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt as _;
    let dir = path.parent()?;
    if let Ok(m) = std::fs::symlink_metadata(dir)
        && !m.file_type().is_dir()
    {
        return Some(if m.file_type().is_symlink() {
            format!(
                "the plans directory {} is a symbolic link; move the directory it links to into its place (or give the plan to ExitPlanMode as its `plan`)",
                dir.display()
            )
        } else {
            format!("{} is not a directory", dir.display())
        });
    }
    let m = std::fs::symlink_metadata(path).ok()?;
    if m.file_type().is_symlink() {
        Some(format!(
            "the plan file {} is a symbolic link; remove the link (or give the plan to ExitPlanMode as its `plan`)",
            path.display()
        ))
    } else if !m.file_type().is_file() {
        Some(format!(
            "the plan file {} is not a regular file",
            path.display()
        ))
    } else if m.nlink() != 1 {
        Some(format!(
            "the plan file {} has other hard links; remove them (or give the plan to ExitPlanMode as its `plan`)",
            path.display()
        ))
    } else {
        None
    }
}

/// A rule that could not be used, with where it came from and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleDiagnostic {
    /// The rule as written.
    pub rule: String,
    /// Its source.
    pub source: RuleSource,
    /// Its list (allow, ask, deny).
    pub behavior: RuleBehavior,
    /// The settings file, when known.
    pub file: Option<PathBuf>,
    /// What is wrong.
    pub reason: String,
    /// `true`: the rule is malformed and ignored; `false`: a warning (the rule is kept).
    pub error: bool,
}

impl std::fmt::Display for RuleDiagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let file = self
            .file
            .as_ref()
            .map_or_else(|| format!("{:?}", self.source), |p| p.display().to_string());
        let kind = if self.error { "error" } else { "warning" };
        write!(
            f,
            "{file}: {kind}: {:?} rule `{}`: {}",
            self.behavior, self.rule, self.reason
        )
    }
}

/// Errors building an engine.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// Some rules are malformed (strict construction only).
    #[error("malformed permission rules:\n{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    MalformedRules(Vec<RuleDiagnostic>),
}

#[derive(Debug, Clone)]
enum ToolMatcher {
    Name(String),
    /// `mcp__srv`, `mcp__srv__*`: the tools of server `srv` (its normalised name). A deny or
    /// ask rule (`by_name`) also reaches every tool whose name starts `mcp__srv__`, as
    /// Claude Code, which reads the server from the name, does: a server named `srv__x`
    /// cannot slip out of a deny on `srv`. An allow rule reaches only the server's own.
    McpServer {
        server: String,
        by_name: bool,
    },
    /// `mcp__a__b` (no `*`) in a deny or ask rule: the tool named so, or the tools of a
    /// server whose normalised name is `a__b` (a server named `gh admin` is `gh_admin`, but
    /// one named `gh__admin` keeps its `__`). In an allow rule it is the tool named so only.
    NameOrMcpServer {
        name: String,
        server: String,
    },
    /// A tool-name glob (`mcp__gh__*_issue`, `mcp__*` in a deny). `literal`: in an allow
    /// rule, the pattern's text before its first `*` (`mcp__gh__` of `mcp__gh__*o`); a tool
    /// that says which server it comes from matches only when that server's whole prefix
    /// `mcp__<server>__` is part of it (as `mcp__srv__*`): `mcp__gh__*o` must not allow the
    /// tools of a server named `gh__e`, whose names start `mcp__gh__e__` too, while
    /// `mcp__gh__e__*` allows them.
    Glob {
        pattern: ShellPattern,
        literal: Option<String>,
    },
}

#[derive(Debug, Clone)]
struct CompiledRule {
    sourced: SourcedRule,
    behavior: RuleBehavior,
    tool: ToolMatcher,
    tool_name: String,
    shell: Option<ShellPattern>,
    domain: Option<DomainPattern>,
    /// A deny or ask rule of Claude Code's `Tool(param:value)` form: the input field it
    /// matches (as well as the content's own reading, for a tool whose content has one).
    field: Option<crate::rule::FieldRule>,
}

#[derive(Debug, Default)]
struct RuleSet {
    rules: Vec<CompiledRule>,
    /// Content rules by tool name, per behaviour (indices into `rules`).
    by_name: [HashMap<String, Vec<usize>>; 3],
    /// Shell rules by tool name and first word, per behaviour.
    shell_index: [HashMap<String, ShellIndex>; 3],
    /// Tool-wide rules per behaviour.
    tool_wide: [Vec<usize>; 3],
    /// `Tool(param:value)` deny and ask rules per behaviour.
    fields: [Vec<usize>; 3],
    /// Read and Edit path rules per behaviour.
    read: [PathRuleSet; 3],
    edit: [PathRuleSet; 3],
    diagnostics: Vec<RuleDiagnostic>,
}

#[derive(Debug, Default)]
struct ShellIndex {
    by_first: HashMap<String, Vec<usize>>,
    other: Vec<usize>,
}

fn bi(b: RuleBehavior) -> usize {
    match b {
        RuleBehavior::Deny => 0,
        RuleBehavior::Ask => 1,
        RuleBehavior::Allow => 2,
    }
}

/// What `tool`'s permission rules are matched against for `input`, a relative path (a
/// search of the cwd: Glob or Grep without a `path`) resolved against the call's cwd.
fn subject_in(tool: &dyn Tool, input: &Value, ctx: &ToolUseContext) -> Option<PermissionSubject> {
    match tool.permission_subject(input)? {
        PermissionSubject::Path { path, access } if path.is_relative() => {
            Some(PermissionSubject::Path {
                path: ctx.resolve_path(&path.to_string_lossy()),
                access,
            })
        }
        subject => Some(subject),
    }
}

const PATH_ONLY_TOOLS: &[&str] = &["Write", "NotebookEdit", "Glob", "Grep", "MultiEdit", "LS"];

/// The built-in tools every call of which writes a path: a bare `Edit` deny denies each of
/// their calls, and removes them from the tool list ([`PermissionEngine::is_blanket_denied`]).
/// A fixed list of names (an MCP tool of such a name is not one of them).
const EDIT_FAMILY_TOOLS: &[&str] = &["Edit", "Write", "NotebookEdit", "MultiEdit"];

/// The built-in tools every call of which reads (a file, or the tree a search walks): a bare
/// `Read` deny denies each of their calls, and removes them from the tool list.
const READ_FAMILY_TOOLS: &[&str] = &["Read", "Glob", "Grep", "NotebookRead", "LS"];

/// The tools whose rule content is a command (`Bash(npm test:*)`) or a name (`Skill(x)`,
/// `Agent(Explore)`): the built-in tools whose permission subject such a rule matches.
const COMMAND_OR_NAME_TOOLS: &[&str] = &["Bash", "Monitor", "PowerShell", "Skill", "Agent"];

/// The built-in tools whose rule content has a reading of its own (a command, a name or a
/// path): a `Tool(param:value)` rule on one of them keeps that reading too.
const CONTENT_READING_TOOLS: &[&str] = &[
    "Bash",
    "Monitor",
    "PowerShell",
    "Skill",
    "Agent",
    "Read",
    "Edit",
];

/// What the diagnostic of a deny or ask rule that matches nothing says (the settings loader
/// makes such a rule given on the command line an error).
pub(crate) const DOES_NOTHING: &str = "this rule does nothing";

/// The tool `name` means when it is a known tool's name written with other capitals.
fn miscapitalised_tool(name: &str) -> Option<&'static str> {
    // A rule naming one of them with other capitals (`deny: ["bash"]`, `Webfetch`) is a
    // typo that matches nothing.
    if KNOWN_TOOL_NAMES.contains(&name) {
        return None;
    }
    KNOWN_TOOL_NAMES
        .iter()
        .find(|known| known.eq_ignore_ascii_case(name))
        .copied()
}

impl RuleSet {
    fn build(entries: &[(RuleBehavior, SourcedRule)], roots: &PathRoots) -> Self {
        let mut set = Self::default();
        let mut path_entries: [[Vec<(usize, PathBuf, String)>; 3]; 2] = Default::default();
        for (behavior, sourced) in entries {
            let behavior = *behavior;
            let diag = |reason: String, error: bool| RuleDiagnostic {
                rule: sourced.rule.clone(),
                source: sourced.source,
                behavior,
                file: None,
                reason,
                error,
            };
            let parsed = match parse_rule(&sourced.rule) {
                Ok(p) => p,
                Err(e) => {
                    set.diagnostics.push(diag(e.reason, true));
                    continue;
                }
            };
            let RuleValueParsed {
                tool_name,
                mut content,
            } = parsed;
            // `Bash( * )` is `Bash(*)`, the whole tool, as the spaces taken off say.
            let command_content = !matches!(
                tool_name.as_str(),
                "Read" | "Edit" | "WebFetch" | "WebSearch"
            ) && !PATH_ONLY_TOOLS.contains(&tool_name.as_str());
            if command_content && content.as_deref().is_some_and(|c| c.trim() == "*") {
                set.diagnostics.push(diag(
                    format!(
                        "spaces around the command were taken off: read as `{tool_name}(*)`, the whole tool"
                    ),
                    false,
                ));
                content = None;
            }
            // Tool names are matched exactly: `Bash(rm:*)` written `bash(rm:*)` would deny
            // nothing. Kept (a host may have a tool of that name), and said.
            if let Some(meant) = miscapitalised_tool(&tool_name) {
                set.diagnostics.push(diag(
                    format!("no tool is named `{tool_name}` (tool names are case-sensitive): did you mean `{meant}`? As written, this rule matches nothing"),
                    false,
                ));
            }
            let tool = if tool_name.contains('*') {
                let server_prefix = tool_name
                    .strip_prefix("mcp__")
                    .and_then(|rest| rest.split_once("__"))
                    .filter(|(server, _)| !server.is_empty() && !server.contains('*'));
                match server_prefix {
                    Some((server, "*")) => ToolMatcher::McpServer {
                        server: server.to_owned(),
                        by_name: behavior != RuleBehavior::Allow,
                    },
                    Some(_) => ToolMatcher::Glob {
                        pattern: ShellPattern::parse(&tool_name),
                        literal: (behavior == RuleBehavior::Allow)
                            .then(|| tool_name.split('*').next().unwrap_or_default().to_owned()),
                    },
                    None if behavior == RuleBehavior::Allow => {
                        set.diagnostics.push(diag(
                            "allow rules may use `*` in the tool name only after a literal `mcp__<server>__` prefix; ignored"
                                .into(),
                            true,
                        ));
                        continue;
                    }
                    None => ToolMatcher::Glob {
                        pattern: ShellPattern::parse(&tool_name),
                        literal: None,
                    },
                }
            } else if let Some(server) = tool_name.strip_prefix("mcp__").filter(|s| !s.is_empty()) {
                if server.contains("__") && behavior == RuleBehavior::Allow {
                    // An allow stays strict: the tool named so (as in Claude Code).
                    ToolMatcher::Name(tool_name.clone())
                } else if server.contains("__") {
                    ToolMatcher::NameOrMcpServer {
                        name: tool_name.clone(),
                        server: server.to_owned(),
                    }
                } else {
                    ToolMatcher::McpServer {
                        server: server.to_owned(),
                        by_name: behavior != RuleBehavior::Allow,
                    }
                }
            } else {
                ToolMatcher::Name(tool_name.clone())
            };
            if content.is_some()
                && matches!(
                    tool,
                    ToolMatcher::Glob { .. } | ToolMatcher::McpServer { .. }
                )
            {
                set.diagnostics.push(diag(
                    "a tool-name pattern cannot have content in parentheses; ignored".into(),
                    true,
                ));
                continue;
            }
            let idx = set.rules.len();
            let mut rule = CompiledRule {
                sourced: sourced.clone(),
                behavior,
                tool,
                tool_name: tool_name.clone(),
                shell: None,
                domain: None,
                field: None,
            };
            // Claude Code's `Tool(param:value)` (2.1.178+): a deny or ask rule on one of the
            // tool's top-level input fields matches a call whose field has that value. On an
            // MCP tool (`mcp__srv__tool(repo:secret-*)`) too: its name, which in a deny or
            // ask rule also names a server called `srv__tool`, is matched as a bare one is.
            if let (Some(c), ToolMatcher::Name(_) | ToolMatcher::NameOrMcpServer { .. }) =
                (&content, &rule.tool)
                && let Some(field) = crate::rule::field_rule(&tool_name, c)
            {
                let own_reading = CONTENT_READING_TOOLS.contains(&tool_name.as_str());
                let name = &field.field;
                if field.primary {
                    let instead = if own_reading {
                        format!("write the pattern without `{name}:`")
                    } else if tool_name == "WebFetch" {
                        "write `WebFetch(domain:HOST)`".to_owned()
                    } else if PATH_ONLY_TOOLS.contains(&tool_name.as_str()) {
                        "path rules are written `Read(...)` or `Edit(...)`".to_owned()
                    } else {
                        format!("write `{tool_name}` for the whole tool")
                    };
                    set.diagnostics.push(diag(
                        format!(
                            "`{name}` is the field `{tool_name}` rules stand for, and Claude Code ignores a `Tool(param:value)` rule on it: {DOES_NOTHING} ({instead})"
                        ),
                        false,
                    ));
                    if !own_reading {
                        continue;
                    }
                } else if behavior == RuleBehavior::Allow {
                    set.diagnostics.push(diag(
                        if own_reading {
                            format!(
                                "Claude Code's `Tool(param:value)` rules are deny and ask rules only: this allow rule is read as an ordinary `{tool_name}(...)` rule, not as one on the `{name}` field"
                            )
                        } else {
                            "Claude Code's `Tool(param:value)` rules are deny and ask rules only: as an allow rule it does nothing; ignored"
                                .to_owned()
                        },
                        false,
                    ));
                    if !own_reading {
                        continue;
                    }
                } else {
                    if own_reading
                        && field.value == "*"
                        && COMMAND_OR_NAME_TOOLS.contains(&tool_name.as_str())
                    {
                        let what = if matches!(tool_name.as_str(), "Skill" | "Agent") {
                            "name"
                        } else {
                            "command"
                        };
                        set.diagnostics.push(diag(
                            format!(
                                "read two ways, both kept: as Claude Code's rule on the input's `{name}` field (every call that gives it) and as the legacy prefix rule for the {what} `{name}` (`{tool_name}({name} *)`)"
                            ),
                            false,
                        ));
                    }
                    // The value is compared as written: spaces around it (`repo: x`) match
                    // only a value with the same spaces, which the rule likely did not mean.
                    if !own_reading && field.value.trim() != field.value {
                        set.diagnostics.push(diag(
                            format!(
                                "the value is compared exactly, spaces included: this rule matches only a `{name}` of `{}` with those spaces (write `{tool_name}({name}:{})` for the value without them)",
                                field.value,
                                field.value.trim()
                            ),
                            false,
                        ));
                    }
                    rule.field = Some(field);
                    if !own_reading {
                        set.fields[bi(behavior)].push(idx);
                        set.rules.push(rule);
                        continue;
                    }
                }
            }
            if let Some(c) = &content {
                match tool_name.as_str() {
                    "Read" | "Edit" => {
                        let fam = usize::from(tool_name == "Edit");
                        match roots.anchor(c, sourced.source, behavior) {
                            Ok(anchored) => {
                                if let Some(w) = &anchored.warning {
                                    set.diagnostics.push(diag(w.clone(), false));
                                }
                                // A deny or ask rule written through a symlink also covers
                                // where the link leads (allow rules need both anyway), unless
                                // that is far wider than the rule (said in a warning).
                                // A name at any depth (`sdir`, `sdir/**`) is resolved
                                // where it is at the rule's root, the cwd, as `./sdir/**`.
                                let mut resolved = Vec::new();
                                if behavior != RuleBehavior::Allow {
                                    let starts = std::iter::once((
                                        anchored.root.clone(),
                                        anchored.line.clone(),
                                    ))
                                    .chain(roots.name_at_cwd(c, &anchored));
                                    for (root, line) in starts {
                                        match resolved_anchor(&root, &line) {
                                            Ok(Some(r)) => resolved.push(r),
                                            Ok(None) => {}
                                            Err(w) => set.diagnostics.push(diag(w, false)),
                                        }
                                    }
                                }
                                let entries = &mut path_entries[fam][bi(behavior)];
                                entries.push((idx, anchored.root, anchored.line));
                                for (root, line) in resolved {
                                    entries.push((idx, root, line));
                                }
                            }
                            Err(e) => {
                                set.diagnostics.push(diag(e, true));
                                continue;
                            }
                        }
                    }
                    "WebFetch" => match DomainPattern::parse(c) {
                        Ok(d) => rule.domain = Some(d),
                        Err(e) => {
                            set.diagnostics.push(diag(e, true));
                            continue;
                        }
                    },
                    "WebSearch" => set.diagnostics.push(diag(
                        "WebSearch rules take no content; this rule is never consulted".into(),
                        false,
                    )),
                    n if PATH_ONLY_TOOLS.contains(&n) => {
                        // The rule meant: reads are `Read(...)`, writes `Edit(...)`. A deny or
                        // ask rule says it does nothing (an error on the command line, where
                        // the deny meant would not hold); an allow grants nothing either way.
                        let write = match crate::rule::path_rule_meant(n, c) {
                            Some(meant) => format!(" (write `{meant}`)"),
                            None => String::new(),
                        };
                        set.diagnostics.push(diag(
                            if behavior == RuleBehavior::Allow {
                                format!("path rules are written `Read(...)` or `Edit(...)`; `{n}(...)` is never consulted{write}")
                            } else {
                                format!("path rules are written `Read(...)` or `Edit(...)`; `{n}(...)` is never consulted: {DOES_NOTHING}{write}")
                            },
                            false,
                        ));
                    }
                    n => {
                        if !COMMAND_OR_NAME_TOOLS.contains(&n) && miscapitalised_tool(n).is_none() {
                            // Content that is no `Tool(param:value)` (read above): only a tool
                            // that gives a command or a name as its permission subject is
                            // matched with other content, and no MCP tool does.
                            set.diagnostics.push(diag(
                                if crate::rule::is_mcp_tool_name(n) {
                                    format!("an MCP tool's rule content must be `FIELD:VALUE` (a top-level input field: 1 to 64 letters, digits, `_`, `.` or `-`; `*` in VALUE for any characters): this content names no field, so this rule does nothing (write `{n}` for the whole tool)")
                                } else {
                                    format!("`Tool(param:value)` rules are not supported, and no built-in tool named `{n}` takes rule content: this rule does nothing (unless the tool gives a command or a name to match)")
                                },
                                false,
                            ));
                        }
                        // Commands are compared as written, words one space apart: a space at
                        // either end of the pattern, or before its `:*`, would match nothing
                        // (`Bash( rm:*)` denying nothing). Taken off, and said.
                        let (prefix, star) = match c.strip_suffix(":*") {
                            Some(p) => (p, ":*"),
                            None => (c.as_str(), ""),
                        };
                        let trimmed = format!("{}{star}", prefix.trim());
                        if trimmed != *c {
                            set.diagnostics.push(diag(
                                format!("spaces around the command were taken off: read as `{tool_name}({trimmed})`"),
                                false,
                            ));
                        }
                        if prefix.trim().contains("  ") {
                            set.diagnostics.push(diag(
                                "two spaces in a row match only a command typed with the same two spaces, not its usual spelling: commands are compared with their words one space apart".into(),
                                false,
                            ));
                        }
                        rule.shell = Some(if tool_name == "Skill" {
                            skill_pattern(&trimmed, behavior)
                        } else {
                            ShellPattern::parse(&trimmed)
                        });
                    }
                }
                set.by_name[bi(behavior)]
                    .entry(tool_name.clone())
                    .or_default()
                    .push(idx);
            } else {
                set.tool_wide[bi(behavior)].push(idx);
            }
            if let Some(p) = &rule.shell {
                let ix = set.shell_index[bi(behavior)]
                    .entry(tool_name.clone())
                    .or_default();
                match p.first_word() {
                    Some(w) => ix.by_first.entry(w.to_owned()).or_default().push(idx),
                    None => ix.other.push(idx),
                }
            }
            // Indexed only here, where the rule is kept: its own reading may still have
            // failed (a path that cannot be anchored) and dropped it.
            if rule.field.is_some() {
                set.fields[bi(behavior)].push(idx);
            }
            set.rules.push(rule);
        }
        for (fam, per_behavior) in path_entries.iter().enumerate() {
            for (b, entries) in per_behavior.iter().enumerate() {
                // Deny and ask rules ignore case below their root (node `ignore`'s
                // default, and a case-insensitive file system's); allow rules keep it.
                let (rs, errors) = PathRuleSet::build(entries, b != bi(RuleBehavior::Allow));
                let mut reported = std::collections::HashSet::new();
                for (idx, e) in errors {
                    // A rule and its resolved form fail alike: said once.
                    if !reported.insert(idx) {
                        continue;
                    }
                    if let Some(r) = set.rules.get(idx) {
                        set.diagnostics.push(RuleDiagnostic {
                            rule: r.sourced.rule.clone(),
                            source: r.sourced.source,
                            behavior: r.behavior,
                            file: None,
                            reason: format!("invalid path pattern: {e}"),
                            error: true,
                        });
                    }
                }
                if fam == 0 {
                    set.read[b] = rs;
                } else {
                    set.edit[b] = rs;
                }
            }
        }
        set
    }

    fn sourced(&self, idx: usize) -> Option<SourcedRule> {
        self.rules.get(idx).map(|r| r.sourced.clone())
    }
}

/// The server part of an MCP tool name (`mcp__srv__tool` -> `srv`).
fn mcp_server_of(name: &str) -> Option<&str> {
    name.strip_prefix("mcp__")?.split_once("__").map(|(s, _)| s)
}

fn tool_names(tool: &dyn Tool) -> Vec<String> {
    let mut names = vec![crate::rule::normalize_tool_name(tool.name()).to_owned()];
    if names[0] != tool.name() {
        names.push(tool.name().to_owned());
    }
    // An MCP tool whose `mcp__<server>__<tool>` is too long for the API goes by a shortened
    // name; a rule naming it in full (as Claude Code's rules do) still names it.
    if let Some(info) = tool.mcp_info() {
        let full = format!(
            "mcp__{}__{}",
            normalize_mcp_name(&info.server_name),
            normalize_mcp_name(&info.tool_name)
        );
        if !names.contains(&full) {
            names.push(full);
        }
    }
    for a in tool.aliases() {
        let n = crate::rule::normalize_tool_name(a).to_owned();
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names
}

fn tool_matches(m: &ToolMatcher, tool: &dyn Tool, names: &[String]) -> bool {
    match m {
        ToolMatcher::Name(n) => names.iter().any(|x| x == n),
        ToolMatcher::Glob { pattern, literal } => {
            let from_elsewhere =
                literal
                    .as_deref()
                    .zip(tool.mcp_info())
                    .is_some_and(|(literal, info)| {
                        let prefix = format!("mcp__{}__", normalize_mcp_name(&info.server_name));
                        !literal.starts_with(&prefix)
                    });
            !from_elsewhere && names.iter().any(|x| pattern.matches(x))
        }
        // The server a tool comes from, when it says so, decides: a server named
        // `gh__admin` has tools named `mcp__gh__admin__…`, which a rule for server `gh`
        // must not reach. Only a tool without that information is judged by its name.
        ToolMatcher::McpServer { server, by_name } => {
            let info = tool.mcp_info();
            let named = || {
                names
                    .iter()
                    .any(|n| mcp_server_of(n) == Some(server.as_str()))
            };
            from_server(info.as_ref(), server) || ((*by_name || info.is_none()) && named())
        }
        ToolMatcher::NameOrMcpServer { name, server } => {
            names.iter().any(|x| x == name) || from_server(tool.mcp_info().as_ref(), server)
        }
    }
}

/// Whether a tool with this MCP information comes from the server whose normalised name is
/// `server`.
fn from_server(info: Option<&tool_core::McpToolInfo>, server: &str) -> bool {
    info.is_some_and(|info| normalize_mcp_name(&info.server_name) == server)
}

/// Outcome kinds inside the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Allow,
    Passthrough,
    Ask,
    Deny,
}

/// One finding: what a subject check concluded and why.
#[derive(Debug, Clone)]
struct Finding {
    kind: Kind,
    message: String,
    reason: Option<DecisionReason>,
    rule: Option<SourcedRule>,
    subcommand: Option<String>,
    /// An ask that even bypass mode must not skip (ask rules, safety checks).
    immune: bool,
    suggestions: Vec<PermissionUpdate>,
    details: Vec<String>,
    /// For a shell command: whether the engine's own analysis finds it read-only (plan mode).
    read_only: Option<bool>,
}

impl Finding {
    fn new(kind: Kind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            reason: None,
            rule: None,
            subcommand: None,
            immune: false,
            suggestions: Vec::new(),
            details: Vec::new(),
            read_only: None,
        }
    }

    fn with_rule(mut self, rule: Option<SourcedRule>) -> Self {
        if let Some(r) = &rule {
            self.reason = Some(DecisionReason::Rule {
                rule: r.rule.clone(),
                source: r.source,
            });
        }
        self.rule = rule;
        self
    }

    fn reason(mut self, reason: DecisionReason) -> Self {
        self.reason = Some(reason);
        self
    }

    fn immune(mut self) -> Self {
        self.immune = true;
        self
    }

    fn sub(mut self, sub: impl Into<String>) -> Self {
        self.subcommand = Some(sub.into());
        self
    }

    /// A safety check's ask about subcommand `sub`, which no mode or rule settles.
    fn safety_ask(why: String, sub: impl Into<String>) -> Self {
        Finding::new(Kind::Ask, why.clone())
            .reason(DecisionReason::SafetyCheck { reason: why })
            .immune()
            .sub(sub)
    }

    /// A whole command line's safety check that a Bash deny or ask rule (or another
    /// bypass-proof check) cannot be settled: "This command cannot be proven safe and needs
    /// approval: WHY.", with `reason` for the decision, asked even in bypass mode.
    fn unproven(why: &str, reason: String) -> Self {
        Finding::new(
            Kind::Ask,
            format!("This command cannot be proven safe and needs approval: {why}."),
        )
        .reason(DecisionReason::SafetyCheck { reason })
        .immune()
    }

    /// A whole command line's safety check: "This command needs approval: WHY.", asked
    /// even in bypass mode.
    fn needs_approval(why: String) -> Self {
        Finding::new(Kind::Ask, format!("This command needs approval: {why}."))
            .reason(DecisionReason::SafetyCheck { reason: why })
            .immune()
    }
}

/// A decision with its explanation: the result plus the rule (and source) that decided,
/// the subcommand that decided (Bash), and per-subcommand notes.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    /// The decision.
    pub result: PermissionResult,
    /// The rule that decided, if one did.
    pub rule: Option<SourcedRule>,
    /// For shell commands: the subcommand that decided.
    pub subcommand: Option<String>,
    /// Whether this is an ask that bypass mode cannot skip.
    pub bypass_immune: bool,
    /// Notes, one per subcommand or check, for people.
    pub details: Vec<String>,
}

impl Explanation {
    fn from_finding(f: Finding, updated_input: Option<Value>) -> Self {
        let result = match f.kind {
            Kind::Allow => PermissionResult::Allow {
                updated_input,
                reason: f.reason,
            },
            Kind::Deny => PermissionResult::Deny {
                message: f.message,
                reason: f.reason.unwrap_or(DecisionReason::Other {
                    reason: "denied".into(),
                }),
            },
            Kind::Ask => PermissionResult::Ask {
                message: f.message,
                updated_input,
                suggestions: f.suggestions,
                reason: f.reason,
            },
            Kind::Passthrough => PermissionResult::Passthrough {
                message: Some(f.message).filter(|m| !m.is_empty()),
                suggestions: f.suggestions,
            },
        };
        Self {
            result,
            rule: f.rule,
            subcommand: f.subcommand,
            bypass_immune: f.immune,
            details: f.details,
        }
    }
}

/// Claude Code's permission engine, built once from a [`ToolPermissionContext`] (rules
/// parsed and compiled once). Rules added during the session (a prompt's "don't ask again")
/// are kept inside; the mode, working directories and prompt availability are read from the
/// [`ToolUseContext`] of each call.
pub struct PermissionEngine {
    roots: PathRoots,
    entries: RwLock<Vec<(RuleBehavior, SourcedRule)>>,
    rules: RwLock<Arc<RuleSet>>,
    /// [`ToolPermissionContext::managed_rules_only`]: rules are not added after start.
    pub(crate) managed_rules_only: bool,
}

impl std::fmt::Debug for PermissionEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PermissionEngine")
            .field("roots", &self.roots)
            .field("rules", &self.snapshot().rules.len())
            .finish()
    }
}

fn entries_of(ctx: &ToolPermissionContext) -> Vec<(RuleBehavior, SourcedRule)> {
    let mut v = Vec::new();
    for (b, list) in [
        (RuleBehavior::Deny, &ctx.deny),
        (RuleBehavior::Ask, &ctx.ask),
        (RuleBehavior::Allow, &ctx.allow),
    ] {
        v.extend(list.iter().map(|r| (b, r.clone())));
    }
    v
}

fn read_lock<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn write_lock<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Commands that change a path's directory entry (remove, move, link or re-mode it), not
/// only what is written through it: `/dev/null` is no output sink for them.
const CHANGES_ENTRIES: [&str; 12] = [
    "rm", "rmdir", "unlink", "mv", "ln", "link", "chmod", "chown", "chgrp", "install", "rsync",
    "shred",
];

const DONT_ASK_SUFFIX: &str = "because Claude Code is running in don't ask mode. Only pre-approved actions run in this mode; do not retry this action, and tell the user if it is needed.";

/// The session's permission engine in a context's app state, for the tools that apply its
/// deny rules to paths they find themselves ([`PermissionEngine::for_walking`]).
#[derive(Clone)]
pub struct SessionEngine(pub Arc<PermissionEngine>);

impl std::fmt::Debug for SessionEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SessionEngine").finish_non_exhaustive()
    }
}

impl PermissionEngine {
    /// Builds an engine; fails if any rule is malformed (see [`new_lenient`](Self::new_lenient)
    /// to keep going with warnings).
    pub fn new(ctx: &ToolPermissionContext, options: EngineOptions) -> Result<Self, EngineError> {
        let (engine, diags) = Self::new_lenient(ctx, options);
        let errors: Vec<RuleDiagnostic> = diags.into_iter().filter(|d| d.error).collect();
        if errors.is_empty() {
            Ok(engine)
        } else {
            Err(EngineError::MalformedRules(errors))
        }
    }

    /// Builds an engine, ignoring malformed rules; they are returned (and kept in
    /// [`diagnostics`](Self::diagnostics)) with their source and reason, with warnings.
    pub fn new_lenient(
        ctx: &ToolPermissionContext,
        options: EngineOptions,
    ) -> (Self, Vec<RuleDiagnostic>) {
        let entries = entries_of(ctx);
        let set = RuleSet::build(&entries, &options);
        let diags = set.diagnostics.clone();
        let engine = Self {
            roots: options,
            entries: RwLock::new(entries),
            rules: RwLock::new(Arc::new(set)),
            managed_rules_only: ctx.managed_rules_only,
        };
        (engine, diags)
    }

    /// Problems found in the rules (malformed rules and warnings).
    pub fn diagnostics(&self) -> Vec<RuleDiagnostic> {
        self.snapshot().diagnostics.clone()
    }

    /// The path roots the engine anchors patterns with.
    pub fn roots(&self) -> &PathRoots {
        &self.roots
    }

    fn snapshot(&self) -> Arc<RuleSet> {
        read_lock(&self.rules).clone()
    }

    /// Adds rules (as a prompt's "don't ask again" or a hook's `addRules` would), kept for
    /// the life of the engine under `source`. Returns diagnostics for rules that failed.
    pub fn add_rules(
        &self,
        behavior: RuleBehavior,
        source: RuleSource,
        rules: &[RuleValue],
    ) -> Vec<RuleDiagnostic> {
        if let Some(refused) = self.refuse_added_rules(behavior, source, rules) {
            return refused;
        }
        let mut entries = write_lock(&self.entries);
        for r in rules {
            entries.push((
                behavior,
                SourcedRule {
                    source,
                    rule: format_rule(&r.tool_name, r.rule_content.as_deref()),
                },
            ));
        }
        let set = RuleSet::build(&entries, &self.roots);
        let diags = set.diagnostics.clone();
        *write_lock(&self.rules) = Arc::new(set);
        diags
    }

    /// With [`ToolPermissionContext::managed_rules_only`], rules that do not come from
    /// managed settings are not added: one warning per rule, saying so.
    fn refuse_added_rules(
        &self,
        behavior: RuleBehavior,
        source: RuleSource,
        rules: &[RuleValue],
    ) -> Option<Vec<RuleDiagnostic>> {
        (self.managed_rules_only && source != RuleSource::PolicySettings).then(|| {
            rules
                .iter()
                .map(|r| RuleDiagnostic {
                    rule: format_rule(&r.tool_name, r.rule_content.as_deref()),
                    source,
                    behavior,
                    file: None,
                    reason: "not added: only managed settings may give permission rules (allowManagedPermissionRulesOnly)".into(),
                    error: false,
                })
                .collect()
        })
    }

    /// Applies the rule parts of a [`PermissionUpdate`] (add, replace, remove) to the
    /// engine's rules, whatever the destination (saving to a file is the host's job).
    /// Mode and directory updates belong to the context and are ignored here.
    pub fn apply_update(&self, update: &PermissionUpdate) -> Vec<RuleDiagnostic> {
        let source_of = |d: &UpdateDestination| match d {
            UpdateDestination::UserSettings => RuleSource::UserSettings,
            UpdateDestination::ProjectSettings => RuleSource::ProjectSettings,
            UpdateDestination::LocalSettings => RuleSource::LocalSettings,
            UpdateDestination::Session => RuleSource::Session,
            UpdateDestination::CliArg => RuleSource::CliArg,
        };
        match update {
            PermissionUpdate::AddRules {
                rules,
                behavior,
                destination,
            } => self.add_rules(*behavior, source_of(destination), rules),
            PermissionUpdate::ReplaceRules {
                rules,
                behavior,
                destination,
            }
            | PermissionUpdate::RemoveRules {
                rules,
                behavior,
                destination,
            } => {
                let source = source_of(destination);
                if matches!(update, PermissionUpdate::ReplaceRules { .. })
                    && let Some(refused) = self.refuse_added_rules(*behavior, source, rules)
                {
                    return refused;
                }
                let texts: Vec<String> = rules
                    .iter()
                    .map(|r| format_rule(&r.tool_name, r.rule_content.as_deref()))
                    .collect();
                {
                    let mut entries = write_lock(&self.entries);
                    let replace = matches!(update, PermissionUpdate::ReplaceRules { .. });
                    entries.retain(|(b, r)| {
                        !(b == behavior
                            && r.source == source
                            && (replace || texts.contains(&r.rule)))
                    });
                    if replace {
                        entries.extend(
                            texts
                                .into_iter()
                                .map(|rule| (*behavior, SourcedRule { source, rule })),
                        );
                    }
                }
                let set = RuleSet::build(&read_lock(&self.entries), &self.roots);
                let diags = set.diagnostics.clone();
                *write_lock(&self.rules) = Arc::new(set);
                diags
            }
            _ => Vec::new(),
        }
    }

    /// Whether a tool-wide deny rule (`Tool`, `Tool(*)`, `mcp__srv`, a name glob) removes
    /// `tool` from the model's tool list. A bare `Edit` deny removes every built-in tool
    /// whose every call writes a path (Edit, Write, NotebookEdit, MultiEdit), a bare `Read`
    /// deny every one whose every call reads (Read, Glob, Grep, NotebookRead, LS): the
    /// engine denies each of their calls, so the model is not offered them.
    pub fn is_blanket_denied(&self, tool: &dyn Tool) -> bool {
        let set = self.snapshot();
        let names = tool_names(tool);
        let family = if tool.mcp_info().is_some() {
            None
        } else if EDIT_FAMILY_TOOLS.contains(&tool.name()) {
            Some("Edit")
        } else if READ_FAMILY_TOOLS.contains(&tool.name()) {
            Some("Read")
        } else {
            None
        };
        set.tool_wide[bi(RuleBehavior::Deny)].iter().any(|&i| {
            let matcher = &set.rules[i].tool;
            tool_matches(matcher, tool, &names)
                || family.is_some_and(|f| matches!(matcher, ToolMatcher::Name(n) if n == f))
        })
    }

    fn tool_wide(
        &self,
        set: &RuleSet,
        b: RuleBehavior,
        tool: &dyn Tool,
        names: &[String],
    ) -> Option<SourcedRule> {
        set.tool_wide[bi(b)]
            .iter()
            .find(|&&i| tool_matches(&set.rules[i].tool, tool, names))
            .and_then(|&i| set.sourced(i))
    }

    /// The tool-wide deny or ask rule (`b`) for a call of `tool`: its own, or, for a file
    /// tool, a bare `Read` or `Edit` rule of its family. Deliberately wider than Claude Code,
    /// whose bare `Edit` names the Edit tool only: its documentation says Edit rules apply
    /// to every tool that edits files, and `deny: ["Edit"]` should stop Write too (and
    /// `deny: ["Read"]` Grep and Glob). Allow rules stay the tool's own.
    fn tool_wide_for_call(
        &self,
        set: &RuleSet,
        b: RuleBehavior,
        tool: &dyn Tool,
        names: &[String],
        input: &Value,
    ) -> Option<SourcedRule> {
        self.tool_wide(set, b, tool, names).or_else(|| {
            if b == RuleBehavior::Allow || set.tool_wide[bi(b)].is_empty() {
                return None;
            }
            let family = match tool.permission_subject(input) {
                Some(PermissionSubject::Path {
                    access: FileAccess::Read,
                    ..
                }) => "Read",
                Some(PermissionSubject::Path {
                    access: FileAccess::Write,
                    ..
                }) => "Edit",
                // A built-in search of the working directory (Glob or Grep without a
                // `path`) reads files as much as one given a path.
                None if tool.mcp_info().is_none() && {
                    let s = tool.is_search_or_read(input);
                    s.is_search || s.is_read || s.is_list
                } =>
                {
                    "Read"
                }
                _ => return None,
            };
            set.tool_wide[bi(b)]
                .iter()
                .find(|&&i| matches!(&set.rules[i].tool, ToolMatcher::Name(n) if n == family))
                .and_then(|&i| set.sourced(i))
        })
    }

    /// The permission decision for one call: Claude Code's `hasPermissionsToUseTool` (inner
    /// order and outer wrapper). `Ask` means a person must be asked; this never prompts.
    pub async fn decide(
        &self,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolUseContext,
    ) -> PermissionResult {
        self.explain(tool, input, ctx).await.result
    }

    /// [`decide`](Self::decide), except that in a session that cannot prompt
    /// (`ToolPermissionContext::avoid_prompts`) an ask stays an ask: for a host that runs
    /// PermissionRequest hooks first and refuses with [`refuse_prompt`](Self::refuse_prompt)
    /// when none decided (Claude Code's order for background agents).
    pub async fn decide_keeping_asks(
        &self,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolUseContext,
    ) -> PermissionResult {
        self.explain_with(tool, input, ctx, false).await.result
    }

    /// [`decide`](Self::decide) with the explanation (rule, source, subcommand).
    pub async fn explain(
        &self,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolUseContext,
    ) -> Explanation {
        self.explain_with(tool, input, ctx, true).await
    }

    /// The outer wrapper: dontAsk turns an ask into a denial, and so does a session that
    /// cannot prompt when `refuse_unpromptable` is set; denial tracking counts the outcome.
    async fn explain_with(
        &self,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolUseContext,
        refuse_unpromptable: bool,
    ) -> Explanation {
        let mut e = self.explain_inner(tool, input, ctx).await;
        let perm = ctx.permission();
        match &e.result {
            PermissionResult::Allow { .. } => ctx.update_denials(|d| d.record_allow()),
            PermissionResult::Ask { .. } if perm.mode == PermissionMode::DontAsk => {
                ctx.update_denials(|d| d.record_denial());
                e.result = PermissionResult::Deny {
                    message: format!(
                        "Permission to use {} has been denied {DONT_ASK_SUFFIX}",
                        tool.name()
                    ),
                    reason: DecisionReason::Mode {
                        mode: PermissionMode::DontAsk,
                    },
                };
            }
            PermissionResult::Ask { .. } if perm.avoid_prompts && refuse_unpromptable => {
                e.result = Self::refuse_prompt(tool, ctx, &e.result);
            }
            // The settings' `denyInsteadOfPrompting` where a host turned prompts back on to
            // ask a person (`agent` on a terminal, `serve`): refused here, before any
            // PermissionRequest hook, as nothing after would refuse it. A tool that exists to
            // ask the user (AskUserQuestion, ExitPlanMode) asks no permission.
            PermissionResult::Ask { .. }
                if perm.deny_instead_of_prompting
                    && !perm.avoid_prompts
                    && !tool.requires_user_interaction() =>
            {
                e.result = Self::refuse_prompt(tool, ctx, &e.result);
            }
            PermissionResult::Deny { .. } => {
                ctx.update_denials(|d| d.record_denial());
            }
            _ => {}
        }
        e
    }

    /// Whether an allow rule in the settings would let the call `ask` asked about run. A
    /// safety check's ask, an ask rule's and a hook's are settled by no allow rule (ask rules
    /// and hooks' asks outrank allow rules), nor is a tool's that always asks the user
    /// (AskUserQuestion, ExitPlanMode): saying one would help would send the model, or the
    /// user, to the settings for nothing.
    pub fn allow_rule_would_settle(tool: &dyn Tool, ask: &PermissionResult) -> bool {
        !tool.requires_user_interaction()
            && !matches!(
                ask,
                PermissionResult::Ask {
                    reason: Some(
                        DecisionReason::SafetyCheck { .. }
                            | DecisionReason::Rule { .. }
                            | DecisionReason::Hook { .. }
                    ),
                    ..
                }
            )
    }

    /// The denial of `ask` in a session that cannot prompt
    /// (`ToolPermissionContext::avoid_prompts`), counted by denial tracking: it says why
    /// the call needed approval (the ask's message). A host that runs PermissionRequest
    /// hooks first refuses with this once they gave no verdict.
    pub fn refuse_prompt(
        tool: &dyn Tool,
        ctx: &ToolUseContext,
        ask: &PermissionResult,
    ) -> PermissionResult {
        ctx.update_denials(|d| d.record_denial());
        let why = match ask {
            PermissionResult::Ask { message, .. } if !message.trim().is_empty() => {
                // A hook's reason is often a phrase (`please confirm`): ended as a sentence,
                // so that the next one does not run into it.
                let message = message.trim();
                let stop = if message.ends_with(['.', '!', '?', ':', ';']) {
                    ""
                } else {
                    "."
                };
                format!(" It needed approval: {message}{stop}")
            }
            _ => String::new(),
        };
        let hint = if Self::allow_rule_would_settle(tool, ask) {
            " (an allow rule in the settings would let it run)"
        } else {
            ""
        };
        if ctx.permission().deny_instead_of_prompting {
            return PermissionResult::Deny {
                message: format!(
                    "Permission to use {} has been denied.{why} The settings deny instead of prompting (`permissions.denyInsteadOfPrompting`), so nobody was asked; do not retry this action{hint}.",
                    tool.name()
                ),
                reason: DecisionReason::Other {
                    reason: "the settings deny instead of prompting".into(),
                },
            };
        }
        PermissionResult::Deny {
            message: format!(
                "Permission to use {} has been denied.{why} Prompts are not available in this session, so nobody could approve it; do not retry this action{hint}.",
                tool.name()
            ),
            reason: DecisionReason::Other {
                reason: "permission prompts are unavailable".into(),
            },
        }
    }

    /// The inner order only (no dontAsk / avoid-prompts conversion, no denial tracking).
    pub async fn explain_inner(
        &self,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolUseContext,
    ) -> Explanation {
        let set = self.snapshot();
        let names = tool_names(tool);
        let name = tool.name();
        if ctx.is_cancelled() {
            return Explanation::from_finding(
                Finding::new(Kind::Deny, "The call was cancelled.").reason(DecisionReason::Other {
                    reason: "cancelled".into(),
                }),
                None,
            );
        }
        // 1a: tool-wide deny (1b, a tool-wide ask, is looked at after the content rules).
        if let Some(r) = self.tool_wide_for_call(&set, RuleBehavior::Deny, tool, &names, input) {
            return Explanation::from_finding(
                Finding::new(
                    Kind::Deny,
                    format!("Permission to use {name} has been denied."),
                )
                .with_rule(Some(r)),
                None,
            );
        }
        // A `Tool(param:value)` deny rule, and such an ask rule as a tool-wide one.
        if let Some(denied) = field_rule_denial(&set, tool, &names, input) {
            return Explanation::from_finding(denied, None);
        }
        let wide_ask = self
            .tool_wide_for_call(&set, RuleBehavior::Ask, tool, &names, input)
            .or_else(|| {
                field_rule_hit(&set, RuleBehavior::Ask, tool, &names, input).map(|(r, _)| r)
            });
        // 1c: the subject's content rules and the tool's own check.
        let subject = self.check_subject(&set, tool, &names, input, ctx);
        let read_only_command = subject.as_ref().and_then(|s| s.read_only);
        let own = tool.check_permissions(input, ctx).await;
        let (mut f, updated_input) = merge(subject, own);
        // 1b after 1d (deny rules always take precedence, as Claude Code's documentation
        // says; its code asks before looking at the content rules): a tool-wide ask rule
        // does not let the user approve what a deny rule forbids (`ask: ["Bash"]`, `deny:
        // ["Bash(rm:*)"]`).
        if f.kind != Kind::Deny
            && let Some(r) = wide_ask
        {
            return Explanation::from_finding(wide_ask_finding(name, r), None);
        }
        // 1d..1g
        match f.kind {
            Kind::Deny => return Explanation::from_finding(f, None),
            _ if tool.requires_user_interaction() => {
                f.kind = Kind::Ask;
                f.immune = true;
                if f.message.is_empty() {
                    f.message = format!("{name} needs your input.");
                }
                return Explanation::from_finding(f, updated_input);
            }
            _ => {}
        }
        let perm = ctx.permission();
        // Plan mode's own file, where the model writes its plan (Claude Code's plan file):
        // Read, Write and Edit reach it without a question, safety check or plan-mode
        // refusal (deny rules applied above). Only the file itself: not through a link (of
        // the file, hard or symbolic, or of the plans directory), or none yet.
        if perm.mode == PermissionMode::Plan
            && let Some(PermissionSubject::Path { path, .. }) = subject_in(tool, input, ctx)
            && own_plan_file(&path, ctx)
        {
            let mut g = Finding::new(Kind::Allow, "").reason(DecisionReason::Mode {
                mode: PermissionMode::Plan,
            });
            g.details = f.details;
            return Explanation::from_finding(g, updated_input);
        }
        // Plan mode: only what does not change the world runs until the plan is approved
        // (a refusal, also where a safety check or an ask rule would have asked, unless
        // the command is read-only by the engine's own analysis). A read-only command that
        // asks (a path a safety check cannot check, a tree too large to check, a read
        // outside the working directories) is asked about, not refused as a change. (git in
        // a planted repository, which would run what its configuration names, is no read:
        // `check_command` says so.)
        let read_only_ask =
            matches!(f.kind, Kind::Ask | Kind::Passthrough) && read_only_command == Some(true);
        if perm.plan_mode_refuses_changes()
            && !read_only_ask
            && Self::changes_the_world(tool, input, f.kind == Kind::Allow, read_only_command)
            && let PermissionResult::Deny { message, reason } =
                ToolPermissionContext::plan_mode_refusal(name)
        {
            // The session's plan file, refused only for a link on the way to it: said so.
            let message = match subject_in(tool, input, ctx) {
                Some(PermissionSubject::Path { path, .. })
                    if ctx.plan_file().is_some_and(|plan| plan == path) =>
                {
                    match plan_file_link(&path) {
                        Some(why) => format!(
                            "Plan mode is active, and {name} cannot write the plan file: plan mode writes it through no link, and {why}."
                        ),
                        None => message,
                    }
                }
                _ => message,
            };
            return Explanation::from_finding(
                Finding::new(Kind::Deny, message).reason(reason),
                None,
            );
        }
        if f.kind == Kind::Ask && f.immune {
            return Explanation::from_finding(f, updated_input);
        }
        // 2a: bypass.
        if perm.mode == PermissionMode::BypassPermissions
            || (perm.mode == PermissionMode::Plan && perm.bypass_available)
        {
            let mut g =
                Finding::new(Kind::Allow, "").reason(DecisionReason::Mode { mode: perm.mode });
            g.details = f.details;
            return Explanation::from_finding(g, updated_input);
        }
        // 2b: tool-wide allow.
        if let Some(r) = self.tool_wide(&set, RuleBehavior::Allow, tool, &names) {
            let mut g = Finding::new(Kind::Allow, "").with_rule(Some(r));
            g.details = f.details;
            return Explanation::from_finding(g, updated_input);
        }
        // 3: passthrough -> ask.
        if f.kind == Kind::Passthrough {
            f.kind = Kind::Ask;
            if f.message.is_empty() {
                f.message = format!(
                    "Claude requested permissions to use {name}, but you haven't granted it yet."
                );
            }
            // An MCP tool's own check suggests allowing the tool in local settings (Claude
            // Code's `MCPTool.checkPermissions`): a PermissionRequest hook that approves by
            // echoing the suggestions back gets a rule for it, as for a built-in tool.
            if tool.is_mcp() && f.suggestions.is_empty() {
                f.suggestions.push(PermissionUpdate::AddRules {
                    rules: vec![RuleValue {
                        tool_name: name.to_owned(),
                        rule_content: None,
                    }],
                    behavior: RuleBehavior::Allow,
                    destination: UpdateDestination::LocalSettings,
                });
            }
        }
        Explanation::from_finding(f, updated_input)
    }

    /// Whether a call may change files, run a writing command or reach a server: what plan mode
    /// refuses. `allowed` says whether the content check allowed the call (for a command: its
    /// paths are inside the working directories or allowed by Read rules). A command must
    /// also be read-only by the engine's own analysis ([`is_read_only_shell`], `read_only`
    /// when the content check already ran it): an allow rule does not make a writing command
    /// read-only. Read-only calls, and calls that only touch the session's own state (todos,
    /// questions, skills) are fine.
    fn changes_the_world(
        tool: &dyn Tool,
        input: &Value,
        allowed: bool,
        read_only: Option<bool>,
    ) -> bool {
        match tool.permission_subject(input) {
            Some(tool_core::PermissionSubject::Command(cmd)) => {
                !(allowed
                    && read_only
                        .unwrap_or_else(|| is_read_only_shell(&analyze(trim_command(&cmd)))))
            }
            Some(tool_core::PermissionSubject::Path {
                access: tool_core::FileAccess::Write,
                ..
            }) => true,
            _ => !tool.is_read_only(input) && (tool.is_mcp() || tool.is_destructive(input)),
        }
    }

    /// Claude Code's `checkRuleBasedPermissions`, used after a hook's allow: tool-wide deny and
    /// ask rules, content rules, the tool's own deny, ask rules and safety checks. Returns
    /// `None` when nothing objects (no mode, allow-rule or passthrough logic).
    pub async fn check_rule_based(
        &self,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolUseContext,
    ) -> Option<PermissionResult> {
        self.explain_rule_based(tool, input, ctx)
            .await
            .map(|e| e.result)
    }

    /// The deny of the rules alone on a call, without the tool's own check (which may wait):
    /// a tool-wide deny rule, a `Tool(param:value)` deny rule, or what the call's subject
    /// (command, path, URL, name) is refused by. Every such deny is also
    /// [`check_rule_based`](Self::check_rule_based)'s. For what is built without waiting,
    /// such as the Skill tool's listing of the skills a deny rule does not refuse.
    pub fn rule_denial(
        &self,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolUseContext,
    ) -> Option<PermissionResult> {
        let set = self.snapshot();
        let names = tool_names(tool);
        self.denial_before_own_check(&set, tool, &names, input)
            .or_else(|| {
                self.check_subject(&set, tool, &names, input, ctx)
                    .filter(|f| f.kind == Kind::Deny)
            })
            .map(|f| Explanation::from_finding(f, None).result)
    }

    /// A tool-wide deny rule's or a `Tool(param:value)` deny rule's refusal of the call.
    fn denial_before_own_check(
        &self,
        set: &RuleSet,
        tool: &dyn Tool,
        names: &[String],
        input: &Value,
    ) -> Option<Finding> {
        if let Some(r) = self.tool_wide_for_call(set, RuleBehavior::Deny, tool, names, input) {
            let name = tool.name();
            return Some(
                Finding::new(
                    Kind::Deny,
                    format!("Permission to use {name} has been denied."),
                )
                .with_rule(Some(r)),
            );
        }
        // A `Tool(param:value)` deny rule (such an ask rule counts as a tool-wide one).
        field_rule_denial(set, tool, names, input)
    }

    async fn explain_rule_based(
        &self,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolUseContext,
    ) -> Option<Explanation> {
        let set = self.snapshot();
        let names = tool_names(tool);
        let name = tool.name();
        if let Some(denied) = self.denial_before_own_check(&set, tool, &names, input) {
            return Some(Explanation::from_finding(denied, None));
        }
        let wide_ask = self
            .tool_wide_for_call(&set, RuleBehavior::Ask, tool, &names, input)
            .or_else(|| {
                field_rule_hit(&set, RuleBehavior::Ask, tool, &names, input).map(|(r, _)| r)
            });
        let subject = self.check_subject(&set, tool, &names, input, ctx);
        let own = tool.check_permissions(input, ctx).await;
        let (f, updated) = merge(subject, own);
        match f.kind {
            Kind::Deny => Some(Explanation::from_finding(f, None)),
            _ if let Some(r) = wide_ask => {
                Some(Explanation::from_finding(wide_ask_finding(name, r), None))
            }
            Kind::Ask if f.immune => Some(Explanation::from_finding(f, updated)),
            _ => None,
        }
    }

    /// Session rules a "don't ask again" answer should add for this call: for a shell
    /// command, one `program subcommand:*` prefix per subcommand that was not allowed (at
    /// most 5, exact rules for commands too dangerous to prefix); for a path, its directory;
    /// for a URL, its domain; otherwise the tool name.
    pub fn suggest_rules(
        &self,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolUseContext,
    ) -> Vec<RuleValue> {
        let set = self.snapshot();
        let names = tool_names(tool);
        match subject_in(tool, input, ctx) {
            Some(PermissionSubject::Command(cmd)) => {
                let analysis = analyze(&cmd);
                let mut out: Vec<RuleValue> = Vec::new();
                for sub in analysis.commands.iter().filter(|s| !is_transparent(s)) {
                    let f = self.check_subcommand(&set, tool, &names, sub, ctx, &analysis);
                    if f.kind == Kind::Allow {
                        continue;
                    }
                    let content = prefix_suggestion(sub);
                    let rv = RuleValue {
                        tool_name: tool.name().to_owned(),
                        rule_content: Some(content),
                    };
                    if !out.contains(&rv) {
                        out.push(rv);
                    }
                    if out.len() >= 5 {
                        break;
                    }
                }
                out
            }
            Some(PermissionSubject::Path { path, access }) => {
                let tool_name = if access == FileAccess::Read {
                    "Read"
                } else {
                    "Edit"
                };
                self.grant_rules(tool_name, &normalize_lexically(&path), ctx)
            }
            Some(PermissionSubject::Url(u)) => url_host(&u)
                .map(|h| {
                    vec![RuleValue {
                        tool_name: tool.name().into(),
                        rule_content: Some(format!("domain:{h}")),
                    }]
                })
                .unwrap_or_default(),
            Some(PermissionSubject::Name(n)) => {
                vec![RuleValue {
                    tool_name: tool.name().into(),
                    rule_content: Some(n),
                }]
            }
            _ => vec![RuleValue {
                tool_name: tool.name().into(),
                rule_content: None,
            }],
        }
    }

    /// Whether granting `dir` and everything in it would grant too much to suggest: `/`, the
    /// home directory (as written or resolved) or a directory above it.
    fn too_wide_to_grant(&self, dir: &Path, ctx: &ToolUseContext) -> bool {
        let home = self.roots.home.as_deref().or(ctx.home());
        dir.parent().is_none()
            || home.is_some_and(|h| {
                let h = normalize_lexically(h);
                h.starts_with(dir) || resolve_symlinks(&h).starts_with(dir)
            })
    }

    /// The rules of `tool` that grant `path` again ([`path_grant`]).
    ///
    /// [`path_grant`]: Self::path_grant
    fn grant_rules(&self, tool: &str, path: &Path, ctx: &ToolUseContext) -> Vec<RuleValue> {
        self.path_grant(path, ctx)
            .into_iter()
            .map(|content| RuleValue {
                tool_name: tool.into(),
                rule_content: Some(content),
            })
            .collect()
    }

    /// The session allow rules of `tool` that grant `path` again ([`grant_rules`]), as a
    /// suggestion; none when nothing narrower than `/` or the home directory would.
    ///
    /// [`grant_rules`]: Self::grant_rules
    fn session_grant(
        &self,
        tool: &str,
        path: &Path,
        ctx: &ToolUseContext,
    ) -> Option<PermissionUpdate> {
        let rules = self.grant_rules(tool, path, ctx);
        (!rules.is_empty()).then_some(PermissionUpdate::AddRules {
            rules,
            behavior: RuleBehavior::Allow,
            destination: UpdateDestination::Session,
        })
    }

    /// The contents of the path rules that would allow `path` (absolute) again: its directory
    /// and everything in it (`//dir/**`); for a directory, itself and everything in it
    /// (`//dir`: `//dir/**` would not match the directory itself); only the file when its
    /// directory is too wide to grant (`/`, the home directory: never `///**`), nothing for
    /// such a directory itself. The path is a literal (`app/[slug]` escaped). A rule is added
    /// for the symlink-resolved path too when it differs, as an allow needs both to match:
    /// for the file alone when the path's last component is the link (`out/hosts ->
    /// /etc/hosts` must not grant `/etc`), the directory when a link is above the file.
    fn path_grant(&self, path: &Path, ctx: &ToolUseContext) -> Vec<String> {
        let resolved = resolve_symlinks(path);
        let last_is_link = !resolved.is_dir()
            && path
                .parent()
                .zip(path.file_name())
                .is_some_and(|(parent, name)| resolve_symlinks(parent).join(name) != resolved);
        let literal = |p: &Path| format!("/{}", escape_glob(&p.display().to_string()));
        let mut out: Vec<String> = Vec::new();
        for (p, file_only) in [(path.to_path_buf(), false), (resolved, last_is_link)] {
            let content = if p.is_dir() {
                if self.too_wide_to_grant(&p, ctx) {
                    continue;
                }
                literal(&p)
            } else {
                match p.parent() {
                    None => continue,
                    Some(dir) if !file_only && !self.too_wide_to_grant(dir, ctx) => {
                        format!("{}/**", literal(dir))
                    }
                    Some(_) => literal(&p),
                }
            };
            if !out.contains(&content) {
                out.push(content);
            }
        }
        out
    }

    /// The engine a tool that walks directories (Grep, Glob) asks which paths its deny rules
    /// forbid to read ([`denied_by`](Self::denied_by)) and its ask rules keep from being read
    /// unasked ([`asked_by`](Self::asked_by)): the session's, when the host put it in the
    /// context's app state ([`SessionEngine`]); else one made of the context's deny and ask
    /// rules, anchored at its working directory; `None` when there are none at all (nothing
    /// to filter).
    pub fn for_walking(ctx: &ToolUseContext) -> Option<Arc<Self>> {
        if let Some(SessionEngine(engine)) = ctx.app_state().get::<SessionEngine>() {
            return Some(engine);
        }
        let (deny, ask) = (&ctx.permission().deny, &ctx.permission().ask);
        if deny.is_empty() && ask.is_empty() {
            return None;
        }
        let perm = ToolPermissionContext {
            deny: deny.clone(),
            ask: ask.clone(),
            ..Default::default()
        };
        let mut roots = PathRoots::for_cwd(ctx.cwd());
        if let Some(home) = ctx.home() {
            roots.home = Some(home.to_path_buf());
        }
        Some(Arc::new(Self::new_lenient(&perm, roots).0))
    }

    /// The deny rule that forbids `access` to `path` (checked on the path and its
    /// symlink-resolved target), if any. For tools that walk directories (Grep, Glob) and must
    /// skip denied files inside an allowed directory. Writes are also denied by `Read` deny
    /// rules (compat decision 9).
    pub fn denied_by(&self, path: &Path, access: FileAccess) -> Option<SourcedRule> {
        let set = self.snapshot();
        // No rule to match: nothing to resolve (a walk asks this of every entry).
        if set.read[bi(RuleBehavior::Deny)].is_empty()
            && (access == FileAccess::Read || set.edit[bi(RuleBehavior::Deny)].is_empty())
        {
            return None;
        }
        let path = normalize_lexically(path);
        let resolved = resolve_symlinks(&path);
        let read = || self.path_rule(&set, false, RuleBehavior::Deny, &path, &resolved, false);
        match access {
            FileAccess::Read => read(),
            FileAccess::Write => self
                .path_rule(&set, true, RuleBehavior::Deny, &path, &resolved, false)
                .or_else(read),
        }
    }

    /// The ask rule that covers reading `path` (checked on the path and its symlink-resolved
    /// target), if any: a search that walks a directory (Grep) leaves such a file out rather
    /// than read it unasked, and says so (a Read of it then asks).
    pub fn asked_by(&self, path: &Path) -> Option<SourcedRule> {
        let set = self.snapshot();
        if set.read[bi(RuleBehavior::Ask)].is_empty() {
            return None;
        }
        let path = normalize_lexically(path);
        let resolved = resolve_symlinks(&path);
        self.path_rule(&set, false, RuleBehavior::Ask, &path, &resolved, false)
    }

    // ----- subjects -----

    fn check_subject(
        &self,
        set: &RuleSet,
        tool: &dyn Tool,
        names: &[String],
        input: &Value,
        ctx: &ToolUseContext,
    ) -> Option<Finding> {
        Some(match subject_in(tool, input, ctx)? {
            PermissionSubject::Command(cmd) => self.check_command(set, tool, names, &cmd, ctx),
            PermissionSubject::Path { path, access } => {
                let path = normalize_lexically(&path);
                let f = match access {
                    FileAccess::Read => self.check_path(set, &path, FileAccess::Read, ctx),
                    FileAccess::Write => self.check_path(set, &path, FileAccess::Write, ctx),
                };
                match f.kind {
                    Kind::Deny => f,
                    _ => self.blocked_outside(&path, access, ctx).unwrap_or(f),
                }
            }
            PermissionSubject::Url(url) => self.check_url(set, tool, names, &url),
            PermissionSubject::Name(n) => self.check_name(set, tool, names, &n),
            _ => return None,
        })
    }

    /// The denial of a file tool's `access` to `path` outside the working directories that
    /// the settings block (`blockReadsOutsideWorkingDirectories`,
    /// `blockWritesOutsideWorkingDirectories`): in every mode, whatever allow rule matches,
    /// telling the model to have the user add the directory. A deny rule's denial is said
    /// before it; what the session keeps for itself stays reachable (its saved tool results
    /// to read, plan mode's own file to read and write: [`Self::read_blocked`]). `None` when
    /// nothing blocks.
    fn blocked_outside(
        &self,
        path: &Path,
        access: FileAccess,
        ctx: &ToolUseContext,
    ) -> Option<Finding> {
        let perm = ctx.permission();
        // Off (the common case), nothing is looked at on disk: this runs for every call of
        // a file tool.
        let on = match access {
            FileAccess::Read => perm.block_reads_outside_working_dirs,
            FileAccess::Write => perm.block_writes_outside_working_dirs,
        };
        if !on {
            return None;
        }
        let resolved = resolve_symlinks(path);
        let (key, verb) = match access {
            FileAccess::Read if self.read_blocked(path, &resolved, ctx) => {
                ("blockReadsOutsideWorkingDirectories", "Reading")
            }
            // (The switch is on: checked above.)
            FileAccess::Write
                if !(self.inside_working_dirs(&resolved, ctx)
                    || perm.mode == PermissionMode::Plan && own_plan_file(path, ctx)) =>
            {
                ("blockWritesOutsideWorkingDirectories", "Writing to")
            }
            _ => return None,
        };
        let asked = shown_with_link_target(path, &resolved);
        Some(
            Finding::new(
                Kind::Deny,
                format!(
                    "{verb} {asked} is blocked: it is outside the working directories, and the settings' `permissions.{key}` is on. Do not retry this call; if the file is needed, ask the user to add its directory as a working directory (`permissions.additionalDirectories` in the settings)."
                ),
            )
            .reason(DecisionReason::WorkingDir {
                reason: format!(
                    "{asked} is outside the working directories (`permissions.{key}`)"
                ),
            }),
        )
    }

    /// Whether the settings' `permissions.blockReadsOutsideWorkingDirectories` blocks reading
    /// `path` (`resolved`: with its links resolved): the switch is on and the path is outside
    /// the working directories and what the session keeps for itself, its saved tool
    /// results and its plan file (which plan mode tells the model to read, in any mode: it
    /// is the session's own). A file tool is denied such a read ([`Self::blocked_outside`]),
    /// a shell command asked about it ([`Self::read_block_ask`]).
    fn read_blocked(&self, path: &Path, resolved: &Path, ctx: &ToolUseContext) -> bool {
        ctx.permission().block_reads_outside_working_dirs
            && !self.inside_working_dirs(resolved, ctx)
            && !inside_results_dir(path, resolved, ctx)
            && !own_plan_file(path, ctx)
    }

    /// The question about a shell command's `access` to `path` (`resolved`: with its links
    /// resolved) that [`Self::read_blocked`] blocks: asked in every mode, bypassPermissions
    /// included. Its reason is a safety check's, which no allow rule settles (nor is the
    /// model told one would). A path written counts as one read: what a command writes
    /// outside it may read there too (rsync's source, `sort -o`'s input, a link's target read
    /// back through the link).
    fn read_block_ask(&self, path: &Path, resolved: &Path, access: FileAccess) -> Finding {
        let asked = shown_with_link_target(path, resolved);
        let what = match access {
            FileAccess::Read => format!("read from {asked}"),
            FileAccess::Write => {
                format!("use {asked} (what a command writes, copies or links there it may read)")
            }
        };
        Finding::new(
            Kind::Ask,
            format!("Claude requested permissions to {what}, which is outside the working directories, and the settings' `permissions.blockReadsOutsideWorkingDirectories` is on: it needs manual approval."),
        )
        .reason(DecisionReason::SafetyCheck {
            reason: format!("{asked} is outside the working directories (`permissions.blockReadsOutsideWorkingDirectories`)"),
        })
        .immune()
    }

    /// Why a word of `analysis`'s commands with a glob may make a Bash deny or ask rule
    /// match what runs, though the words as written do not
    /// ([`crate::bash::commands::glob_may_meet_rule`]); `None` when none may.
    fn glob_may_meet_rules(
        &self,
        set: &RuleSet,
        tool: &dyn Tool,
        names: &[String],
        analysis: &Analysis,
    ) -> Option<String> {
        let nullglob = crate::bash::commands::may_turn_on_nullglob(&analysis.commands);
        let rules: Vec<&CompiledRule> = [RuleBehavior::Deny, RuleBehavior::Ask]
            .into_iter()
            .flat_map(|b| self.content_rules(set, b, tool, names, Some("Bash")))
            .filter(|r| r.shell.is_some())
            .collect();
        if rules.is_empty() {
            return None;
        }
        analysis.commands.iter().find_map(|c| {
            rules.iter().find_map(|r| {
                let pattern = r.shell.as_ref()?;
                let word = crate::bash::commands::glob_may_meet_rule(c, pattern, nullglob)?;
                let what = if word.value.is_none() {
                    "is computed (an expansion or substitution), and bash may expand it to what the rule"
                } else {
                    "is a glob that bash may expand to what the rule"
                };
                Some(format!(
                    "the word `{}` of `{}` {what} `{}` names",
                    word.raw,
                    c.raw_text(),
                    r.sourced.rule
                ))
            })
        })
    }

    fn content_rules<'a>(
        &self,
        set: &'a RuleSet,
        b: RuleBehavior,
        _tool: &dyn Tool,
        names: &[String],
        extra: Option<&str>,
    ) -> impl Iterator<Item = &'a CompiledRule> {
        let mut idx: Vec<usize> = Vec::new();
        for n in names.iter().map(String::as_str).chain(extra) {
            if let Some(v) = set.by_name[bi(b)].get(n) {
                idx.extend(v.iter().copied());
            }
        }
        idx.sort_unstable();
        idx.dedup();
        idx.into_iter().filter_map(|i| set.rules.get(i))
    }

    fn check_name(&self, set: &RuleSet, tool: &dyn Tool, names: &[String], n: &str) -> Finding {
        let name = tool.name();
        // A skill is named without the slash of its slash command, as the Skill tool takes
        // it (and its rules, `skill_pattern`).
        let skill = names.iter().any(|x| x == "Skill");
        let n = if skill {
            n.trim().trim_start_matches('/')
        } else {
            n
        };
        // Claude Code reads `Skill(deploy:*)` as every name starting with `deploy`
        // (`deploy-prod` too): a deny or ask rule reaches that much here as well; an allow
        // keeps the narrower reading.
        let starts_with = |p: &ShellPattern| match p {
            ShellPattern::Prefix(prefix) => n.starts_with(prefix.as_str()),
            _ => false,
        };
        for b in [RuleBehavior::Deny, RuleBehavior::Ask, RuleBehavior::Allow] {
            let wide = skill && b != RuleBehavior::Allow;
            let hit = self.content_rules(set, b, tool, names, None).find(|r| {
                r.shell.as_ref().is_some_and(|p| {
                    p.matches(n) || name_prefix_match(p, n) || (wide && starts_with(p))
                })
            });
            if let Some(r) = hit {
                let rule = Some(r.sourced.clone());
                return match b {
                    RuleBehavior::Deny => Finding::new(
                        Kind::Deny,
                        format!("Permission to use {name} with {n} has been denied."),
                    )
                    .with_rule(rule),
                    RuleBehavior::Ask => Finding::new(
                        Kind::Ask,
                        format!("Permission to use {name} with {n} requires approval."),
                    )
                    .with_rule(rule)
                    .immune(),
                    RuleBehavior::Allow => Finding::new(Kind::Allow, "").with_rule(rule),
                };
            }
        }
        Finding::new(Kind::Passthrough, "")
    }

    fn check_url(&self, set: &RuleSet, tool: &dyn Tool, names: &[String], url: &str) -> Finding {
        let name = tool.name();
        let host = url_host(url);
        for b in [RuleBehavior::Deny, RuleBehavior::Ask, RuleBehavior::Allow] {
            let hit =
                self.content_rules(set, b, tool, names, None)
                    .find(|r| match (&r.domain, &host) {
                        (Some(d), Some(h)) => d.matches(h),
                        // A URL we cannot read is denied by any domain deny rule.
                        (Some(_), None) => b == RuleBehavior::Deny,
                        _ => false,
                    });
            if let Some(r) = hit {
                let rule = Some(r.sourced.clone());
                let shown = host.clone().unwrap_or_else(|| url.to_owned());
                return match b {
                    RuleBehavior::Deny => Finding::new(
                        Kind::Deny,
                        format!("Permission to use {name} for {shown} has been denied."),
                    )
                    .with_rule(rule),
                    RuleBehavior::Ask => Finding::new(
                        Kind::Ask,
                        format!("Permission to fetch from {shown} requires approval."),
                    )
                    .with_rule(rule)
                    .immune(),
                    RuleBehavior::Allow => Finding::new(Kind::Allow, "").with_rule(rule),
                };
            }
        }
        let mut f = Finding::new(
            Kind::Passthrough,
            match &host {
                Some(h) => format!(
                    "Claude requested permissions to use {name} on {h}, but you haven't granted it yet."
                ),
                None => format!(
                    "Claude requested permissions to use {name} on {url}, which is not a valid http(s) URL."
                ),
            },
        );
        if let Some(h) = host {
            f.suggestions.push(PermissionUpdate::AddRules {
                rules: vec![RuleValue {
                    tool_name: name.to_owned(),
                    rule_content: Some(format!("domain:{h}")),
                }],
                behavior: RuleBehavior::Allow,
                destination: UpdateDestination::LocalSettings,
            });
        }
        f
    }

    fn path_rule(
        &self,
        set: &RuleSet,
        fam_edit: bool,
        b: RuleBehavior,
        path: &Path,
        resolved: &Path,
        both: bool,
    ) -> Option<SourcedRule> {
        let rs = if fam_edit {
            &set.edit[bi(b)]
        } else {
            &set.read[bi(b)]
        };
        if rs.is_empty() {
            return None;
        }
        let a = rs.matching(path);
        if both {
            let r = if resolved == path {
                a
            } else {
                rs.matching(resolved)
            };
            match (a, r) {
                (Some(i), Some(_)) => set.sourced(i),
                _ => None,
            }
        } else {
            a.or_else(|| {
                if resolved == path {
                    None
                } else {
                    rs.matching(resolved)
                }
            })
            .and_then(|i| set.sourced(i))
        }
    }

    /// Whether the file `path` names (`resolved`, its links followed) is inside a working
    /// directory (or where its links lead). What is touched is the resolved file, so a path
    /// spelled through a link to the project (a symlinked cwd, `/tmp` on macOS) is inside,
    /// and a path spelled inside whose links lead out is not.
    fn inside_working_dirs(&self, resolved: &Path, ctx: &ToolUseContext) -> bool {
        ctx.working_directories().iter().any(|d| {
            let d = normalize_lexically(d);
            // Cheap first: a resolved path under the lexical directory needs no syscall.
            resolved.starts_with(&d) || resolved.starts_with(resolve_symlinks(&d))
        })
    }

    /// `why` (the question about writing a path whose links lead to `resolved`), naming the
    /// link's target and what protects it when the question names another path: approving
    /// one protected path must not approve another unseen (`.vscode/settings.json` a link
    /// to `.git/config`, `.claude/commands/x.md` a link to `.claude/settings.json`).
    fn naming_link_target(&self, why: String, resolved: &Path) -> String {
        let shown = resolved.display().to_string();
        // The question names the target already (`write to TARGET, which …`): no link, or
        // only the target is protected.
        if why.contains(&format!("{shown}, ")) {
            return why;
        }
        let what = if self
            .roots
            .settings_file_reason(resolved, resolved)
            .is_some()
        {
            Some("is a settings file of this session".to_owned())
        } else {
            crate::path::protected_kind(resolved)
        };
        match what {
            Some(what) => format!("{why} It is a link to {shown}, which {what}."),
            None => format!("{why} It is a link to {shown}."),
        }
    }

    /// What in `path` (or `resolved`, where its links lead) a Windows file system would read
    /// as another name ([`suspicious_windows_pattern`]), judged on the part below the working
    /// directory it is in: a project whose own directory is `proj~1` (a Bazel output tree) is
    /// not asked about for every file. A read is judged only when the path exists: an alias
    /// that is one exists (on a FAT volume `GIT~1` is there when `.git` is), and a word a
    /// command may read as a path (`git diff HEAD~1`) is no alias when no such file is.
    fn windows_alias(
        &self,
        path: &Path,
        resolved: &Path,
        write: bool,
        ctx: &ToolUseContext,
    ) -> Option<&'static str> {
        if !write && std::fs::symlink_metadata(path).is_err() {
            return None;
        }
        let dirs: Vec<PathBuf> = ctx
            .working_directories()
            .iter()
            .flat_map(|d| {
                let d = normalize_lexically(d);
                let r = resolve_symlinks(&d);
                [d, r]
            })
            .collect();
        let below = |p: &Path| -> PathBuf {
            dirs.iter()
                .filter_map(|d| p.strip_prefix(d).ok())
                .min_by_key(|rest| rest.as_os_str().len())
                .map_or_else(|| p.to_path_buf(), Path::to_path_buf)
        };
        suspicious_windows_pattern(&below(path), write)
            .or_else(|| suspicious_windows_pattern(&below(resolved), write))
    }

    /// The read or write check for one path (Claude Code's `filesystem.ts` order).
    fn check_path(
        &self,
        set: &RuleSet,
        path: &Path,
        access: FileAccess,
        ctx: &ToolUseContext,
    ) -> Finding {
        let resolved = resolve_symlinks(path);
        let shown = path.display();
        // In a question: the path and, when its links lead elsewhere, where they lead
        // (approving `notes.txt` must not hand over the `~/.ssh/id_rsa` it links to unseen).
        let asked = shown_with_link_target(path, &resolved);
        let mode = ctx.permission().mode;
        match access {
            FileAccess::Read => {
                if let Some(r) =
                    self.path_rule(set, false, RuleBehavior::Deny, path, &resolved, false)
                {
                    return Finding::new(
                        Kind::Deny,
                        format!("Permission to read {shown} has been denied."),
                    )
                    .with_rule(Some(r));
                }
                if let Some(r) =
                    self.path_rule(set, false, RuleBehavior::Ask, path, &resolved, false)
                {
                    return Finding::new(
                        Kind::Ask,
                        format!("Reading {asked} requires approval (ask rule)."),
                    )
                    .with_rule(Some(r))
                    .immune();
                }
                // Blocked reads outside the working directories: a file tool is denied them
                // (`check_subject`); a shell command that reads one is asked about in every
                // mode, no allow rule (nor an Edit rule's read) settling it.
                if self.read_blocked(path, &resolved, ctx) {
                    return self.read_block_ask(path, &resolved, FileAccess::Read);
                }
                if let Some(what) = self.windows_alias(path, &resolved, false, ctx) {
                    // Asked even in bypass mode (Claude Code's read check lets bypass through):
                    // on a FAT volume `cat ENV~1` or `.env.` reads the `.env` a deny rule names.
                    return Finding::new(
                        Kind::Ask,
                        format!("Claude requested permissions to read from {asked}, which has {what}: it needs manual approval."),
                    )
                    .reason(DecisionReason::SafetyCheck {
                        reason: format!("the path has {what}"),
                    })
                    .immune();
                }
                // Edit permission implies read, if the write check allows: an `Edit(~/**)`
                // allow reads no file whose write would still be asked about (a protected
                // file, an Edit ask or deny rule).
                if self
                    .path_rule(set, true, RuleBehavior::Allow, path, &resolved, true)
                    .is_some()
                {
                    let write = self.check_path(set, path, FileAccess::Write, ctx);
                    if write.kind == Kind::Allow {
                        return write;
                    }
                }
                if self.inside_working_dirs(&resolved, ctx) {
                    return Finding::new(Kind::Allow, "").reason(DecisionReason::WorkingDir {
                        reason: "inside the working directories".into(),
                    });
                }
                if inside_results_dir(path, &resolved, ctx) {
                    return Finding::new(Kind::Allow, "").reason(DecisionReason::Other {
                        reason:
                            "a tool result saved in a results directory of this project's sessions"
                                .into(),
                    });
                }
                if let Some(r) =
                    self.path_rule(set, false, RuleBehavior::Allow, path, &resolved, true)
                {
                    return Finding::new(Kind::Allow, "").with_rule(Some(r));
                }
                let mut f = Finding::new(
                    Kind::Ask,
                    format!("Claude requested permissions to read from {asked}, which is outside the working directories."),
                )
                .reason(DecisionReason::WorkingDir { reason: format!("{asked} is outside the working directories") });
                // What allows this read again: a session Read rule for the directory (the
                // subject itself when it is one: Grep and Glob search directories), and the
                // directory as a working directory, unless it is `/` or the home directory.
                f.suggestions.extend(self.session_grant("Read", path, ctx));
                let dir = if path.is_dir() {
                    path
                } else {
                    path.parent().unwrap_or(path)
                };
                if !self.too_wide_to_grant(dir, ctx) {
                    f.suggestions.push(PermissionUpdate::AddDirectories {
                        directories: vec![dir.display().to_string()],
                        destination: UpdateDestination::Session,
                    });
                }
                f
            }
            FileAccess::Write => {
                if let Some(r) =
                    self.path_rule(set, true, RuleBehavior::Deny, path, &resolved, false)
                {
                    return Finding::new(
                        Kind::Deny,
                        format!("Permission to edit {shown} has been denied."),
                    )
                    .with_rule(Some(r));
                }
                if let Some(r) =
                    self.path_rule(set, false, RuleBehavior::Deny, path, &resolved, false)
                {
                    return Finding::new(
                        Kind::Deny,
                        format!(
                            "Permission to edit {shown} has been denied (reading it is denied)."
                        ),
                    )
                    .with_rule(Some(r));
                }
                if let Some(why) = self
                    .windows_alias(path, &resolved, true, ctx)
                    .map(|what| {
                        format!("Claude requested permissions to write to {shown}, which has {what}: it needs manual approval.")
                    })
                    .or_else(|| protected_reason(path))
                    .or_else(|| protected_reason(&resolved))
                    .or_else(|| self.roots.settings_file_reason(path, &resolved))
                    .or_else(|| self.roots.config_dir_reason(path, &resolved))
                {
                    let why = self.naming_link_target(why, &resolved);
                    return Finding::new(Kind::Ask, why.clone())
                        .reason(DecisionReason::SafetyCheck { reason: why })
                        .immune();
                }
                if let Some(r) =
                    self.path_rule(set, true, RuleBehavior::Ask, path, &resolved, false)
                {
                    return Finding::new(
                        Kind::Ask,
                        format!("Editing {asked} requires approval (ask rule)."),
                    )
                    .with_rule(Some(r))
                    .immune();
                }
                let inside = self.inside_working_dirs(&resolved, ctx);
                if mode == PermissionMode::AcceptEdits && inside {
                    return Finding::new(Kind::Allow, "").reason(DecisionReason::Mode { mode });
                }
                if let Some(r) =
                    self.path_rule(set, true, RuleBehavior::Allow, path, &resolved, true)
                {
                    return Finding::new(Kind::Allow, "").with_rule(Some(r));
                }
                if inside {
                    let mut f = Finding::new(
                        Kind::Ask,
                        format!(
                            "Claude requested permissions to write to {shown}, but you haven't granted it yet."
                        ),
                    );
                    f.suggestions.push(PermissionUpdate::SetMode {
                        mode: PermissionMode::AcceptEdits,
                        destination: UpdateDestination::Session,
                    });
                    return f;
                }
                let mut f = Finding::new(
                    Kind::Ask,
                    format!("Claude requested permissions to write to {asked}, which is outside the working directories."),
                )
                .reason(DecisionReason::WorkingDir { reason: format!("{asked} is outside the working directories") });
                // acceptEdits would not allow a write outside the working directories: an
                // Edit rule for the directory does (nothing when it is `/` or the home).
                f.suggestions.extend(self.session_grant("Edit", path, ctx));
                f
            }
        }
    }

    /// The path constraint for a path a shell command touches: deny rules, ask rules,
    /// protected paths (writes), outside the working directories. `None` when nothing objects
    /// (unlike [`check_path`], a write inside the working directories needs no Edit allow).
    fn path_constraint(
        &self,
        set: &RuleSet,
        path: &Path,
        use_: PathUse,
        ctx: &ToolUseContext,
    ) -> Option<Finding> {
        let access = if use_ == PathUse::Write {
            // Devices that are no file (`curl -o /dev/null`).
            if matches!(path.to_str(), Some("/dev/null" | "/dev/tty")) {
                return None;
            }
            FileAccess::Write
        } else {
            // Devices that hold no file's contents (`diff /dev/null new.rs`, `head -c 16
            // /dev/urandom`): nothing to check, and no grant of `/dev` to suggest.
            if matches!(
                path.to_str(),
                Some("/dev/null" | "/dev/zero" | "/dev/random" | "/dev/urandom")
            ) {
                return None;
            }
            FileAccess::Read
        };
        let f = self.check_path(set, path, access, ctx);
        // With reads outside blocked, a path outside written is asked about as one read (the
        // read check asked already): what a command writes there it may read there too,
        // whatever allows the write.
        let settled = f.kind == Kind::Deny || (f.kind == Kind::Ask && f.immune);
        if !settled
            && access == FileAccess::Write
            && ctx.permission().block_reads_outside_working_dirs
        {
            let resolved = resolve_symlinks(path);
            if self.read_blocked(path, &resolved, ctx) {
                return Some(self.read_block_ask(path, &resolved, access));
            }
        }
        match f.kind {
            Kind::Deny => Some(f),
            Kind::Ask if f.immune => Some(f),
            Kind::Allow => None,
            _ => {
                let resolved = resolve_symlinks(path);
                if self.inside_working_dirs(&resolved, ctx) {
                    None
                } else {
                    Some(f)
                }
            }
        }
    }

    // ----- shell commands -----

    fn shell_rule(
        &self,
        set: &RuleSet,
        b: RuleBehavior,
        _tool: &dyn Tool,
        names: &[String],
        cands: &[String],
        appended: bool,
    ) -> Option<SourcedRule> {
        let extra = if names.iter().any(|n| n == "PowerShell") {
            None
        } else {
            Some("Bash")
        };
        let mut idx: Vec<usize> = Vec::new();
        for n in names.iter().map(String::as_str).chain(extra) {
            if let Some(ix) = set.shell_index[bi(b)].get(n) {
                idx.extend(&ix.other);
                for c in cands {
                    if let Some(v) = ix.by_first.get(first_word(c)) {
                        idx.extend(v);
                    }
                }
            }
        }
        idx.sort_unstable();
        idx.dedup();
        idx.into_iter()
            .filter_map(|i| set.rules.get(i))
            .find(|r| {
                r.shell.as_ref().is_some_and(|p| {
                    (!appended || p.accepts_appended_args()) && cands.iter().any(|c| p.matches(c))
                })
            })
            .map(|r| r.sourced.clone())
    }

    fn resolve_arg(&self, value: &str, sub_cwd: Option<&str>, ctx: &ToolUseContext) -> PathBuf {
        let home = ctx.home().or(self.roots.home.as_deref());
        // Where the command runs: the cwd, or where Bash runs it when the cwd was removed.
        let cwd = ctx.effective_cwd();
        let base = match sub_cwd {
            Some(d) => tool_core::expand_path(d, &cwd, home),
            None => cwd.into_owned(),
        };
        tool_core::expand_path(value, &base, home)
    }

    /// The path a shell argument names, lexically normalised, and also the path the kernel
    /// would use when it differs (`..` after a symlinked directory goes to the link target's
    /// parent, not back where it came from).
    fn resolve_arg_all(
        &self,
        value: &str,
        sub_cwd: Option<&str>,
        ctx: &ToolUseContext,
    ) -> Vec<PathBuf> {
        let lexical = self.resolve_arg(value, sub_cwd, ctx);
        let mut out = vec![lexical.clone()];
        let needs_physical = value.split('/').any(|c| c == "..")
            || sub_cwd.is_some_and(|d| d.split('/').any(|c| c == ".."));
        if needs_physical {
            let home = ctx.home().or(self.roots.home.as_deref());
            let tilde = |v: &str, base: &Path| -> PathBuf {
                match (v.strip_prefix('~'), home) {
                    (Some(""), Some(h)) => h.to_path_buf(),
                    (Some(rest), Some(h)) if rest.starts_with('/') => {
                        h.join(rest.trim_start_matches('/'))
                    }
                    _ => base.join(v),
                }
            };
            let cwd = ctx.effective_cwd();
            let base = match sub_cwd {
                Some(d) => physical_path(&tilde(d, &cwd)),
                None => cwd.into_owned(),
            };
            let physical = physical_path(&tilde(value, &base));
            if physical != lexical {
                out.push(physical);
            }
        }
        out
    }

    /// The home directory a `~` in a command expands to, if one is known: the context's,
    /// the `HOME` the session's commands run with. Not the engine's, which is where the
    /// configuration was read from before the settings' `env` applied (an `env` that empties
    /// `HOME` leaves the context none). An empty one is none (bash expands `~` to the empty
    /// string then, and to the password database's home when `HOME` is unset).
    fn expansion_home<'a>(&'a self, ctx: &'a ToolUseContext) -> Option<&'a Path> {
        ctx.home().filter(|h| !h.as_os_str().is_empty())
    }

    /// When no home directory is known ([`Self::expansion_home`]) and `value`, run in `cwd`
    /// or one of `others`, starts from a `~` bash expands (`~`, `~/x`, or a relative path
    /// after `cd ~/d`): the value spelled with `$HOME` for that `~` (`$HOME/x`,
    /// `$HOME/d/x`), a path the shell computes, which cannot be checked here. `None` when a
    /// home is known or no such `~` is involved.
    fn tilde_without_home(
        &self,
        value: &str,
        cwd: &Option<String>,
        others: &[Option<String>],
        ctx: &ToolUseContext,
    ) -> Option<String> {
        if self.expansion_home(ctx).is_some() {
            return None;
        }
        let home_form = |v: &str| v == "~" || v.starts_with("~/");
        if home_form(value) {
            return Some(format!("$HOME{}", &value[1..]));
        }
        if value.starts_with('/') {
            return None;
        }
        std::iter::once(cwd)
            .chain(others)
            .filter_map(|d| d.as_deref())
            .find(|d| home_form(d))
            .map(|d| format!("$HOME{}/{value}", &d[1..]))
    }

    /// Every path `value` may name, run in `cwd` or one of `others`; `None` when it is relative
    /// and one of them is [`UNKNOWN_DIR`], or when it starts from a `~` and no home directory
    /// is known ([`Self::tilde_without_home`]).
    fn resolve_in_dirs(
        &self,
        value: &str,
        cwd: &Option<String>,
        others: &[Option<String>],
        ctx: &ToolUseContext,
    ) -> Option<Vec<PathBuf>> {
        if self.tilde_without_home(value, cwd, others, ctx).is_some() {
            return None;
        }
        let mut out = Vec::new();
        for dir in std::iter::once(cwd).chain(others) {
            if dir.as_deref() == Some(UNKNOWN_DIR) && !value.starts_with(['/', '~']) {
                return None;
            }
            for p in self.resolve_arg_all(value, dir.as_deref(), ctx) {
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
        Some(out)
    }

    /// What the startup file a nested shell reads before its script (`bash --rcfile F`,
    /// `BASH_ENV=F bash -c …`) makes of the call: checked as a file read, asked about when it
    /// cannot be worked out.
    fn startup_files_read(
        &self,
        set: &RuleSet,
        sub: &SimpleCommand,
        words: &[Word],
        ctx: &ToolUseContext,
        analysis: &Analysis,
    ) -> Option<Finding> {
        let name = basename(words.first()?.value.as_deref()?);
        if !NESTED_SHELL_NAMES.contains(&name) {
            return None;
        }
        let files = startup_files(words, sub, analysis)
            .into_iter()
            .map(|f| (f, PathUse::Read))
            .collect();
        self.files_named(set, sub, files, "runs a shell with a startup file", ctx)
    }

    /// The configuration files a git command prints values from ([`git_config_files`]),
    /// held against the Read deny and ask rules: `git remote -v` shows a token in a
    /// remote's URL as `cat .git/config` does. Only the rules: reading git's own
    /// configuration outside the working directories asks nothing by itself, unless the
    /// settings block reads outside them (`blockReadsOutsideWorkingDirectories`: the user's
    /// `~/.gitconfig` printed is asked about as a `cat` of it is). The repository's own
    /// files are found from where the command runs.
    fn git_config_read(
        &self,
        set: &RuleSet,
        sub: &SimpleCommand,
        words: &[Word],
        ctx: &ToolUseContext,
        git_env: bool,
    ) -> Option<Finding> {
        if !self.unseen_paths_ask(set, PathUse::Read, ctx) {
            return None;
        }
        let text = sub.raw_text();
        let home = ctx.home().or(self.roots.home.as_deref());
        let files = match git_config_files(words)? {
            // `GIT_CONFIG_GLOBAL=F`, `GIT_DIR=D` on the line: other files.
            GitConfigRead::Files(_) if git_env => {
                Err("a GIT_ variable on the line chooses them".to_owned())
            }
            GitConfigRead::Files(files) => Ok(files),
            GitConfigRead::Unknown(why) => Err(why),
        };
        let files = match files {
            Ok(files) => files,
            Err(why) => {
                let f = self.unchecked_path(
                    set,
                    PathUse::Read,
                    format!(
                        "`{text}` prints configuration from files that cannot be checked: {why}."
                    ),
                    ctx,
                );
                return Some(f.sub(text));
            }
        };
        let mut paths = Vec::new();
        for (file, only_if_there) in files {
            let found: Vec<PathBuf> = if let Some(inside) = file.strip_prefix(".git/") {
                let dirs = self.resolve_in_dirs(".", &sub.cwd, &sub.other_cwds, ctx);
                dirs.unwrap_or_default()
                    .into_iter()
                    .map(|dir| {
                        let root = tool_core::git_root(&dir).map_or(dir.clone(), Path::to_path_buf);
                        root.join(".git").join(inside)
                    })
                    .collect()
            } else if let Some(rest) = file.strip_prefix("~/") {
                home.map(|h| h.join(rest)).into_iter().collect()
            } else {
                self.resolve_in_dirs(&file, &sub.cwd, &sub.other_cwds, ctx)
                    .unwrap_or_default()
            };
            // git skips a default file that is not there.
            paths.extend(found.into_iter().filter(|p| !only_if_there || p.exists()));
        }
        let mut worst: Option<Finding> = None;
        for p in paths {
            let f = self.check_path(set, &p, FileAccess::Read, ctx);
            if f.kind == Kind::Deny || (f.kind == Kind::Ask && f.immune) {
                worst = Some(pick(worst, f.sub(text.clone())));
            }
        }
        worst
    }

    /// What git reads for the repository it finds besides the directory holding that
    /// repository's `.git` ([`crate::git_config::repository_reads`]), each a path read: a
    /// git directory reached through a gitfile, a `.git` link or a `commondir`, object
    /// stores elsewhere, a work tree its own configuration moves (`core.worktree`); for a
    /// command that prints configuration values ([`git_config_files`] naming the
    /// repository's own files), each file that configuration includes. Outside the working
    /// directories it asks, under a Read deny rule it is denied, as `cat` of it would be. A
    /// linked work tree's or submodule's git directory (and common directory) that points
    /// back at it is judged by the Read rules only. Where what git reads cannot be known
    /// (the repository's files cannot be read, the directory is not known) it asks, naming
    /// why, before any allow rule; an `alternates` file that cannot be read asks whatever
    /// the rules and the mode say. Not for git told to work elsewhere (`-C`, `--git-dir`,
    /// a `GIT_` variable: other checks ask).
    fn git_repository_reads(
        &self,
        set: &RuleSet,
        sub: &SimpleCommand,
        words: &[Word],
        ctx: &ToolUseContext,
        git_env: bool,
    ) -> Option<Finding> {
        if git_sent_elsewhere(sub, words, git_env) {
            return None;
        }
        let prints_config = matches!(
            git_config_files(words),
            Some(GitConfigRead::Files(files)) if files.iter().any(|(f, _)| f.starts_with(".git/"))
        );
        let home = ctx.home().or(self.roots.home.as_deref());
        let text = sub.raw_text();
        let Some(dirs) = self.resolve_in_dirs(".", &sub.cwd, &sub.other_cwds, ctx) else {
            let why = format!(
                "`{text}` needs approval: it runs in a directory not known here, so what git reads outside its repository cannot be checked."
            );
            return Some(Finding::new(Kind::Ask, why).sub(text.clone()));
        };
        let mut worst: Option<Finding> = None;
        let mut seen: Vec<PathBuf> = Vec::new();
        for d in dirs.iter().flat_map(|d| [d.clone(), resolve_symlinks(d)]) {
            if seen.contains(&d) {
                continue;
            }
            seen.push(d.clone());
            let (outside, included) = match crate::git_config::repository_reads(&d, home) {
                Ok(found) => found,
                Err(why) => {
                    let f = Finding::new(Kind::Ask, format!("`{text}` needs approval: {why}."));
                    worst = Some(pick(worst, f.sub(text.clone())));
                    continue;
                }
            };
            for o in outside.iter().filter(|o| o.unknown) {
                let f = Finding::safety_ask(
                    format!(
                        "`{text}` makes git read what {} names, which cannot be checked: {}",
                        o.path.display(),
                        o.why
                    ),
                    text.clone(),
                );
                worst = Some(pick(worst, f));
            }
            let outside = outside.into_iter().filter(|o| !o.unknown);
            let included = included.into_iter().map(|p| {
                (
                    p.clone(),
                    format!(
                        "the repository's configuration includes {}, whose values it prints",
                        p.display()
                    ),
                    false,
                )
            });
            let outside = outside.into_iter().map(|o| (o.path, o.why, o.linked));
            let reads: Vec<(PathBuf, String, bool)> = if prints_config {
                outside.chain(included).collect()
            } else {
                outside.collect()
            };
            for (path, why, linked) in reads {
                let f = if linked {
                    let f = self.check_path(set, &path, FileAccess::Read, ctx);
                    (f.kind == Kind::Deny || (f.kind == Kind::Ask && f.immune)).then_some(f)
                } else {
                    self.path_constraint(set, &path, PathUse::Read, ctx)
                };
                if let Some(mut f) = f {
                    f.message = format!("`{text}` reads {}: {why}. {}", path.display(), f.message);
                    worst = Some(pick(worst, f.sub(text.clone())));
                }
            }
        }
        worst
    }

    /// Checks the files a command names for itself, not among its operands (a shell's
    /// startup file, a tracer's output file): each as the path it reads or writes; one that
    /// cannot be worked out (`None`, a relative one after an unknown `cd`, `~` without a
    /// home) is asked about as a path that cannot be checked, `what` saying what names it.
    fn files_named(
        &self,
        set: &RuleSet,
        sub: &SimpleCommand,
        files: Vec<(Option<String>, PathUse)>,
        what: &str,
        ctx: &ToolUseContext,
    ) -> Option<Finding> {
        let text = sub.raw_text();
        let home = ctx.home().or(self.roots.home.as_deref());
        let mut worst: Option<Finding> = None;
        for (file, use_) in files {
            let resolved = file.as_deref().and_then(|v| {
                let v = match (v.strip_prefix("~/"), home) {
                    (Some(rest), Some(h)) => h.join(rest).display().to_string(),
                    (Some(_), None) => return None,
                    _ => v.to_owned(),
                };
                self.resolve_in_dirs(&v, &sub.cwd, &sub.other_cwds, ctx)
            });
            let Some(paths) = resolved else {
                let f = self.unchecked_path(
                    set,
                    use_,
                    format!("`{text}` {what} that cannot be checked."),
                    ctx,
                );
                worst = Some(pick(worst, f.sub(text.clone())));
                continue;
            };
            for p in paths {
                if let Some(f) = self.path_constraint(set, &p, use_, ctx) {
                    worst = Some(pick(worst, f.sub(text.clone())));
                }
            }
        }
        worst
    }

    /// Path constraints of one simple command (its path arguments).
    /// `analysis`: the whole command's (`RIPGREP_CONFIG_PATH` set somewhere: ripgrep's
    /// filters cannot be relied on; a `GIT_` variable: git may work in another repository).
    fn subcommand_paths(
        &self,
        set: &RuleSet,
        sub: &SimpleCommand,
        words: &[Word],
        ctx: &ToolUseContext,
        analysis: &Analysis,
    ) -> Option<Finding> {
        let rg_config = analysis.rg_config;
        let git_env = analysis.git_env || analysis.hidden_assignment;
        let name = basename(words.first()?.value.as_deref()?);
        let option_glob = self.option_like_glob(sub, words, ctx, analysis);
        let mut option_glob = match self.git_content_read(set, sub, name, words, ctx, git_env) {
            Some(f) => Some(pick(option_glob, f)),
            None => option_glob,
        };
        if let Some(f) = self.startup_files_read(set, sub, words, ctx, analysis) {
            option_glob = Some(pick(option_glob, f));
        }
        if name == "git"
            && let Some(f) = self.git_config_read(set, sub, words, ctx, git_env)
        {
            option_glob = Some(pick(option_glob, f));
        }
        if name == "git"
            && let Some(f) = self.git_repository_reads(set, sub, words, ctx, git_env)
        {
            option_glob = Some(pick(option_glob, f));
        }
        // A tracer's or wrapper's own files (`strace -o F`, `valgrind --log-file=F`,
        // `fakeroot -s F`), which its command's reading leaves out.
        let own = wrapper_files(name, words);
        if !own.is_empty()
            && let Some(f) =
                self.files_named(set, sub, own, &format!("names a file of `{name}`"), ctx)
        {
            option_glob = Some(pick(option_glob, f));
        }
        let Some(use_) = path_use(name, words) else {
            return option_glob;
        };
        let expanded = brace_expanded(words);
        let words = &expanded[..];
        let text = sub.raw_text();
        // Commands whose files each have their own use (`curl -o OUT -d @IN`).
        let file_uses = file_uses(name, words);
        let mut worst: Option<Finding> = option_glob;
        if sub.appended_args || reads_listed_files(name, words) {
            // Its paths arrive on stdin or in a list file: never auto-allowed (read-only and
            // acceptEdits skip it), but an explicit prefix rule may allow it, unless path rules
            // could be dodged or reads outside the working directories are blocked.
            let unchecked = self.unseen_paths_ask(set, use_, ctx).then(|| {
                self.unchecked_path(
                    set,
                    use_,
                    format!("`{text}` gets its paths from its input, which cannot be checked."),
                    ctx,
                )
                .sub(text.clone())
            });
            // The words it is given are still checked, for what they are whatever is appended
            // (`xargs rm -rf ~`, `xargs tee .git/hooks/x`, `xargs curl -o F`; the words around
            // a placeholder filled in place, `find -exec cp {} DEST \;`): only which operand
            // is a copy's destination changes (below).
            worst = unchecked.map_or(worst.clone(), |f| Some(pick(worst, f)));
        }
        // A configuration the command reads from its environment, set on its line, may name
        // other files (`TAR_OPTIONS="-C .git/hooks" tar xf a.tar`).
        let configured = config_variables(name).iter().any(|v| {
            // On the command, before it in the line (`export V=…`, `V+=…`), or in the session.
            let assigns = |w: &Word| {
                w.raw
                    .strip_prefix(v.name)
                    .is_some_and(|rest| rest.starts_with('=') || rest.starts_with("+="))
            };
            sub.assignments.iter().any(|a| a.name == v.name)
                || analysis.assigned.iter().any(|a| a.name == v.name)
                || analysis
                    .commands
                    .iter()
                    .any(|c| c.words.iter().any(assigns))
                || (v.from_session && std::env::var_os(v.name).is_some_and(|s| !s.is_empty()))
        });
        if file_uses.is_some() && (configured || analysis.hidden_assignment) {
            let f = self.unchecked_path(
                set,
                PathUse::Write,
                format!("`{text}` runs with a configuration from its environment, which may name files that cannot be checked."),
                ctx,
            );
            worst = Some(pick(worst, f.sub(text.clone())));
        }
        // Its paths are still checked: a deny stays a deny.
        // An awk program that may open files itself: they cannot be checked. Asked only
        // when a path rule could be dodged or reads outside the working directories are
        // blocked (a comparison reads like a redirection).
        if name == "awk"
            && (self.unseen_paths_ask(set, PathUse::Write, ctx)
                || self.unseen_paths_ask(set, PathUse::Read, ctx))
            && awk_may_use_other_files(words)
        {
            let f = self.unchecked_path(
                set,
                PathUse::Write,
                format!("`{text}` runs an awk program that may open files it names itself, which cannot be checked."),
                ctx,
            );
            worst = Some(f.sub(text.clone()));
        }
        // A sed script that names files (`w out`, `r /etc/hostname`): each is checked below
        // as the path it is, written or read; the command is asked about for what it is
        // where no path objects more (bypass mode lets it run).
        if matches!(name, "sed" | "gsed")
            && let Some(note) = sed_script_note(words)
        {
            let f = Finding::new(
                Kind::Ask,
                format!("`{text}` runs {note}, which needs approval."),
            )
            .sub(text.clone());
            worst = Some(pick(worst, f));
        }
        // A `~` bash does not expand names a file of that name ([`Word::path_value`]), for
        // every use of the paths below (a destination joined with names, too).
        // A word that looks like an assignment has its `~` after the `=` expanded by bash
        // (`cat a=~/x` reads `a=$HOME/x`).
        let home = ctx.home().or(self.roots.home.as_deref());
        let args: Vec<Word> = path_args(name, words)
            .into_iter()
            .map(|w| match (w.assignment_tilde(), w.path_value()) {
                (Some((before, after)), _) => {
                    let value = home.map(|h| format!("{before}{}{after}", h.display()));
                    Word { value, ..w }
                }
                (None, Some(std::borrow::Cow::Owned(v))) => Word {
                    raw: v.clone(),
                    value: Some(v),
                    ..w
                },
                _ => w,
            })
            .collect();
        let uses: Vec<PathUse> = file_uses
            .as_ref()
            .map(|f| f.files.iter().map(|(_, u)| *u).collect())
            .unwrap_or_default();
        // The reference file of `touch -r F` (`chmod --reference=F`, ...) is only read.
        let reference_reads = read_path_args(name, words);
        // A walker that lists trees through their links (`find -L`, `ls -LR`, `du -L`)
        // lists what a link leads to: a directory outside the working directories too.
        let listed_through_links = || {
            lists_trees_through_links(name, words).then_some(crate::bash::commands::TreeRead {
                follow_links: true,
                rg_filters: None,
                defaults_to_cwd: false,
                direct_only: false,
                names_only: true,
            })
        };
        let tree = reads_trees(name, words)
            .or_else(listed_through_links)
            .map(|mut t| {
                // Its filters may be changed before it runs: none are taken into account.
                if rg_config || line_writes_before(analysis, sub, RG_IGNORE_NAMES) {
                    t.rg_filters = None;
                }
                // Nor whether it follows links (`--follow` in the file).
                if rg_config && name == "rg" {
                    t.follow_links = true;
                }
                t
            });
        let here = |at: &str| {
            vec![Word {
                raw: at.into(),
                value: Some(at.into()),
                plain: true,
                glob: false,
            }]
        };
        let args: Vec<Word> = if name == "cd" && args.is_empty() {
            here("~")
        } else if !has_path_operands(name, words)
            && (tree.is_some_and(|t| t.defaults_to_cwd) || lists_the_cwd_by_default(name))
            // `cmd | rg x` searches its input (grep -r ignores its input).
            && !(name == "rg" && sub.piped_input)
        {
            // The values of options that name files (`rg -f PATTERNS`) are read too.
            let mut args = args;
            args.extend(here("."));
            args
        } else {
            args
        };
        // The critical directories, their spellings resolved once for every path checked.
        let critical = std::cell::OnceCell::new();
        let critical = || {
            critical.get_or_init(|| {
                let home = ctx.home().or(self.roots.home.as_deref());
                CriticalDirs::new(home, &ctx.working_directories())
            })
        };
        let reading = GlobReading::of(analysis);
        let dotglob = reading.dotglob;
        // Each path once (`cat * * *` lists the same files again), and only so many.
        let mut checked = std::collections::HashSet::new();
        // What earlier commands of the line fill with files not named (`tar -xf a.tar`).
        let filled = std::cell::OnceCell::new();
        // `cp`, `mv`, `ln` into a directory write DEST/<name of each source>: checked too
        // (`mv tmp/ci.json .` replaces ./ci.json, `cp -r other/.git .` writes ./.git). A `cp`
        // into a file only reads its sources, when its command line is understood.
        let dest = destination(name, words);
        // Arguments appended after the words: the last operand written is no destination (one
        // given by `-t DIR` still is).
        let dest = match dest {
            Some(d) if sub.appended_args && !sub.filled_in_place && !d.by_option => None,
            d => d,
        };
        // `ln TARGET` writes `./<name>`: the working directory is its destination.
        let args = match &dest {
            Some(d) if d.here && d.index == args.len() => {
                let mut args = args;
                args.extend(here("."));
                args
            }
            _ => args,
        };
        let dest = dest.filter(|d| d.index < args.len());
        let dest_is_dir = dest.as_ref().is_some_and(|d| {
            let to = &args[d.index];
            d.by_option
                || d.parents
                || d.sources.len() > 1
                || to.glob
                || to.value.as_deref().is_none_or(|v| {
                    v.ends_with('/')
                        || self
                            .resolve_in_dirs(v, &sub.cwd, &sub.other_cwds, ctx)
                            .is_none_or(|paths| paths.iter().any(|p| p.is_dir()))
                })
        });
        let sources_read = !dest_is_dir && dest.as_ref().is_some_and(|d| d.sources_read);
        // A link moved, or copied as a link (`mv d/e/lk d/lk2`, `cp -a lk x`, `rsync -a`,
        // or one inside a tree so moved), leads somewhere from where it lands: a relative
        // target to another place, an absolute one to where it says. What the rest of the
        // line reaches through it (`cp -r d d2 && cp x d2/lk`, where `d2/lk` is no file when
        // the line is checked) is there, checked as a path read and written.
        let rsync_links = name == "rsync" && rsync_copies_links(words);
        if let Some(d) = &dest
            && (name == "mv" || (name == "cp" && copies_links_as_links(words)) || rsync_links)
        {
            let resolve = |w: &Word| {
                w.value
                    .as_deref()
                    .filter(|_| !w.glob)
                    .and_then(|v| self.resolve_in_dirs(v, &sub.cwd, &sub.other_cwds, ctx))
                    .unwrap_or_default()
            };
            for to in resolve(&args[d.index]) {
                for &i in &d.sources {
                    // `cp -a src/. dest` copies what is in `src` into `dest`.
                    let contents = args[i]
                        .value
                        .as_deref()
                        .is_some_and(|v| v == "." || v.ends_with("/."));
                    for src in resolve(&args[i]) {
                        let landing = match src.file_name() {
                            Some(base) if dest_is_dir && !contents => to.join(base),
                            _ => to.clone(),
                        };
                        // rsync puts a source named without `/` at DEST/<name>, whatever
                        // DEST is: both places are looked at.
                        let mut landings = vec![landing];
                        if rsync_links
                            && let Some(base) = src.file_name()
                            && !args[i].raw.ends_with('/')
                        {
                            landings.push(to.join(base));
                        }
                        for landing in landings {
                            for (link, target) in link_targets(&src, &landing) {
                                for use_ in [PathUse::Read, PathUse::Write] {
                                    if let Some(mut f) =
                                        self.path_constraint(set, &target, use_, ctx)
                                    {
                                        f.message = format!(
                                            "`{text}` puts the symbolic link {} there, which leads to {}: what the rest of the line reaches through it is there. {}",
                                            link.display(),
                                            target.display(),
                                            f.message
                                        );
                                        worst = Some(pick(worst, f.sub(text.clone())));
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        let listed = args.len();
        let mirror_deletes = deletes_in_destination(name, words);
        let mut args = args;
        // Trees written below the destination: (a source directory, where its entries land).
        let mut trees_written: Vec<(PathBuf, String)> = Vec::new();
        if let Some(d) = &dest {
            let (written, trees) = self.written_into(
                d,
                dest_is_dir,
                &args,
                words,
                name,
                sub,
                ctx,
                name == "mv" || (matches!(name, "cp" | "rsync") && tree.is_some()),
                analysis,
            );
            trees_written = trees;
            for into in written {
                args.push(match into {
                    Some(path) => Word {
                        raw: path.clone(),
                        value: Some(path),
                        plain: true,
                        glob: false,
                    },
                    // What lands there cannot be worked out: unchecked (asks).
                    None => Word {
                        raw: format!("what lands in {}", args[d.index].raw),
                        value: None,
                        plain: false,
                        glob: false,
                    },
                });
            }
        }
        // `ln -s TARGET LINK` without `-r`: the kernel resolves a relative TARGET from the
        // link's directory, not from where ln runs. What the link leads to is checked there.
        if let Some(d) = &dest
            && name == "ln"
            && let Some(ln) = link_options(name, words)
            && ln.symbolic
            && !ln.relative
        {
            self.link_targets_from_link_dir(d, ln, &mut args, sub, ctx, analysis);
        }
        // `rsync --delete` empties its destination of what the source lacks: checked as a
        // removal, every operand when an option comes after one (the last may not be the
        // destination).
        let removal_checked = |index: usize| {
            matches!(name, "rm" | "rmdir")
                // `mv`'s sources leave where they were, as removed ones do.
                || (name == "mv"
                    && index < listed
                    && dest.as_ref().is_none_or(|d| d.index != index))
                || (mirror_deletes
                    && index < listed
                    && (dest.as_ref().is_none_or(|d| d.index == index)
                        || options_after_operands(name, words)))
        };
        // Trees removed or changed in place, with everything under them (`rm -r`, `chmod -R`,
        // the sources of `mv`, what `rsync --delete` may delete in its destination).
        let in_place = changes_trees(name, words);
        let tree_changed = |index: usize| {
            index < listed
                && !reference_reads.contains(&index)
                && if dest.as_ref().is_some_and(|d| d.index == index) {
                    mirror_deletes
                } else {
                    in_place
                }
        };
        // Directories taken away whole, with everything under them: removed (`rm -r`,
        // `rmdir`, `find -delete` or `-exec rm` unfiltered, `tar --remove-files`), moved (`mv`'s
        // sources) or emptied of what the source lacks (`rsync --delete`'s destination).
        // One that holds a protected path is asked about as that path would be.
        // (A `find` whose filters rule out every protected name, `-name '*.pyc'`, does not
        // take its roots; one filtered otherwise, `-type f`, may take what they hold.)
        let find_deletion = find_deletion(words);
        let find_deletes = find_deletion
            .as_ref()
            .is_some_and(|d| d.everything || d.names != FindNameFilter::RulesOut);
        // One whose name filters rule out every protected name (`-name main`, `-name
        // '*.pack'`) may still match what a protected directory holds (a branch's ref,
        // git's packs), or remove one with a directory it matches (`-name lib -exec rm -rf`):
        // looked for in the tree.
        // (Not one whose only filter is `-empty`: no content of any file.)
        // What it does to what it finds (deletes, empties, overwrites …), for the messages.
        let find_loss = find_deletion.as_ref().map_or(Loss::Deletes, |d| d.loss);
        let find_names = find_deletion
            .filter(|d| !d.everything && !d.name_tests.is_empty())
            .map(|d| (d.name_tests, d.recursive, d.follows_links, d.roots_follow));
        let takes_away = |index: usize| {
            index < listed
                && match name {
                    "rmdir" => true,
                    "find" => find_deletes,
                    "chmod" | "chown" | "chgrp" => false,
                    _ => tree_changed(index),
                }
        };
        // An operand removed or moved away whole, the directory with everything under it
        // (`rm -r`, `mv`'s sources): one that is `/` or a home is critical. (`rmdir` removes
        // an empty directory only: `rmdir "$PWD"` is no such removal.)
        let removes_whole =
            |index: usize| removal_checked(index) && (tree_changed(index) || name == "mv");
        let changed_how = match name {
            "rm" => "removes everything under",
            "mv" => "moves everything under",
            "rsync" => "may delete anything under",
            _ => "changes everything under",
        };
        for (index, arg) in args.iter().enumerate() {
            // What a sed script file (`-f FILE`), or a script that cannot be read, may name:
            // it may write any file, a protected one too, which bypass mode must still ask
            // about (a safety check); what it may only read is a path that cannot be checked.
            if matches!(name, "sed" | "gsed")
                && let Some(unseen) = sed_unseen(words, arg)
            {
                let reason = unseen.reason;
                let f = if unseen.may_write {
                    Finding::safety_ask(
                        format!(
                            "`{text}` runs {reason}, which cannot be checked: it may write any file, a protected one too."
                        ),
                        text.clone(),
                    )
                } else {
                    self.unchecked_path(
                        set,
                        PathUse::Read,
                        format!("`{text}` runs {reason}, which cannot be checked."),
                        ctx,
                    )
                    .sub(text.clone())
                };
                worst = Some(pick(worst, f));
                continue;
            }
            let written_into = dest.as_ref().is_some_and(|d| d.index == index) || index >= listed;
            let use_ = match uses.get(index) {
                Some(u) => *u,
                None if reference_reads.contains(&index) => PathUse::Read,
                None => use_,
            };
            let use_ = if sources_read && !written_into {
                PathUse::Read
            } else {
                use_
            };
            // The destination's own tree is not read by `cp -r` (rsync's last operand is
            // always its destination).
            let tree = tree.filter(|_| !written_into);
            // A static word, else the words of a static brace expansion (`{.env,x}`; not a
            // placeholder for what lands in a destination, which names no path).
            let braces = || {
                (arg.value.is_none() && index < listed && uses.is_empty())
                    .then(|| expand_braces(&arg.raw))
                    .flatten()
            };
            let values: Vec<(String, bool)> = match (&arg.value, braces()) {
                (Some(v), _) => vec![(v.clone(), arg.glob)],
                (None, Some(list)) => list
                    .into_iter()
                    .flat_map(|v| {
                        let glob = v.contains(['*', '?', '[']);
                        // Whether bash expanded a `~` it starts with is not known here
                        // (`\~/{a,b}` it did not, `{~,x}/y` it did): both are checked.
                        let literal = v.starts_with('~').then(|| (format!("./{v}"), glob));
                        std::iter::once((v, glob)).chain(literal)
                    })
                    .collect(),
                (None, None) => {
                    // Another user's home (`~root`, `~bin/`: `/bin` for that system user),
                    // removed or moved: bash takes it from the password database.
                    if (removes_whole(index) || name == "rmdir") && user_home(&arg.raw).is_some() {
                        let why = format!(
                            "`{text}` would remove the home directory of a user ({}), which may be a critical directory such as /bin or /root",
                            arg.raw
                        );
                        return Some(Finding::safety_ask(why, text));
                    }
                    // What find feeds it (`rm -rf $(find …)`, the `"$d"` of a loop over what
                    // find prints) is checked as `find … -exec` is
                    // ([`Self::removes_what_it_is_fed`]): not also as what a variable set
                    // on this line may name.
                    let removes_tree = removes_whole(index) && !fed_by_find(sub, arg);
                    // Variables the line sets to plain words only (`for d in build dist`,
                    // `X=build`) stand for each of their words: a word with nothing else
                    // that expands is checked as if written (`"$d"/out`), one with more is
                    // computed (`"$HOME/$d"`).
                    let spelled = substituted(&arg.raw, &analysis.values, &sub.set_by_loops);
                    if let Some(words) = spelled
                        .as_ref()
                        .and_then(|ws| ws.iter().map(|w| plain_word(w)).collect::<Option<Vec<_>>>())
                    {
                        // An empty word removes nothing.
                        words.into_iter().filter(|(w, _)| !w.is_empty()).collect()
                    } else {
                        for raw in spelled.unwrap_or_else(|| vec![arg.raw.clone()]) {
                            // A variable the line itself sets otherwise (`x=/; rm -rf $x`,
                            // `for d in *`), removed whole: it may be set to `/` or the home.
                            if removes_tree && let Some(var) = line_variable(&raw, analysis) {
                                let why = format!(
                                    "`{text}` removes what ${{{var}}}, set on this command line, names, which may be a whole directory such as / or the home"
                                );
                                return Some(Finding::safety_ask(why, text));
                            }
                            let message = format!(
                                "`{text}` uses a computed path ({raw}), which cannot be checked."
                            );
                            let f = self.computed_path(set, &raw, use_, removes_tree, message, ctx);
                            worst = Some(pick(worst, f.sub(text.clone())));
                        }
                        continue;
                    }
                }
            };
            for (value, glob) in &values {
                // A `~` with no home directory known: where it leads is the shell's to say
                // (the password database's home, or nothing), a computed path as `$HOME` is.
                if let Some(spelled) =
                    self.tilde_without_home(value, &sub.cwd, &sub.other_cwds, ctx)
                {
                    let message = format!(
                        "`{text}` uses a path under the home directory ({}), which is not known here, so it cannot be checked.",
                        arg.raw
                    );
                    let removes_tree = removes_whole(index);
                    let f = self.computed_path(set, &spelled, use_, removes_tree, message, ctx);
                    worst = Some(pick(worst, f.sub(text.clone())));
                    continue;
                }
                // What it names depends on the shell: not checkable, though its text may
                // still match a rule (checked below too).
                if self.through_proc(value, &sub.cwd, &sub.other_cwds, ctx) {
                    let f = self.unchecked_path(
                        set,
                        use_,
                        format!(
                            "`{text}` uses a path through /proc ({}), which names what the shell sees and cannot be checked.",
                            arg.raw
                        ),
                        ctx,
                    );
                    worst = Some(pick(worst, f.sub(text.clone())));
                }
                let mut paths = Vec::new();
                let Some(resolutions) = self.resolve_in_dirs(value, &sub.cwd, &sub.other_cwds, ctx)
                else {
                    // `.`, `..` or `*` removed whole there (however spelled: `./`, `.//`,
                    // `../..`) may be the home or the project.
                    if removes_whole(index) && names_the_directory_or_above(value) {
                        let why = format!(
                            "`{text}` removes {} after a `cd` to a directory that is not known, which may be a whole directory such as the home or the project",
                            arg.raw
                        );
                        worst = Some(pick(worst, Finding::safety_ask(why, text.clone())));
                        continue;
                    }
                    // A protected name stays protected wherever the shell is (`.git`,
                    // `.bashrc`).
                    let f = self.computed_path(
                        set,
                        &format!("$PWD/{value}"),
                        use_,
                        removes_whole(index),
                        format!(
                            "`{text}` uses a relative path ({}) after a `cd` to a directory that is not known.",
                            arg.raw
                        ),
                        ctx,
                    );
                    worst = Some(pick(worst, f.sub(text.clone())));
                    continue;
                };
                // The directories a glob is matched in: checked as paths, but not changed
                // with everything under them (`mv src/*.rs docs` moves no other file of
                // `src`).
                let mut glob_dirs: Vec<PathBuf> = Vec::new();
                if *glob {
                    match resolutions
                        .iter()
                        .map(|r| expand_glob(r, reading))
                        .collect::<Option<Vec<_>>>()
                        .map(|v| {
                            glob_dirs = v.iter().map(|(d, _)| d.clone()).collect();
                            let mut dirs = v.into_iter();
                            let (dir, mut entries) = dirs.next().unwrap_or_default();
                            for (d, e) in dirs {
                                entries.push(d);
                                entries.extend(e);
                            }
                            (dir, entries)
                        }) {
                        Some((dir, entries)) => {
                            paths.push(dir.clone());
                            if matches!(name, "rm" | "rmdir") {
                                let last = value.rsplit('/').next().unwrap_or("");
                                // A glob that matches every name there (`*`, `?*`, `[a-z]*`
                                // in a directory of such names) empties it.
                                // (Read only for a critical directory.)
                                let everything = || {
                                    matches!(last, "*" | ".*" | "*.*") || {
                                        let names =
                                            std::fs::read_dir(&dir).map_or(usize::MAX, |rd| {
                                                rd.flatten()
                                                    .take(MAX_GLOB_ENTRIES + 1)
                                                    // Counted as the glob sees them: a
                                                    // hidden name only by a pattern that
                                                    // starts with `.` (or with dotglob).
                                                    .filter(|e| {
                                                        dotglob
                                                            || last.starts_with('.')
                                                            || e.file_name()
                                                                .as_encoded_bytes()
                                                                .first()
                                                                != Some(&b'.')
                                                    })
                                                    .count()
                                            });
                                        !entries.is_empty() && entries.len() >= names
                                    }
                                };
                                if (critical().contains(&dir)
                                    || critical().contains(&resolve_symlinks(&dir)))
                                    && everything()
                                {
                                    let why = format!(
                                        "`{text}` would delete everything in {}",
                                        dir.display()
                                    );
                                    return Some(Finding::safety_ask(why, text));
                                }
                            }
                            paths.extend(entries);
                        }
                        None => {
                            let f = self.unchecked_glob(
                                set,
                                &arg.raw,
                                use_,
                                reading,
                                format!(
                                    "`{text}` uses a glob ({}) that cannot be checked.",
                                    arg.raw
                                ),
                                ctx,
                            );
                            worst = Some(pick(worst, f.sub(text.clone())));
                            continue;
                        }
                    }
                } else {
                    paths.extend(resolutions);
                }
                for p in paths {
                    // Once for each use (`curl -b F -o F` reads and writes F).
                    if !checked.insert((p.clone(), use_)) {
                        continue;
                    }
                    if checked.len() > MAX_CHECKED_PATHS {
                        let f = self.unchecked_path(
                            set,
                            use_,
                            format!("`{text}` names more than {MAX_CHECKED_PATHS} paths; they were not all checked."),
                            ctx,
                        );
                        return Some(pick(worst, f.sub(text)));
                    }
                    // A glob's directory is listed to be checked as a path, not removed
                    // (`rm -f *.bak` in the project root; `rm *` asks above).
                    if removal_checked(index)
                        && !glob_dirs.contains(&p)
                        && (critical().contains(&p) || critical().contains(&resolve_symlinks(&p)))
                    {
                        let why = format!(
                            "`{text}` would delete the critical directory {}",
                            p.display()
                        );
                        return Some(Finding::safety_ask(why, text));
                    }

                    // `/dev/null` takes output freely (`-o /dev/null`), but removing,
                    // moving, linking or re-moding its entry breaks every program that
                    // writes to it.
                    let changes_entry = CHANGES_ENTRIES.contains(&name)
                        || (name == "cp"
                            && has_option(
                                words,
                                &['a', 'p', 'l', 's'],
                                &[
                                    "--remove-destination",
                                    "--preserve",
                                    "--archive",
                                    "--link",
                                    "--symbolic-link",
                                ],
                            ));
                    if use_ == PathUse::Write
                        && changes_entry
                        && matches!(p.to_str(), Some("/dev/null" | "/dev/tty"))
                    {
                        let why = format!(
                            "`{text}` would change the device {} itself, not write to it",
                            p.display()
                        );
                        return Some(Finding::safety_ask(why, text));
                    }
                    if let Some(f) = self.path_constraint(set, &p, use_, ctx) {
                        worst = Some(pick(worst, f.sub(text.clone())));
                    }
                    if let Some(f) = self.under_filled(
                        set,
                        &p,
                        use_,
                        filled.get_or_init(|| self.filled_before(analysis, Some(sub), ctx)),
                        &text,
                        true,
                        ctx,
                    ) {
                        worst = Some(pick(worst, f));
                    }
                    if let Some(t) = tree
                        && p.is_dir()
                        && let Some(f) = self.denied_inside(set, &p, t, &text, ctx)
                    {
                        worst = Some(pick(worst, f));
                    }
                    // A link is changed as a link (`rm -r link`), unless named with a
                    // trailing `/` (`rm -r link/` empties what it points to).
                    let tree_root = if value.ends_with('/') || value.ends_with("/.") {
                        p.is_dir()
                    } else {
                        std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir())
                    };
                    if takes_away(index)
                        && tree_root
                        && !glob_dirs.contains(&p)
                        && let Some(why) = self.protected_inside(&p, name != "rmdir")
                    {
                        let why = if name == "find" {
                            format!(
                                "`{text}` may {} what {} holds: it {why}.",
                                find_loss.verb(),
                                p.display()
                            )
                        } else {
                            format!(
                                "`{text}` would remove or move {} with everything in it: it {why}.",
                                p.display()
                            )
                        };
                        worst = Some(pick(worst, Finding::safety_ask(why, text.clone())));
                    }
                    if let Some((tests, recursive, follows, roots_follow)) = &find_names
                        && index < listed
                        && (tree_root || (*roots_follow && p.is_dir()))
                        && let Some(why) = protected_names_matching(&p, tests, *recursive, *follows)
                    {
                        let why = format!("`{text}` may {} {why}.", find_loss.verb());
                        worst = Some(pick(worst, Finding::safety_ask(why, text.clone())));
                    }
                    if tree_changed(index)
                        && tree_root
                        && !glob_dirs.contains(&p)
                        && let Some(f) = self.written_below(
                            set,
                            &p,
                            &p,
                            TreeWrite {
                                how: changed_how,
                                follow_links: false,
                                moves: false,
                            },
                            &text,
                        )
                    {
                        worst = Some(pick(worst, f));
                    }
                }
            }
        }
        // Files whose names the command line does not say, written into a directory (an
        // archive's members, what a patch names): asked about when an Edit deny or ask rule
        // could match one of them there.
        for dir in file_uses.iter().flat_map(|f| &f.filled_dirs) {
            if dir.value.is_none() {
                continue;
            }
            for p in self
                .resolve_in_dirs(&literal_tilde(dir), &sub.cwd, &sub.other_cwds, ctx)
                .unwrap_or_default()
            {
                if let Some(f) = self.unknown_names_in(set, &p, &text) {
                    worst = Some(pick(worst, f));
                }
            }
        }
        // What a recursive copy or a move writes below the paths it lands at.
        let follow_links = tree.is_some_and(|t| t.follow_links);
        for (src, into) in &trees_written {
            // A destination that cannot be resolved was asked about above.
            let dests = self
                .resolve_in_dirs(into, &sub.cwd, &sub.other_cwds, ctx)
                .unwrap_or_default();
            for dest in dests {
                let how = TreeWrite {
                    how: "writes everything under",
                    follow_links,
                    moves: name == "mv",
                };
                if let Some(f) = self.written_below(set, src, &dest, how, &text) {
                    worst = Some(pick(worst, f));
                }
            }
        }
        worst
    }

    /// What protected path the directory `dir` holds, when it is taken away whole (removed,
    /// moved, emptied), said as `holds …`: a place the session knows by path at or below it
    /// (a settings file, the managed settings directory's drop-ins, the user's configuration
    /// directory), or a protected name directly in it (`.git`, `.claude`, `.bashrc`, …:
    /// [`protected_reason`]), found with one listing of `dir`, not a walk. A directory of
    /// more than [`MAX_TREE_ENTRIES`] entries is not listed through: it may hold one. With
    /// `listing` false only the known places are looked for (`rmdir` removes only an empty
    /// directory).
    fn protected_inside(&self, dir: &Path, listing: bool) -> Option<String> {
        let dirs = [normalize_lexically(dir), resolve_symlinks(dir)];
        let known = self
            .roots
            .settings_files
            .iter()
            .chain(&self.roots.settings_dirs)
            .chain(&self.roots.user_config_dir);
        for place in known {
            let spellings = [normalize_lexically(place), resolve_symlinks(place)];
            if spellings
                .iter()
                .any(|k| dirs.iter().any(|d| k.starts_with(d)))
            {
                return Some(format!(
                    "holds {}, which this session reads its settings or configuration from",
                    place.display()
                ));
            }
        }
        if !listing {
            return None;
        }
        let entries = std::fs::read_dir(dir).ok()?;
        for (n, entry) in entries.enumerate() {
            if n >= MAX_TREE_ENTRIES {
                return Some(format!(
                    "holds more than {MAX_TREE_ENTRIES} entries, too many to look for protected ones"
                ));
            }
            let Ok(entry) = entry else { continue };
            // A `.git` file (a linked work tree's or a submodule's pointer) holds no
            // repository: removing a work tree with it is no removal of its history.
            if entry.file_name().eq_ignore_ascii_case(".git")
                && entry.file_type().is_ok_and(|t| t.is_file())
            {
                continue;
            }
            let name = entry.file_name();
            let is_dir = || dir.join(&name).is_dir();
            if let Some(what) = crate::path::protected_name_kind(&name, is_dir) {
                return Some(format!("holds {}, which {what}", dir.join(&name).display()));
            }
            // `.config/git` and `.config/fish` are protected where `.config` is not: a
            // `.config` holding one is taken away with it.
            if name == ".config" && is_dir() {
                for inner in ["git", "fish"] {
                    let path = dir.join(&name).join(inner);
                    if path.is_dir() {
                        return Some(format!(
                            "holds {}, a protected directory (git's or fish's configuration)",
                            path.display()
                        ));
                    }
                }
            }
        }
        // `dir` itself may be a `.config`.
        if dir.file_name().is_some_and(|n| n == ".config") {
            for inner in ["git", "fish"] {
                let path = dir.join(inner);
                if path.is_dir() {
                    return Some(format!(
                        "holds {}, a protected directory (git's or fish's configuration)",
                        path.display()
                    ));
                }
            }
        }
        None
    }

    /// The ask for a command that writes files of names it does not say into `dir` ([`FileUses::filled_dirs`](crate::bash::file_uses::FileUses)), when an Edit deny or
    /// ask rule could match below `dir`: a safety check, as for a path that cannot be
    /// computed.
    fn unknown_names_in(&self, set: &RuleSet, dir: &Path, text: &str) -> Option<Finding> {
        let resolved = resolve_symlinks(dir);
        let may_match = [
            &set.edit[bi(RuleBehavior::Deny)],
            &set.edit[bi(RuleBehavior::Ask)],
        ]
        .iter()
        .any(|r| r.may_match_inside(dir) || r.may_match_inside(&resolved));
        may_match.then(|| {
            let why = "files whose names cannot be known could match an Edit deny or ask rule";
            Finding::new(
                Kind::Ask,
                format!(
                    "`{text}` writes files whose names it does not say in {}, where an Edit deny or ask rule could apply.",
                    dir.display()
                ),
            )
            .reason(DecisionReason::SafetyCheck { reason: why.into() })
            .immune()
            .sub(text.to_owned())
        })
    }

    /// A finding for a command that writes or removes everything under a directory
    /// ([`changes_trees`] in place; a recursive copy or a move into its destination): each
    /// entry under `src`, at its place under `dest`, meets the Edit deny and ask rules as a
    /// write of that file would. `rm -r src` past a deny on `src/main.rs`, or `cp -r tpl/.
    /// .` over a denied `docs/main.rs`, was allowed. Read deny rules are met only by a
    /// move ([`TreeWrite::moves`]), for a file it would take out of their reach: otherwise
    /// nothing there is read (what a copy reads from a source tree is
    /// [`Self::denied_inside`]'s), and the common `Read(.env)` would walk every
    /// `node_modules` removed. Nothing is walked when no such rule could match below
    /// `dest` ([`PathRuleSet::may_match_inside`]); a tree of more than [`MAX_TREE_ENTRIES`]
    /// entries is asked about. Links inside are followed only for a copy that follows them
    /// (`cp -rL`).
    fn written_below(
        &self,
        set: &RuleSet,
        src: &Path,
        dest: &Path,
        tree: TreeWrite<'_>,
        text: &str,
    ) -> Option<Finding> {
        let TreeWrite {
            how,
            follow_links,
            moves,
        } = tree;
        // Symlinks resolved once for the destination; the entries below keep their names.
        let dest_resolved = resolve_symlinks(dest);
        let rules = [
            &set.edit[bi(RuleBehavior::Deny)],
            &set.edit[bi(RuleBehavior::Ask)],
        ];
        let may_match = rules
            .iter()
            .any(|r| r.may_match_inside(dest) || r.may_match_inside(&dest_resolved))
            || (moves && set.read[bi(RuleBehavior::Deny)].may_match_inside(src));
        if !may_match || !src.is_dir() {
            return None;
        }
        // The root is walked wherever it leads (the caller decided it is a tree); links
        // below it only when the command follows them.
        let mut walk = ignore::WalkBuilder::new(src);
        walk.standard_filters(false).follow_links(follow_links);
        let shown_dest = dest.display();
        let mut asked: Option<Finding> = None;
        for (n, entry) in walk.build().enumerate() {
            if n > MAX_TREE_ENTRIES {
                let f = Finding::safety_ask(
                    format!(
                        "`{text}` {how} {shown_dest}, which holds more than {MAX_TREE_ENTRIES} entries: too many to check against the Edit deny and ask rules."
                    ),
                    text,
                );
                return Some(pick(asked, f));
            }
            let Ok(entry) = entry else { continue };
            let Ok(inside) = entry.path().strip_prefix(src) else {
                continue;
            };
            if entry.depth() == 0 || inside.as_os_str().is_empty() {
                continue;
            }
            let path = dest.join(inside);
            let resolved = dest_resolved.join(inside);
            let shown = path.display();
            if let Some(r) = self.path_rule(set, true, RuleBehavior::Deny, &path, &resolved, false)
            {
                return Some(
                    Finding::new(
                        Kind::Deny,
                        format!("Permission to edit {shown} has been denied: `{text}` {how} {shown_dest}."),
                    )
                    .with_rule(Some(r))
                    .sub(text),
                );
            }
            // A file a Read deny rule protects where it is, moved where the rule does not
            // reach it.
            if moves
                && let Some(r) = self.path_rule(
                    set,
                    false,
                    RuleBehavior::Deny,
                    entry.path(),
                    entry.path(),
                    false,
                )
                && self
                    .path_rule(set, false, RuleBehavior::Deny, &path, &resolved, false)
                    .is_none()
            {
                let old = entry.path().display();
                return Some(
                    Finding::new(
                        Kind::Deny,
                        format!("Permission to read {old} has been denied: `{text}` would move it to {shown}, where the rule does not reach it."),
                    )
                    .with_rule(Some(r))
                    .sub(text),
                );
            }
            if asked.is_none()
                && let Some(r) =
                    self.path_rule(set, true, RuleBehavior::Ask, &path, &resolved, false)
            {
                asked = Some(
                    Finding::new(
                        Kind::Ask,
                        format!("Editing {shown} requires approval (ask rule): `{text}` {how} {shown_dest}."),
                    )
                    .with_rule(Some(r))
                    .immune()
                    .sub(text),
                );
            }
        }
        asked
    }

    /// A git command that prints files of the repository or its history it does not name
    /// ([`git_content`]: a blob `REV:PATH`, `git grep`, `git cat-file`, a patch without
    /// pathspecs, or with one that is not a plain file): those files cannot be checked, so
    /// it is asked about (in bypass mode too) when a Read deny or ask rule could match one
    /// of them ([`Self::read_rules_may_reach_repository`]; as a recursive grep's tree is
    /// checked).
    /// Named files are checked as paths read ([`path_use`]). `git_env`: the command mentions
    /// a `GIT_` variable.
    fn git_content_read(
        &self,
        set: &RuleSet,
        sub: &SimpleCommand,
        name: &str,
        words: &[Word],
        ctx: &ToolUseContext,
        git_env: bool,
    ) -> Option<Finding> {
        if name != "git"
            || (set.read[bi(RuleBehavior::Deny)].is_empty()
                && set.read[bi(RuleBehavior::Ask)].is_empty())
        {
            return None;
        }
        let content = git_content(words)?;
        // Where the repository is not known, neither is what its pathspecs name.
        let known = match self.read_rules_may_reach_repository(set, sub, words, ctx, git_env) {
            Some(false) => return None,
            Some(true) => true,
            None => false,
        };
        let resolve = |w: &Word| {
            w.value
                .as_deref()
                .and_then(|v| self.resolve_in_dirs(v, &sub.cwd, &sub.other_cwds, ctx))
        };
        // A pathspec that selects one plain file, named as it is.
        let one_file = |w: &Word| {
            !w.glob
                && w.value
                    .as_deref()
                    .is_some_and(|v| !v.starts_with(':') && !v.contains(['*', '?', '[']))
                && resolve(w).is_some_and(|ps| !ps.is_empty() && ps.iter().all(|p| p.is_file()))
        };
        // A diff of the work tree with the index (no tree compared, no revision among its
        // operands): what it prints changes of is what the index lists.
        let work_tree_diff = match &content {
            GitContent::Changes {
                operands, trees, ..
            } => {
                !trees
                    && operands.iter().all(|w| {
                        resolve(w).is_some_and(|ps| ps.iter().any(|p| p.symlink_metadata().is_ok()))
                    })
            }
            _ => false,
        };
        let unnamed = match content {
            _ if !known => true,
            GitContent::Unnamed => true,
            GitContent::Pathspecs { operands, paths }
            | GitContent::Changes {
                operands, paths, ..
            } => {
                // Operands that exist are paths; the others are revisions.
                let mut specs: Vec<&Word> = operands
                    .iter()
                    .filter(|w| {
                        resolve(w).is_none_or(|ps| ps.iter().any(|p| p.symlink_metadata().is_ok()))
                    })
                    .collect();
                specs.extend(&paths);
                specs.is_empty() || !specs.iter().all(|w| one_file(w))
            }
        };
        // A diff of the work tree prints changes of the files the index lists: none a Read
        // deny or ask rule matches, none printed. One that compares a tree (`--cached`, a
        // revision) may print a file the index no longer lists (`git rm --cached .env`).
        if unnamed
            && known
            && work_tree_diff
            && self.tracked_file_covered(set, sub, ctx) == Some(false)
        {
            return None;
        }
        let text = sub.raw_text();
        let rules = read_rule_kinds(set);
        unnamed.then(|| {
            self.unchecked_path(
                set,
                PathUse::Read,
                format!(
                    "`{text}` prints files of the repository it does not name, which cannot be checked against the {rules}."
                ),
                ctx,
            )
            .sub(text)
        })
    }

    /// Whether a file git tracks in the repository `sub` works in (its index lists it)
    /// matches a Read deny or ask rule, or may (a sparse index's directory entry). `None` when the
    /// index cannot be read: a `.git` file (a linked work tree or submodule), another object
    /// format, a split or unknown index, an unknown directory.
    fn tracked_file_covered(
        &self,
        set: &RuleSet,
        sub: &SimpleCommand,
        ctx: &ToolUseContext,
    ) -> Option<bool> {
        /// An index larger than this is not read.
        const MAX_INDEX_BYTES: u64 = 256 << 20;
        let rules = [
            &set.read[bi(RuleBehavior::Deny)],
            &set.read[bi(RuleBehavior::Ask)],
        ];
        let dirs = self.resolve_in_dirs(".", &sub.cwd, &sub.other_cwds, ctx)?;
        for dir in dirs {
            let root = git_work_tree(&dir)?;
            let git = root.join(".git");
            if !std::fs::symlink_metadata(&git).is_ok_and(|m| m.is_dir()) {
                return None;
            }
            let config = std::fs::read_to_string(git.join("config")).unwrap_or_default();
            if config.to_ascii_lowercase().contains("objectformat") {
                return None;
            }
            let index = git.join("index");
            let bytes = match std::fs::metadata(&index) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(_) => return None,
                Ok(m) if m.len() > MAX_INDEX_BYTES => return None,
                Ok(_) => std::fs::read(&index).ok()?,
            };
            for path in crate::git_index::index_paths(&bytes)? {
                let full = root.join(&path);
                let covered = if path.ends_with('/') {
                    rules.iter().any(|r| r.may_match_inside(&full))
                } else {
                    [RuleBehavior::Deny, RuleBehavior::Ask]
                        .into_iter()
                        .any(|b| self.path_rule(set, false, b, &full, &full, false).is_some())
                };
                if covered {
                    return Some(true);
                }
            }
        }
        Some(false)
    }

    /// Whether a Read deny or ask rule could match a file git prints from the repository it works in
    /// (the nearest directory up from each directory the command may run in that holds
    /// `.git`; that directory itself when none does): a rule whose pattern starts inside
    /// the repository's work tree or above it (`.env` at any depth, `src/**`, `~/**`), not
    /// one elsewhere (`~/.ssh/**` beside the project). Whatever the files in it now: its
    /// history may hold others. When the repository cannot be known (another one named by
    /// `-C`, `--git-dir`, `-c` or a `GIT_` variable, an unknown directory, a directory
    /// inside a git directory, a work tree configured elsewhere), every rule may: `None`.
    fn read_rules_may_reach_repository(
        &self,
        set: &RuleSet,
        sub: &SimpleCommand,
        words: &[Word],
        ctx: &ToolUseContext,
        git_env: bool,
    ) -> Option<bool> {
        if git_sent_elsewhere(sub, words, git_env) || inherited_git_variable().is_some() {
            return None;
        }
        let dirs = self.resolve_in_dirs(".", &sub.cwd, &sub.other_cwds, ctx)?;
        let rules = [
            &set.read[bi(RuleBehavior::Deny)],
            &set.read[bi(RuleBehavior::Ask)],
        ];
        let mut reaches = false;
        for dir in dirs.iter().flat_map(|d| [d.clone(), resolve_symlinks(d)]) {
            let root = git_work_tree(&dir)?;
            let root_resolved = resolve_symlinks(&root);
            reaches |= rules
                .iter()
                .any(|r| r.may_match_inside(&root) || r.may_match_inside(&root_resolved));
        }
        Some(reaches)
    }

    /// A glob argument of the cwd (no directory before it, before any `--`) that matches a
    /// name starting with `-`: bash puts that name among the arguments, where the program
    /// reads it as an option (wildcard injection: `rg TODO *` beside a file `--pre=sh` runs
    /// `sh`; `tar cf a.tar *` beside `--checkpoint-action=exec=sh x`). A safety ask, in every
    /// mode. `dir/*` expands to `dir/--pre=sh`, which is no option.
    /// A name an earlier command of the line may create there (`touch -- --pre=sh && rg x
    /// *`, `cp a.txt ./-ofoo; sort *`) is not on the disk when the line is checked: when
    /// one may ([`line_may_make_option_names`]), such a glob is asked about as well.
    fn option_like_glob(
        &self,
        sub: &SimpleCommand,
        words: &[Word],
        ctx: &ToolUseContext,
        analysis: &Analysis,
    ) -> Option<Finding> {
        let name = basename(words.first()?.value.as_deref()?);
        let made_before = std::cell::OnceCell::new();
        for w in words.iter().skip(1) {
            let Some(value) = w.value.as_deref() else {
                continue;
            };
            if value == "--" {
                break;
            }
            if !w.glob || value.contains('/') {
                continue;
            }
            if let Some(maker) =
                made_before.get_or_init(|| line_may_make_option_names(analysis, sub))
            {
                let text = sub.raw_text();
                let why = format!(
                    "`{text}`: the glob {} is expanded after `{maker}` on the same line, which may create a name starting with `-` there that {name} would take as an option; what the glob matches cannot be known before the line runs",
                    w.raw
                );
                return Some(Finding::safety_ask(why, text));
            }
            let resolutions = self
                .resolve_in_dirs(value, &sub.cwd, &sub.other_cwds, ctx)
                .unwrap_or_default();
            for resolved in resolutions {
                // Names that start with `-`, which no hidden name does.
                let Some((_, entries)) = expand_glob(
                    &resolved,
                    GlobReading {
                        dotglob: true,
                        nocase: false,
                        globstar: false,
                    },
                ) else {
                    continue;
                };
                if let Some(option) = entries.iter().find_map(|e| {
                    e.file_name()
                        .and_then(|n| n.to_str())
                        .filter(|n| n.starts_with('-'))
                }) {
                    let text = sub.raw_text();
                    let why = format!(
                        "`{text}`: the glob {} matches `{option}`, which {name} would take as an option",
                        w.raw
                    );
                    return Some(Finding::safety_ask(why, text));
                }
            }
        }
        None
    }

    /// Whether `value`, in any of the directories a command may run in (`cwd`, `others`,
    /// as written), goes through a process's view of the file system ([`through_proc`]).
    fn through_proc(
        &self,
        value: &str,
        cwd: &Option<String>,
        others: &[Option<String>],
        ctx: &ToolUseContext,
    ) -> bool {
        std::iter::once(cwd)
            .chain(others)
            .filter_map(|dir| self.unfolded(value, dir.as_deref(), ctx))
            .any(|p| through_proc(&p))
    }

    /// `value` made absolute against the directory `cwd` (as written, `None`: the session's)
    /// without folding `..` or resolving links, for [`through_proc`]. `None` when the
    /// directory is not known.
    fn unfolded(&self, value: &str, cwd: Option<&str>, ctx: &ToolUseContext) -> Option<PathBuf> {
        let home = ctx.home().or(self.roots.home.as_deref());
        let expand = |p: &str| -> Option<PathBuf> {
            match p.strip_prefix('~') {
                Some(rest) if rest.is_empty() || rest.starts_with('/') => {
                    Some(home?.join(rest.trim_start_matches('/')))
                }
                Some(_) => None,
                None => Some(PathBuf::from(p)),
            }
        };
        let value_path = expand(value)?;
        if value_path.is_absolute() {
            return Some(value_path);
        }
        let base = match cwd {
            None => ctx.cwd().to_path_buf(),
            Some(UNKNOWN_DIR) => return None,
            Some(dir) => {
                let dir = expand(dir)?;
                if dir.is_absolute() {
                    dir
                } else {
                    ctx.cwd().join(dir)
                }
            }
        };
        Some(base.join(value_path))
    }

    /// The targets of `ln -s` (without `-r`) in `args` made to name what each link leads to:
    /// a relative target joined to the link's directory (`ln -s ../k sub/l` leads to `k`, not
    /// to `../k`), which is `-t DIR`, the last operand when it is a directory (a trailing
    /// `/`, one that is, or several targets going into it; not with `-T`, nor through a
    /// link with `-n`), else the last operand's directory, else the working directory (no
    /// change). A static target is rewritten so; one bash expands is judged by what it
    /// expands to, each word on its own (a brace list's choices, the values of the line's
    /// variables in it, [`substituted`]): an absolute one, or one bash made absolute (`~/x`),
    /// is where it says, a relative one is added joined to the link's directory, and the
    /// word as written is still checked as it was. A glob target is checked both ways: bash
    /// expands it where ln runs, and the links resolve its names from their directory.
    /// What a link leads to that cannot be worked out (a link whose directory is not known,
    /// a computed last operand or a glob one; a target whose values are not known) is added
    /// as an unchecked word, so asked about.
    fn link_targets_from_link_dir(
        &self,
        d: &Destination,
        ln: LinkOptions,
        args: &mut Vec<Word>,
        sub: &SimpleCommand,
        ctx: &ToolUseContext,
        analysis: &Analysis,
    ) {
        if d.here {
            return;
        }
        let Some(to) = args.get(d.index) else {
            return;
        };
        // `None`: not known; `Some("")`: the working directory.
        let link_dir: Option<String> = match to.value.as_deref() {
            _ if to.glob => None,
            None => None,
            Some(v) => {
                let is_dir = || {
                    self.resolve_in_dirs(v, &sub.cwd, &sub.other_cwds, ctx)
                        .is_none_or(|paths| {
                            paths.iter().any(|p| {
                                if ln.no_dereference {
                                    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
                                } else {
                                    p.is_dir()
                                }
                            })
                        })
                };
                let into = d.by_option
                    || (!ln.no_target_directory
                        && (d.sources.len() > 1 || v.ends_with('/') || is_dir()));
                if into {
                    Some(v.to_owned())
                } else {
                    Some(match v.trim_end_matches('/').rsplit_once('/') {
                        Some(("", _)) => "/".to_owned(),
                        Some((dir, _)) => dir.to_owned(),
                        None => String::new(),
                    })
                }
            }
        };
        if link_dir.as_deref() == Some("") {
            return;
        }
        let joined = |dir: &str, target: &str| {
            if dir.ends_with('/') {
                format!("{dir}{target}")
            } else {
                format!("{dir}/{target}")
            }
        };
        // An absolute target, or one bash made absolute (`~/x`), is where it says.
        let relative = |v: &str| !v.starts_with(['/', '~']);
        let link_raw = to.raw.clone();
        let unchecked = |raw: &str| Word {
            raw: format!("what the link to {raw} in {link_raw} leads to"),
            value: None,
            plain: false,
            glob: false,
        };
        let mut extra = Vec::new();
        for &i in &d.sources {
            let Some(w) = args.get_mut(i) else { continue };
            match (&w.value, &link_dir) {
                // Where the link is cannot be worked out: neither can what a relative target
                // leads to (unchecked, so asked about).
                (Some(v), None) if relative(v) => extra.push(unchecked(&w.raw)),
                (Some(v), Some(dir)) if relative(v) => {
                    if w.glob {
                        let mut copy = w.clone();
                        copy.value = Some(joined(dir, v));
                        copy.raw = joined(dir, &w.raw);
                        extra.push(copy);
                    } else {
                        w.value = Some(joined(dir, v));
                    }
                }
                (Some(_), _) => {}
                // A word bash expands: kept as it is (the rest of the line checks it as
                // written, and where each of its values says), and each relative value it
                // may expand to added, joined to the link's directory.
                (None, dir) => {
                    let values: Option<Vec<(String, bool)>> = match expand_braces(&w.raw) {
                        Some(list) => Some(
                            list.into_iter()
                                .map(|v| {
                                    let glob = v.contains(['*', '?', '[']);
                                    (v, glob)
                                })
                                .collect(),
                        ),
                        None => substituted(&w.raw, &analysis.values, &sub.set_by_loops)
                            .and_then(|ws| ws.iter().map(|v| plain_word(v)).collect()),
                    };
                    let Some(values) = values else {
                        // Its values are not known: neither is what the link leads to.
                        extra.push(unchecked(&w.raw));
                        continue;
                    };
                    // An empty word is no target.
                    for (v, glob) in values.into_iter().filter(|(v, _)| !v.is_empty()) {
                        if !relative(&v) {
                            continue;
                        }
                        let Some(dir) = dir else {
                            extra.push(unchecked(&w.raw));
                            break;
                        };
                        let path = joined(dir, &v);
                        extra.push(Word {
                            raw: path.clone(),
                            value: Some(path),
                            plain: true,
                            glob,
                        });
                    }
                }
            }
        }
        args.extend(extra);
    }

    /// A finding for a command that reads the whole tree under `dir` ([`TreeRead`]) when a
    /// Read deny rule forbids a file in it: denied, as a Read of that file is (`grep -r
    /// TOKEN .` printed `.env` past `Read(.env)`); when a Read ask rule covers one: asked,
    /// as a Read of that file is (in bypass mode too), where the Grep tool leaves such a
    /// file out and says so. A deny found anywhere in the tree beats an ask found first.
    /// The tree is listed the way the command reads it (ripgrep's filters for `rg`); one of
    /// more than [`MAX_TREE_ENTRIES`] entries cannot be checked and is asked about.
    fn denied_inside(
        &self,
        set: &RuleSet,
        dir: &Path,
        tree: crate::bash::commands::TreeRead,
        text: &str,
        ctx: &ToolUseContext,
    ) -> Option<Finding> {
        let deny_rules = !set.read[bi(RuleBehavior::Deny)].is_empty();
        let ask_rules = !set.read[bi(RuleBehavior::Ask)].is_empty();
        // A command that follows links reads what they point to: one leading out of the
        // working directories is a read outside them (`grep -R x .` through `out -> ~`).
        if !deny_rules && !ask_rules && !tree.follow_links {
            return None;
        }
        let mut outside: Option<Finding> = None;
        // The first file an ask rule covers: asked about unless a deny rule forbids another.
        let mut asked: Option<Finding> = None;
        let mut walk = ignore::WalkBuilder::new(dir);
        walk.follow_links(tree.follow_links);
        if tree.direct_only {
            walk.max_depth(Some(1));
        }
        match tree.rg_filters {
            Some((skip_hidden, use_ignore_files)) => {
                // ripgrep's own ignore file: a `!.env` there makes it search a hidden file.
                if use_ignore_files {
                    walk.add_custom_ignore_filename(".rgignore");
                }
                walk.hidden(skip_hidden)
                    .ignore(use_ignore_files)
                    .git_ignore(use_ignore_files)
                    .git_global(use_ignore_files)
                    .git_exclude(use_ignore_files)
                    .parents(use_ignore_files);
            }
            None => {
                walk.standard_filters(false);
            }
        }
        // Symlinks resolved once for the root, then only for the links inside.
        let root_resolved = resolve_symlinks(dir);
        for (n, entry) in walk.build().enumerate() {
            if n > MAX_TREE_ENTRIES {
                if !deny_rules && !ask_rules {
                    // Only links were looked for: as many as a walk this long found.
                    return outside;
                }
                let rules = read_rule_kinds(set);
                let f = Finding::safety_ask(
                    format!(
                        "`{text}` reads everything under {}, which holds more than {MAX_TREE_ENTRIES} entries: too many to check against the {rules}.",
                        dir.display()
                    ),
                    text,
                );
                return Some(pick(asked, f));
            }
            let Ok(entry) = entry else { continue };
            // A link below the root that the command does not follow (`grep -r`, `rg`
            // without `-L`, `cp -r`) is not read through: what it leads to is not read.
            if !tree.follow_links && entry.depth() > 0 && entry.path_is_symlink() {
                continue;
            }
            let path = entry.path();
            // Without following links the walk never goes through one: below the root,
            // only the root itself needs resolving.
            let resolved = match path.strip_prefix(dir) {
                Ok(inside) if !tree.follow_links && !entry.path_is_symlink() => {
                    root_resolved.join(inside)
                }
                _ => resolve_symlinks(path),
            };
            if tree.follow_links
                && outside.is_none()
                && entry.path_is_symlink()
                && !self.inside_working_dirs(&resolved, ctx)
            {
                outside = Some(
                    Finding::new(
                        Kind::Ask,
                        format!(
                            "`{text}` follows the link {} to {}, outside the working directories.",
                            path.display(),
                            resolved.display()
                        ),
                    )
                    .sub(text),
                );
                if !deny_rules && !ask_rules {
                    return outside;
                }
            }
            // A walker that only lists names lists what lies in the tree as `ls` does:
            // only what a link reaches is held against the Read rules.
            if tree.names_only
                && path
                    .strip_prefix(dir)
                    .is_ok_and(|inside| resolved == root_resolved.join(inside))
            {
                continue;
            }
            let reads = if tree.names_only { "lists" } else { "reads" };
            if deny_rules
                && let Some(rule) =
                    self.path_rule(set, false, RuleBehavior::Deny, path, &resolved, false)
            {
                return Some(
                    Finding::new(
                        Kind::Deny,
                        format!(
                            "Permission to read {} has been denied: `{text}` {reads} everything under {}. Search with the Grep tool (it skips denied files) or name the files.",
                            path.display(),
                            dir.display()
                        ),
                    )
                    .with_rule(Some(rule))
                    .sub(text),
                );
            }
            if ask_rules
                && asked.is_none()
                && let Some(rule) =
                    self.path_rule(set, false, RuleBehavior::Ask, path, &resolved, false)
            {
                asked = Some(
                    Finding::new(
                        Kind::Ask,
                        format!(
                            "Reading {} requires approval (ask rule): `{text}` {reads} everything under {}. Search with the Grep tool (it leaves out what an ask rule covers) or name the files.",
                            path.display(),
                            dir.display()
                        ),
                    )
                    .with_rule(Some(rule))
                    .immune()
                    .sub(text),
                );
                // Nothing but a deny could outrank it.
                if !deny_rules {
                    return asked;
                }
            }
        }
        match asked {
            Some(a) => Some(pick(outside, a)),
            None => outside,
        }
    }

    /// Whether a path used this way that cannot be seen (computed, fed by xargs) is asked
    /// about even where the mode or an allow rule would let the command run: Read/Edit deny
    /// or ask rules exist that it could match ([`Self::has_path_rules`]), or the settings
    /// block reads outside the working directories (`blockReadsOutsideWorkingDirectories`),
    /// where it may be, read or written.
    fn unseen_paths_ask(&self, set: &RuleSet, use_: PathUse, ctx: &ToolUseContext) -> bool {
        self.has_path_rules(set, use_) || ctx.permission().block_reads_outside_working_dirs
    }

    /// Whether Read/Edit deny or ask rules exist that a path used this way could match.
    fn has_path_rules(&self, set: &RuleSet, use_: PathUse) -> bool {
        let read = !set.read[bi(RuleBehavior::Deny)].is_empty()
            || !set.read[bi(RuleBehavior::Ask)].is_empty();
        let edit = !set.edit[bi(RuleBehavior::Deny)].is_empty()
            || !set.edit[bi(RuleBehavior::Ask)].is_empty();
        match use_ {
            PathUse::Read => read,
            PathUse::Write => edit || !set.read[bi(RuleBehavior::Deny)].is_empty(),
        }
    }

    /// The ask for a path that cannot be computed statically (a variable, a substitution, a
    /// glob that cannot be listed, input to xargs): when Read/Edit deny or ask rules exist
    /// it could dodge, bypass mode does not approve it either.
    /// What a copy, move or link into `d` writes there besides the destination itself, as
    /// paths relative to where the command runs: DEST/<name> of each source when DEST is a
    /// directory (DEST/<source> with `--parents`), DEST/<entry> of each entry of a source
    /// directory whose contents land there (`SRC/.`, `SRC/..`, `.`, `-T`, rsync's `SRC/`, a
    /// directory copied or moved to a new name), and the backups made beside each (`-b`,
    /// `-S SUFFIX`). `None` for what cannot be worked out, which asks: a computed or glob
    /// destination or source, options after the operands (the last operand may not be the
    /// destination), a backup suffix from the environment or numbered backups, rsync's
    /// `--files-from`, `--relative` and remote sources, a directory of more than 1,000
    /// entries. A destination that does not exist is also taken as a directory when other
    /// commands run in the same command line (`analysis`: one of them may make it). With
    /// `recursive` (a `cp -r`, an `rsync -r`, a `mv`), the trees that land there are
    /// returned too: each source directory with the path its entries land under, for
    /// [`Self::written_below`].
    #[allow(clippy::too_many_arguments)]
    fn written_into(
        &self,
        d: &Destination,
        dest_is_dir: bool,
        args: &[Word],
        words: &[Word],
        name: &str,
        sub: &SimpleCommand,
        ctx: &ToolUseContext,
        recursive: bool,
        analysis: &Analysis,
    ) -> (Vec<Option<String>>, Vec<(PathBuf, String)>) {
        /// More entries than this in a directory copied by its contents: not listed.
        const MAX_ENTRIES: usize = 1_000;
        let mut trees: Vec<(PathBuf, String)> = Vec::new();
        if options_after_operands(name, words) {
            return (vec![None], trees);
        }
        if name == "rsync" && has_option(words, &['R'], &["--files-from", "--relative"]) {
            return (vec![None], trees);
        }
        // Backups: DEST<suffix> beside each path written over. A suffix or a backup kind
        // from the environment (GNU tools read `SIMPLE_BACKUP_SUFFIX` and `VERSION_CONTROL`;
        // the command line may set them, or the environment it runs in) cannot be worked out.
        let backup = match backups(name, words) {
            Backups::None => None,
            Backups::Elsewhere => return (vec![None], trees),
            Backups::Suffix(suffix) => {
                let vars = ["SIMPLE_BACKUP_SUFFIX", "VERSION_CONTROL"];
                let from_env = name != "rsync"
                    && (analysis.hidden_assignment
                        || analysis
                            .commands
                            .iter()
                            .any(|c| vars.iter().any(|v| c.raw_text().contains(v)))
                        || vars.iter().any(|v| std::env::var_os(v).is_some()));
                if from_env {
                    return (vec![None], trees);
                }
                Some(suffix)
            }
        };
        let to = &args[d.index];
        let Some(dir) = to.value.as_deref().filter(|_| !to.glob) else {
            return (vec![None], trees);
        };
        let dir = match dir.trim_end_matches('/') {
            "" => "/".to_owned(),
            trimmed => trimmed.to_owned(),
        };
        let join = |name: &str| {
            if dir.ends_with('/') {
                format!("{dir}{name}")
            } else {
                format!("{dir}/{name}")
            }
        };
        let resolve = |value: &str| self.resolve_in_dirs(value, &sub.cwd, &sub.other_cwds, ctx);
        // Nothing is there yet (not even a dangling link), another command of the line may
        // make a directory there (`mkdir new && cp a new`), and `-T` does not say it is the
        // target itself.
        let new_dest = analysis.commands.len() > 1
            && !dest_is_dir
            && !d.contents
            && resolve(&dir)
                .is_some_and(|paths| paths.iter().all(|p| std::fs::symlink_metadata(p).is_err()));
        let mut out: Vec<Option<String>> = Vec::new();
        if let Some(suffix) = &backup {
            // The destination itself, backed up when it is a file written over.
            out.push(Some(format!("{dir}{suffix}")));
        }
        let written = |path: String, out: &mut Vec<Option<String>>| {
            if let Some(suffix) = &backup {
                out.push(Some(format!("{path}{suffix}")));
            }
            out.push(Some(path));
        };
        for &i in &d.sources {
            let arg = &args[i];
            // The source's names: a static word, a brace's words, a glob's matches.
            let sources: Vec<String> = match (&arg.value, arg.glob) {
                (Some(v), false) => vec![v.clone()],
                // A glob whose matches' contents land there (`t*/.`): not worked out.
                (Some(v), true) if v.ends_with('/') || v.ends_with("/.") || v.ends_with("/..") => {
                    out.push(None);
                    continue;
                }
                (Some(v), true) => {
                    let matched = resolve(v).and_then(|paths| {
                        paths
                            .iter()
                            .map(|p| {
                                expand_glob(p, GlobReading::of(analysis))
                                    .map(|(_, entries)| entries)
                            })
                            .collect::<Option<Vec<_>>>()
                    });
                    let Some(matched) = matched else {
                        out.push(None);
                        continue;
                    };
                    let parent = v.rsplit_once('/').map(|(p, _)| p);
                    matched
                        .into_iter()
                        .flatten()
                        .filter_map(|p| {
                            let base = p.file_name()?.to_string_lossy().into_owned();
                            Some(match parent {
                                Some(parent) => format!("{parent}/{base}"),
                                None => base,
                            })
                        })
                        .collect()
                }
                (None, _) => match expand_braces(&arg.raw) {
                    Some(words) => words,
                    None => {
                        out.push(None);
                        continue;
                    }
                },
            };
            for source in sources {
                // A remote rsync source (`host:dir/`, `rsync://`): its names are not known.
                if name == "rsync"
                    && (source.contains("://")
                        || source
                            .split_once(':')
                            .is_some_and(|(host, _)| !host.contains('/')))
                {
                    out.push(None);
                    continue;
                }
                let trimmed = source.trim_end_matches('/');
                let last = trimmed.rsplit('/').next().unwrap_or(trimmed);
                let is_dir = || resolve(&source).is_some_and(|ps| ps.iter().any(|p| p.is_dir()));
                // A directory copied or moved under a new name: its entries become the new
                // directory's (rsync makes DEST/<name> of a directory given without `/`).
                let renamed_dir =
                    !dest_is_dir && d.sources.len() == 1 && matches!(name, "cp" | "mv") && is_dir();
                let contents = (d.contents && name != "ln")
                    || matches!(last, "." | ".." | "")
                    || (name == "rsync" && source.ends_with('/'))
                    || renamed_dir;
                // DEST/<name>: into a directory, into a destination that does not exist yet
                // (a `mkdir` earlier in the command may make it one: both are checked), and
                // for rsync's directory given without `/`.
                let into_dest = if contents {
                    renamed_dir && new_dest
                } else {
                    dest_is_dir || new_dest || (name == "rsync" && is_dir())
                };
                if contents {
                    let Some(paths) = resolve(&source) else {
                        out.push(None);
                        continue;
                    };
                    for p in paths.iter().filter(|p| p.is_dir()) {
                        if recursive {
                            trees.push((p.clone(), dir.clone()));
                        }
                        match std::fs::read_dir(p) {
                            Ok(entries) => {
                                let names: Vec<String> = entries
                                    .take(MAX_ENTRIES + 1)
                                    .filter_map(|e| e.ok())
                                    .map(|e| e.file_name().to_string_lossy().into_owned())
                                    .collect();
                                if names.len() > MAX_ENTRIES {
                                    out.push(None);
                                } else {
                                    for n in names {
                                        written(join(&n), &mut out);
                                    }
                                }
                            }
                            Err(_) => out.push(None),
                        }
                    }
                }
                if into_dest {
                    let into = if d.parents {
                        // The whole path as given (`..` included: it climbs out of DIR).
                        source
                            .trim_start_matches("./")
                            .trim_start_matches('/')
                            .to_owned()
                    } else {
                        last.to_owned()
                    };
                    if recursive {
                        // A link is copied or moved as a link, unless named with a `/`.
                        for p in resolve(&source).unwrap_or_default() {
                            let tree = if source.ends_with('/') {
                                p.is_dir()
                            } else {
                                std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir())
                            };
                            if tree {
                                trees.push((p, join(&into)));
                            }
                        }
                    }
                    written(join(&into), &mut out);
                }
            }
        }
        (out, trees)
    }

    /// The finding for a path the shell computes (`raw`): a safety check where
    /// [`computed_path_safety`] says why, else [`unchecked_path`](Self::unchecked_path).
    fn computed_path(
        &self,
        set: &RuleSet,
        raw: &str,
        use_: PathUse,
        removal: bool,
        message: String,
        ctx: &ToolUseContext,
    ) -> Finding {
        match computed_path_safety(raw, use_, removal) {
            Some(why) => Finding::new(Kind::Ask, format!("{message} {why}"))
                .reason(DecisionReason::SafetyCheck { reason: why })
                .immune(),
            None => self.unchecked_path(set, use_, message, ctx),
        }
    }

    /// A glob whose matches cannot be listed (one in a directory part, one a redirection
    /// writes to): as [`unchecked_path`](Self::unchecked_path), and a safety check, asked
    /// even in bypass mode, when what it writes may be protected (`cp x .gi[t]/config`).
    fn unchecked_glob(
        &self,
        set: &RuleSet,
        raw: &str,
        use_: PathUse,
        reading: GlobReading,
        message: String,
        ctx: &ToolUseContext,
    ) -> Finding {
        let text: String = raw.chars().filter(|c| !matches!(c, '"' | '\'')).collect();
        match protected_glob_reason(&text, reading.dotglob).filter(|_| use_ == PathUse::Write) {
            Some(why) => Finding::new(Kind::Ask, format!("{message} {why}"))
                .reason(DecisionReason::SafetyCheck { reason: why })
                .immune(),
            None => self.unchecked_path(set, use_, message, ctx),
        }
    }

    /// The directories that commands of the line before `sub` (every command of the line,
    /// for a redirection: `None`) fill with files whose names the command line does not say
    /// (an archive extracted whole, a patch, a recursive download:
    /// [`FileUses::filled_dirs`](crate::bash::file_uses::FileUses)), each with the text of
    /// the command: one of those files may be a symbolic link leading anywhere.
    fn filled_before(
        &self,
        analysis: &Analysis,
        sub: Option<&SimpleCommand>,
        ctx: &ToolUseContext,
    ) -> Vec<(PathBuf, String)> {
        let mut out = Vec::new();
        for (c, name, words) in commands_before(analysis, sub) {
            let Some(uses) = file_uses(name, &words) else {
                continue;
            };
            for dir in uses.filled_dirs.iter().filter(|d| d.value.is_some()) {
                for p in self
                    .resolve_in_dirs(&literal_tilde(dir), &c.cwd, &c.other_cwds, ctx)
                    .unwrap_or_default()
                {
                    out.push((normalize_lexically(&p), c.raw_text()));
                }
            }
        }
        out
    }

    /// The ask for `path`, used as `use_` by `text`, when it lies under a directory an
    /// earlier command of the line fills with files not named ([`Self::filled_before`]):
    /// what it is then (a symbolic link among them) cannot be known before the line runs.
    /// A write by a command asks in every mode (it may write a protected file through such
    /// a link); a read, or a redirection's write (`ordered` false: a redirection is not
    /// known to come after the command, `tar -xvf a.tar > list.txt` is opened first), is a
    /// path that cannot be checked.
    #[expect(clippy::too_many_arguments, reason = "the parts of one path's check")]
    fn under_filled(
        &self,
        set: &RuleSet,
        path: &Path,
        use_: PathUse,
        filled: &[(PathBuf, String)],
        text: &str,
        ordered: bool,
        ctx: &ToolUseContext,
    ) -> Option<Finding> {
        let path = normalize_lexically(path);
        let (dir, by) = filled
            .iter()
            .find(|(dir, _)| path != *dir && path.starts_with(dir))?;
        let verb = if use_ == PathUse::Write {
            "writes"
        } else {
            "reads"
        };
        let why = format!(
            "`{text}` {verb} {}, under {}, where `{by}` on the same line puts files whose names and kinds are not known (a symbolic link among them may lead anywhere): it cannot be checked before the line runs",
            path.display(),
            dir.display()
        );
        Some(if use_ == PathUse::Write && ordered {
            Finding::safety_ask(why, text)
        } else {
            self.unchecked_path(set, use_, format!("{why}."), ctx)
                .sub(text)
        })
    }

    /// The question about a path that cannot be seen, `message` saying why: asked even in
    /// bypass mode, no allow rule settling it, where it could dodge a Read/Edit deny or ask
    /// rule, or be outside the working directories while the settings block reads there.
    fn unchecked_path(
        &self,
        set: &RuleSet,
        use_: PathUse,
        message: String,
        ctx: &ToolUseContext,
    ) -> Finding {
        let f = Finding::new(Kind::Ask, message);
        let why = if self.has_path_rules(set, use_) {
            "a path that cannot be computed could match a Read/Edit deny or ask rule"
        } else if ctx.permission().block_reads_outside_working_dirs {
            "a path that cannot be computed may be outside the working directories (`permissions.blockReadsOutsideWorkingDirectories`)"
        } else {
            return f;
        };
        f.reason(DecisionReason::SafetyCheck { reason: why.into() })
            .immune()
    }

    /// Why `find ROOT -delete` (or `-exec rm … {}`) with nothing that filters what it
    /// deletes (`-name x`, `-type`, …) is a critical removal: a root that is `/`, a top-level directory, the home (or its
    /// parent) or a working directory (`find ~ -delete`, `find . -delete`, as `rm -rf` of
    /// them), or one that is computed with nothing fixed after it (`find "$HOME" -delete`).
    fn find_deletes_all_of(
        &self,
        words: &[Word],
        sub: &SimpleCommand,
        ctx: &ToolUseContext,
        analysis: &Analysis,
    ) -> Option<String> {
        let deletion = find_deletion(words)?;
        let text = sub.raw_text();
        // A filter that names a protected file (`-name .bashrc`) deletes it wherever find
        // finds it, as `rm` of it would.
        if !deletion.everything && deletion.names == FindNameFilter::Protected {
            return Some(format!(
                "`{text}` {} files of a protected name (such as .git, .claude or .bashrc) wherever it finds them",
                deletion.loss.verbs()
            ));
        }
        // A filtered one deletes part of what its roots hold: a root that cannot be listed
        // (an expansion, a directory after a `cd` not known) may be the home or the project,
        // whose protected files cannot be looked for; one that can is checked by the walk
        // of [`protected_names_matching`] and as its roots' removal.
        let filtered = !deletion.everything;
        let (roots_at, expression_at) = (deletion.roots_at, deletion.expression_at);
        let (verb, verbs) = (deletion.loss.verb(), deletion.loss.verbs());
        let home = ctx.home().or(self.roots.home.as_deref());
        let critical = CriticalDirs::new(home, &ctx.working_directories());
        // No root: find walks `.`.
        let dot = Word {
            raw: ".".into(),
            value: Some(".".into()),
            plain: true,
            glob: false,
        };
        let given = &words[roots_at..expression_at];
        // A glob that matches every name there (`find * -delete`) is that directory's whole
        // content, as `rm -rf *` is.
        let mut roots: Vec<Word> = if given.is_empty() {
            vec![dot.clone()]
        } else {
            given
                .iter()
                .map(|w| {
                    if w.glob
                        && w.value
                            .as_deref()
                            .is_some_and(|v| matches!(v, "*" | "?*" | "**"))
                    {
                        dot.clone()
                    } else {
                        w.clone()
                    }
                })
                .collect()
        };
        // A variable the line sets to plain words only (`for d in build dist; do find "$d"
        // -delete; done`) stands for each of its words.
        let mut computed: Vec<String> = Vec::new();
        roots.retain(|w| {
            if w.value.is_some() {
                return true;
            }
            computed.extend(
                substituted(&w.raw, &analysis.values, &sub.set_by_loops)
                    .unwrap_or_else(|| vec![w.raw.clone()]),
            );
            false
        });
        for raw in computed {
            // (A glob made of a variable's words is checked as computed, as before.)
            match plain_word(&raw).filter(|(_, glob)| !glob) {
                // An empty word is no start point (`find "" -delete` fails).
                Some((v, _)) if v.is_empty() => {}
                Some((v, _)) => roots.push(Word {
                    raw: v.clone(),
                    value: Some(v),
                    plain: true,
                    glob: false,
                }),
                None => {
                    let what = if filtered {
                        format!("{verbs} what its filters let through under")
                    } else {
                        format!("{verbs} everything under")
                    };
                    // A variable the line sets otherwise (`for d in ~; do find "$d" -delete;
                    // done`).
                    if let Some(var) = line_variable(&raw, analysis) {
                        return Some(format!(
                            "`{text}` {what} what ${{{var}}}, set on this command line, names, which may be a whole directory such as / or the home"
                        ));
                    }
                    if computed_path_safety(&raw, PathUse::Write, true).is_some() {
                        return Some(format!(
                            "`{text}` {what} what an expansion names ({raw}), which may be a whole directory such as the home or the project"
                        ));
                    }
                }
            }
        }
        for root in &roots {
            let v = literal_tilde(root);
            if user_home(&root.raw).is_some() {
                return Some(format!(
                    "`{text}` {verbs} everything under the home directory of a user ({}), which may be a critical directory such as /bin or /root",
                    root.raw
                ));
            }
            if let Some(spelled) = self.tilde_without_home(&v, &sub.cwd, &sub.other_cwds, ctx) {
                if computed_path_safety(&spelled, PathUse::Write, true).is_some() {
                    return Some(format!(
                        "`{text}` {verbs} everything under the home directory ({}), which is not known here",
                        root.raw
                    ));
                }
                continue;
            }
            let Some(paths) = self.resolve_in_dirs(&v, &sub.cwd, &sub.other_cwds, ctx) else {
                // A relative root after a `cd` to a directory that is not known (`cd
                // "$OLDPWD"; find . -delete`): computed, as `find "$PWD" -delete` is.
                if names_the_directory_or_above(&v)
                    || computed_path_safety(&format!("$PWD/{v}"), PathUse::Write, true).is_some()
                {
                    return Some(format!(
                        "`{text}` {verbs} {} under {} after a `cd` to a directory that is not known, which may be a whole directory such as the home or the project",
                        if filtered { "files" } else { "everything" },
                        root.raw
                    ));
                }
                continue;
            };
            if filtered {
                continue;
            }
            for p in paths {
                if critical.contains(&p) || critical.contains(&resolve_symlinks(&p)) {
                    return Some(format!(
                        "`{text}` would {verb} everything under the critical directory {}",
                        p.display()
                    ));
                }
            }
        }
        None
    }

    fn check_subcommand(
        &self,
        set: &RuleSet,
        tool: &dyn Tool,
        names: &[String],
        sub: &SimpleCommand,
        ctx: &ToolUseContext,
        analysis: &Analysis,
    ) -> Finding {
        let text = sub.raw_text();
        let cands = candidates(sub);
        let tname = tool.name();
        if let Some(r) = self.shell_rule(set, RuleBehavior::Deny, tool, names, &cands.deny, false) {
            return Finding::new(
                Kind::Deny,
                format!("Permission to use {tname} with command {text} has been denied."),
            )
            .with_rule(Some(r))
            .sub(text);
        }
        let words = effective_words(sub);
        let paths = if is_transparent(sub) {
            // The command xargs runs is checked on its own; the file xargs reads its
            // arguments from is xargs' own read (`xargs -a .env echo` prints it): checked
            // as a `cat` of it would be.
            let files = xargs_arg_files(&sub.words);
            // A shell's startup file is its own read (`export BASH_ENV=.env; bash -c :`).
            let startup = words.and_then(|w| self.startup_files_read(set, sub, w, ctx, analysis));
            let xargs_files = (sub.name().map(basename) == Some("xargs") && !files.is_empty())
                .then(|| {
                    let mut cat = vec![Word {
                        raw: "cat".into(),
                        value: Some("cat".into()),
                        plain: true,
                        glob: false,
                    }];
                    cat.extend(files);
                    self.subcommand_paths(set, sub, &cat, ctx, analysis)
                })
                .flatten();
            match (startup, xargs_files) {
                (Some(a), b) => Some(pick(b, a)),
                (None, b) => b,
            }
        } else {
            // The command as it is and every command a wrapper runs (`env cat .env`), in
            // the directory the wrappers leave it (`env -C DIR` elsewhere, `chroot` under
            // another root).
            wrapped_readings(words.unwrap_or(&sub.words))
                .into_iter()
                .filter_map(|(reading, moved)| match moved {
                    WrappedPaths::AsWritten => {
                        self.subcommand_paths(set, sub, reading, ctx, analysis)
                    }
                    WrappedPaths::OtherDirectory => {
                        let mut elsewhere = sub.clone();
                        elsewhere.cwd = Some(UNKNOWN_DIR.to_owned());
                        elsewhere.other_cwds.clear();
                        self.subcommand_paths(set, &elsewhere, reading, ctx, analysis)
                    }
                    WrappedPaths::OtherRoot => {
                        // What the paths name under the new root is not known; as written
                        // they may still match a rule.
                        let name = basename(reading.first()?.value.as_deref()?);
                        let use_ = path_use(name, reading)?;
                        let unchecked = self
                            .unchecked_path(
                                set,
                                use_,
                                format!(
                                    "`{text}` runs `{name}` under another root directory: its paths cannot be checked."
                                ),
                                ctx,
                            )
                            .sub(text.clone());
                        let as_written =
                            self.subcommand_paths(set, sub, reading, ctx, analysis);
                        Some(pick(as_written, unchecked))
                    }
                })
                .reduce(|worst, f| pick(Some(worst), f))
        };
        if let Some(f) = paths.as_ref().filter(|f| f.kind == Kind::Deny) {
            return f.clone();
        }
        if let Some(r) = self.shell_rule(set, RuleBehavior::Ask, tool, names, &cands.deny, false) {
            return Finding::new(Kind::Ask, format!("`{text}` requires approval (ask rule)."))
                .with_rule(Some(r))
                .immune()
                .sub(text);
        }
        if let Some(why) =
            effective_words(sub).and_then(|w| self.find_deletes_all_of(w, sub, ctx, analysis))
        {
            return Finding::safety_ask(why, text);
        }
        if let Some(f) = paths.as_ref().filter(|f| f.immune) {
            return f.clone();
        }
        if is_transparent(sub) {
            return Finding::new(Kind::Allow, "").sub(text);
        }
        if let Some(f) = paths {
            return f;
        }
        if let Some(r) = self.shell_rule(
            set,
            RuleBehavior::Allow,
            tool,
            names,
            &cands.allow,
            sub.appended_args,
        ) {
            return Finding::new(Kind::Allow, "").with_rule(Some(r)).sub(text);
        }
        let Some(words) = words else {
            return Finding::new(
                Kind::Passthrough,
                format!("`{text}` sets environment variables that are not known to be safe."),
            )
            .sub(text);
        };
        let name = words
            .first()
            .and_then(|w| w.value.as_deref())
            .map(basename)
            .unwrap_or("");
        let mode = ctx.permission().mode;
        if mode == PermissionMode::AcceptEdits
            && !sub.appended_args
            && accept_edits_allows(&brace_expanded(words))
        {
            return Finding::new(Kind::Allow, "")
                .reason(DecisionReason::Mode { mode })
                .sub(text);
        }
        if !sub.appended_args
            && is_read_only(&brace_expanded(words))
            && !(name == "git"
                && (analysis.commands.iter().any(changes_directory)
                    || line_writes_before(analysis, sub, GIT_DISCOVERY_NAMES)))
        {
            if name == "git"
                && let Some(why) = self.planted_repository(sub, ctx)
            {
                return Finding::new(
                    Kind::Ask,
                    format!(
                        "`{text}` needs approval: {why}, and git would run what its configuration names."
                    ),
                )
                .sub(text);
            }
            if name == "git" {
                match self.repository_programs(sub, ctx) {
                    Err(why) => {
                        return Finding::new(Kind::Ask, format!("`{text}` needs approval: {why}."))
                            .sub(text);
                    }
                    // A command before it on the line may write one of the files that
                    // decided it (an included file, a hook): the disk does not show yet
                    // what git will read.
                    Ok(names) => {
                        let names: Vec<&str> = names.iter().map(String::as_str).collect();
                        if line_writes_before(analysis, sub, &names) {
                            return Finding::new(
                                Kind::Passthrough,
                                format!("`{text}` requires approval."),
                            )
                            .sub(text);
                        }
                    }
                }
            }
            return Finding::new(Kind::Allow, "")
                .reason(DecisionReason::Other {
                    reason: format!("`{text}` is a read-only command"),
                })
                .sub(text);
        }
        if !sub.appended_args
            && let Some(var) = git_read_only_but_for(&brace_expanded(words))
        {
            return Finding::new(
                Kind::Passthrough,
                format!(
                    "`{text}` requires approval: {var} is set in the environment it inherits, so git may work on another repository or configuration, or run a program."
                ),
            )
            .sub(text);
        }
        Finding::new(Kind::Passthrough, format!("`{text}` requires approval.")).sub(text)
    }

    /// Why git, run by `sub`, may take a planted directory for its repository: walking up
    /// from each directory `sub` may run in (the session's cwd joined with the command's
    /// `cd`s, as written and with links resolved) to the first one that holds `.git`, a
    /// directory on the way looks like a git directory ([`planted_git_dir`]), or the
    /// directory is not known. git's discovery takes such a directory for a bare repository
    /// and obeys its configuration (`core.fsmonitor` runs a command); the session's cwd may
    /// have been moved there by an earlier call's `cd`. `None` when no directory does.
    fn planted_repository(&self, sub: &SimpleCommand, ctx: &ToolUseContext) -> Option<String> {
        let Some(dirs) = self.resolve_in_dirs(".", &sub.cwd, &sub.other_cwds, ctx) else {
            return Some(
                "it runs in a directory not known here, which may be a planted git repository"
                    .into(),
            );
        };
        dirs.iter()
            .flat_map(|d| [d.clone(), resolve_symlinks(d)])
            .find_map(|d| planted_git_dir(&d))
            .map(|at| {
                format!(
                    "{} looks like a planted git repository (`HEAD`, `objects` and `refs` outside any `.git`)",
                    at.display()
                )
            })
    }

    /// Why git, run by `sub`, may run a program its repository's own files name
    /// ([`crate::git_config::repository_programs`]: `core.fsmonitor`, `diff.external`, a
    /// diff or filter driver, an index hook, the same in its submodules; a signing program
    /// or a merge driver for the commands that run them, told from `sub`'s arguments), in
    /// each directory `sub` may run in (as written and with links resolved); `Ok` with the
    /// names of the files that decided it. A directory not known here is no repository to
    /// read ([`Self::planted_repository`] asks about it).
    fn repository_programs(
        &self,
        sub: &SimpleCommand,
        ctx: &ToolUseContext,
    ) -> Result<Vec<String>, String> {
        let home = ctx.home().or(self.roots.home.as_deref());
        let Some(dirs) = self.resolve_in_dirs(".", &sub.cwd, &sub.other_cwds, ctx) else {
            return Err("it runs in a directory not known here".into());
        };
        // The words after `git`, as bash gives them (brace lists expanded); not known when
        // one is computed.
        let words = effective_words(sub).map(brace_expanded);
        let args: Option<Vec<&str>> = words.as_deref().and_then(|w| {
            w.iter()
                .skip(1)
                .map(|w| w.value.as_deref())
                .collect::<Option<Vec<&str>>>()
        });
        let mut seen: Vec<PathBuf> = Vec::new();
        let mut names = Vec::new();
        for d in dirs.iter().flat_map(|d| [d.clone(), resolve_symlinks(d)]) {
            if seen.contains(&d) {
                continue;
            }
            names.extend(crate::git_config::repository_programs(
                &d,
                home,
                args.as_deref(),
            )?);
            seen.push(d);
        }
        Ok(names)
    }

    fn check_command(
        &self,
        set: &RuleSet,
        tool: &dyn Tool,
        names: &[String],
        command: &str,
        ctx: &ToolUseContext,
    ) -> Finding {
        let trimmed = trim_command(command);
        let analysis = analyze(trimmed);
        // The repositories git's commands find are read once for the whole check: every
        // git command of the line, the decision and the read-only pass below.
        let _repositories = crate::git_config::ScanCache::enter();
        let mut f = self.check_analysis(set, tool, names, trimmed, &analysis, ctx);
        // git in a planted repository, or in one whose own files name a program git runs,
        // runs what its configuration names: no read, whatever else the command asks about
        // (plan mode refuses it).
        let planted_git = || {
            analysis.commands.iter().any(|c| {
                effective_words(c)
                    .and_then(|w| w.first())
                    .and_then(|w| w.value.as_deref())
                    .map(basename)
                    == Some("git")
                    && (self.planted_repository(c, ctx).is_some()
                        || self.repository_programs(c, ctx).is_err())
            })
        };
        f.read_only = Some(is_read_only_shell(&analysis) && !planted_git());
        f
    }

    /// The safety check of an `rm` (or another program that takes away what it is given:
    /// `unlink`, `truncate`, `shred`, `mv`, `rmdir`, or overwrites it: `sed -i`, `perl -i`,
    /// `cp /dev/null F`, `dd of=F`, `tee F`; [`takes_away_found`]) that `xargs` runs on what a
    /// pipeline's earlier stage prints ([`SimpleCommand::fed_by`]): fed by `find ROOTS EXPR`,
    /// it takes away what `find ROOTS EXPR -exec rm … {} +` would, and is checked as that
    /// command (`find ~ | xargs rm -rf` is a critical removal, `find . -name '*.pyc' | xargs
    /// rm` stays allowed, `find . -name main | xargs truncate -s0` empties a branch's ref);
    /// fed by `ls`, `echo` or `printf`, it is checked as given what they print
    /// ([`Self::takes_what_is_listed`]); an `rm` fed by anything else (`pwd`), a recursive
    /// one may remove a whole directory such as the home or the project, which cannot be
    /// checked, as is one fed by what is not known here (`xargs rm -rf < list`). So is one
    /// whose operands are what the producer prints ([`fed_taker`]), each one variable's or
    /// one substitution's (also after `./`), or holding the placeholder find or xargs fill
    /// in its script: a loop reading the stage's lines into the variables it removes (`find
    /// . -name main | while read f; do rm "$f"; done`, `done < <(find …)`), a `for` over
    /// substitutions (`for f in $(find …)`), the substitutions themselves (`rm $(find A)
    /// $(find B)`: each producer is checked), a shell script find runs (`-exec sh -c 'rm
    /// "$1"' _ {} \;`, `-exec sh -c 'rm {}' \;`). Only safety checks and denials count: the
    /// program itself is checked as before.
    fn removes_what_it_is_fed(
        &self,
        set: &RuleSet,
        tool: &dyn Tool,
        names: &[String],
        sub: &SimpleCommand,
        ctx: &ToolUseContext,
        analysis: &Analysis,
    ) -> Option<Finding> {
        let FedTaker {
            words,
            taker,
            loss,
            one_each,
        } = fed_taker(sub)?;
        let name = words.first()?.value.as_deref().map(basename)?;
        let mut exec = taker.clone();
        exec.push(literal_word(if one_each { ";" } else { "+" }));
        let text = sub.raw_text();
        let Some(first) = sub.fed_by.as_ref() else {
            // Fed by what is not known here (a redirected or compound stage, a file: `xargs
            // rm -rf < list`, `xargs -a list rm -r`).
            return (name == "rm" && changes_trees("rm", words)).then(|| {
                let why = format!(
                    "`{text}` removes, with everything under them, paths it reads from its input, which may be a whole directory such as the home or the project and cannot be checked"
                );
                Finding::safety_ask(why, text)
            });
        };
        // Each command whose output it is fed (`rm $(find A) $(find B)`), behind its
        // wrappers (`command find`, `env find`); what none of them that is no find prints
        // may be anything.
        let mut unknown: Option<String> = None;
        for producer in std::iter::once(first).chain(&sub.also_fed_by) {
            let producer = behind_wrappers(producer);
            let produced = producer
                .iter()
                .map(|w| w.raw.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            let program = producer.first()?.value.as_deref().map(basename);
            if program == Some("find") {
                if let Some(f) = self.takes_what_find_finds(
                    set, tool, names, sub, &exec, producer, loss, ctx, analysis,
                ) {
                    return Some(f);
                }
                continue;
            }
            if let Some(listing) = Listing::of(producer) {
                let given = Given {
                    text: &text,
                    taker: &taker,
                    loss,
                    produced: &produced,
                };
                if let Some(f) = self
                    .takes_what_is_listed(set, tool, names, sub, &given, &listing, ctx, analysis)
                {
                    return Some(f);
                }
            }
            unknown.get_or_insert(produced);
        }
        let produced = unknown?;
        (name == "rm" && changes_trees("rm", words)).then(|| {
            let why = format!(
                "`{text}` removes, with everything under them, the paths `{produced}` prints, which may be a whole directory such as the home or the project and cannot be checked"
            );
            Finding::safety_ask(why, text)
        })
    }

    /// [`Self::removes_what_it_is_fed`] for a program fed by `find ROOTS EXPR` (`producer`):
    /// checked as `find ROOTS EXPR -exec PROG … {} +` (`exec`: the program's words with `{}`
    /// and the end of the action), each action that prints made that action; safety checks
    /// and denials only.
    #[allow(clippy::too_many_arguments)]
    fn takes_what_find_finds(
        &self,
        set: &RuleSet,
        tool: &dyn Tool,
        names: &[String],
        sub: &SimpleCommand,
        exec: &[Word],
        producer: &[Word],
        loss: Loss,
        ctx: &ToolUseContext,
        analysis: &Analysis,
    ) -> Option<Finding> {
        let text = sub.raw_text();
        let produced = producer
            .iter()
            .map(|w| w.raw.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        // `find … -exec rm … {} +`: the same removal, recursive when the rm is.
        let mut find = sub.clone();
        let exec: Vec<Word> = std::iter::once(literal_word("-exec"))
            .chain(exec.iter().cloned())
            .collect();
        // What it prints is what goes to rm: each action that prints (`-print`,
        // `-printf FMT`, `-ls`, `-fprint FILE`, … in the branch that prints: `-name x
        // -prune -o -name '*.log' -print`) becomes the removal; with none, `-print` is
        // implied at the end.
        let mut words = Vec::new();
        let mut printed = false;
        let mut i = 0;
        while i < producer.len() {
            let takes = match producer[i].value.as_deref() {
                Some("-print" | "-print0" | "-ls") => Some(1),
                Some("-printf" | "-fprint" | "-fprint0" | "-fls") => Some(2),
                Some("-fprintf") => Some(3),
                _ => None,
            };
            match takes {
                Some(n) => {
                    words.extend(exec.iter().cloned());
                    printed = true;
                    i += n;
                }
                None => {
                    words.push(producer[i].clone());
                    i += 1;
                }
            }
        }
        if !printed {
            words.extend(exec);
        }
        find.words = words;
        find.appended_args = false;
        find.filled_in_place = false;
        find.run_by_xargs = false;
        find.fed_by = None;
        find.also_fed_by = Vec::new();
        find.placeholder = None;
        let f = self.check_subcommand(set, tool, names, &find, ctx, analysis);
        (f.kind == Kind::Deny || (f.kind == Kind::Ask && f.immune)).then(|| {
            let message = format!(
                "`{text}` {} what `{produced}` finds: {}",
                loss.verbs(),
                f.message
            );
            Finding { message, ..f }.sub(text.clone())
        })
    }

    /// [`Self::removes_what_it_is_fed`] for a program fed by `ls`, `echo` or `printf`
    /// ([`Listing`]: `rm $(ls *.log)`, `ls -a | xargs rm`, `echo .git/config | xargs rm`).
    /// `ls` prints the operands it is given that are no directories (and those that are,
    /// with `-d`) as written, and the names of what a directory it lists holds, bare, hidden
    /// ones only with `-a`, `-A` or `-f`; `echo` and `printf '%s\n'` print their operands.
    /// So the program takes away what it would given those operands and names, in the
    /// directory it runs in (`rm .git/config` for `ls .git/config`, `rm main` after `cd
    /// .git/refs/heads` for `ls`, as `rm *` there): checked so, safety checks and denials
    /// only. A protected name a listed directory holds and shows asks too (`.bashrc` for
    /// `ls -a ~`; every protected name but `config.fish` is hidden).
    #[allow(clippy::too_many_arguments)]
    fn takes_what_is_listed(
        &self,
        set: &RuleSet,
        tool: &dyn Tool,
        names: &[String],
        sub: &SimpleCommand,
        given: &Given<'_>,
        listing: &Listing,
        ctx: &ToolUseContext,
        analysis: &Analysis,
    ) -> Option<Finding> {
        let Given {
            text,
            taker,
            loss,
            produced,
        } = *given;
        let dir_of = |w: &Word| -> Option<Vec<PathBuf>> {
            let v = w
                .value
                .as_deref()
                .filter(|_| !w.glob && listing.lists_directories)?;
            let paths = self.resolve_in_dirs(v, &sub.cwd, &sub.other_cwds, ctx)?;
            paths.iter().all(|p| p.is_dir()).then_some(paths)
        };
        let mut listed: Vec<PathBuf> = Vec::new();
        let mut printed: Vec<Word> = Vec::new();
        for w in &listing.operands {
            match dir_of(w) {
                Some(dirs) => listed.extend(dirs),
                None => printed.push(w.clone()),
            }
        }
        if listing.operands.is_empty() && listing.lists_directories {
            listed.extend(self.resolve_in_dirs(".", &sub.cwd, &sub.other_cwds, ctx)?);
        }
        // The names the listed directories show, as `ls` prints them.
        let mut shown: Vec<OsString> = Vec::new();
        for dir in &listed {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for entry in entries.flatten().take(MAX_TREE_ENTRIES) {
                let name = entry.file_name();
                if !listing.hidden && name.as_encoded_bytes().first() == Some(&b'.') {
                    continue;
                }
                let is_dir = || entry.file_type().is_ok_and(|t| t.is_dir());
                if crate::path::protected_name_kind(&name, is_dir).is_some() {
                    let why = format!(
                        "`{text}` may {} {}, which `{produced}` lists: a protected name",
                        loss.verb(),
                        name.to_string_lossy()
                    );
                    return Some(Finding::safety_ask(why, text.to_owned()));
                }
                // A link is removed or moved itself, not what it leads to; one written is
                // written through, wherever it leads.
                let link = entry.file_type().is_ok_and(|t| t.is_symlink());
                if link && matches!(loss, Loss::Deletes | Loss::MovesAway) {
                    continue;
                }
                // The other names of one directory all lead where it is (a protected name
                // is asked about above): some of them tell.
                if link || shown.len() < MAX_LISTED_NAMES {
                    shown.push(name);
                }
            }
        }
        printed.extend(shown.iter().map(|name| {
            let name = name.to_string_lossy().into_owned();
            literal_word(&name)
        }));
        if printed.is_empty() {
            return None;
        }
        // The operands and names it prints, given to the program in place of what it is
        // fed, in the directory it runs in.
        let mut as_given = sub.clone();
        as_given.words = taker
            .iter()
            .flat_map(|w| {
                if w.raw.contains("{}") {
                    printed
                        .iter()
                        .map(|p| {
                            if w.raw == "{}" {
                                p.clone()
                            } else {
                                Word {
                                    raw: w.raw.replace("{}", &p.raw),
                                    value: match (&w.value, &p.value) {
                                        (Some(v), Some(pv)) => Some(v.replace("{}", pv)),
                                        _ => None,
                                    },
                                    plain: w.plain && p.plain,
                                    glob: w.glob || p.glob,
                                }
                            }
                        })
                        .collect::<Vec<_>>()
                } else {
                    vec![w.clone()]
                }
            })
            .collect();
        as_given.appended_args = false;
        as_given.filled_in_place = false;
        as_given.run_by_xargs = false;
        as_given.fed_by = None;
        as_given.also_fed_by = Vec::new();
        as_given.placeholder = None;
        let f = self.check_subcommand(set, tool, names, &as_given, ctx, analysis);
        (f.kind == Kind::Deny || (f.kind == Kind::Ask && f.immune)).then(|| {
            let message = format!(
                "`{text}` {} what `{produced}` lists: {}",
                loss.verbs(),
                f.message
            );
            Finding { message, ..f }.sub(text.to_owned())
        })
    }

    fn check_analysis(
        &self,
        set: &RuleSet,
        tool: &dyn Tool,
        names: &[String],
        trimmed: &str,
        analysis: &Analysis,
        ctx: &ToolUseContext,
    ) -> Finding {
        let tname = tool.name();
        let full = vec![trimmed.to_owned()];
        let deny_msg =
            |c: &str| format!("Permission to use {tname} with command {c} has been denied.");
        // Exact deny on the full command.
        if let Some(r) = self.shell_rule(set, RuleBehavior::Deny, tool, names, &full, false) {
            return Finding::new(Kind::Deny, deny_msg(trimmed)).with_rule(Some(r));
        }
        let mut details = Vec::new();
        let mut findings = Vec::new();
        // The trees the finds of this command walk are walked once each.
        let _walks = WalkCache::enter();
        for sub in &analysis.commands {
            let f = self.check_subcommand(set, tool, names, sub, ctx, analysis);
            details.push(format!("{}: {}", sub.raw_text(), describe(&f)));
            findings.push(f);
            if let Some(f) = self.removes_what_it_is_fed(set, tool, names, sub, ctx, analysis) {
                details.push(format!("{}: {}", sub.raw_text(), describe(&f)));
                findings.push(f);
            }
        }
        // A redirection that empties what a loop or a script is fed (`for f in $(find …);
        // do : > "$f"; done`, `-exec sh -c ': > "$1"' _ {} \;`): checked as `truncate -s0`
        // of it.
        for r in &analysis.redirects {
            let Some(truncate) = truncation_as_command(r) else {
                continue;
            };
            if let Some(f) = self.removes_what_it_is_fed(set, tool, names, &truncate, ctx, analysis)
            {
                let shown = format!("> {}", r.target.raw);
                let message = f.message.replacen(
                    &format!("`{}`", truncate.raw_text()),
                    &format!("`{shown}`"),
                    1,
                );
                let f = Finding { message, ..f };
                details.push(format!("{shown}: {}", describe(&f)));
                findings.push(f);
            }
        }
        let mut redirect_findings = Vec::new();
        // What the line's commands fill with files not named (`tar -xf a.tar`).
        let filled = std::cell::OnceCell::new();
        for r in &analysis.redirects {
            let use_ = if r.kind == RedirectKind::Read {
                PathUse::Read
            } else {
                PathUse::Write
            };
            // A `~` with no home directory known: a computed target, as `$HOME/x` is.
            let no_home = r.target.value.as_ref().and_then(|_| {
                self.tilde_without_home(&literal_tilde(&r.target), &r.cwd, &r.other_cwds, ctx)
            });
            let f = match r.kind {
                RedirectKind::FdDup => continue,
                _ if no_home.is_some() => {
                    let message = format!(
                        "A redirection to a path under the home directory ({}), which is not known here, cannot be checked.",
                        r.target.raw
                    );
                    let spelled = no_home.as_deref().unwrap_or_default();
                    self.computed_path(set, spelled, use_, false, message, ctx)
                }
                _ => match &r.target.value {
                    None => {
                        let message = format!(
                            "A redirection to a computed target ({}) cannot be checked.",
                            r.target.raw
                        );
                        self.computed_path(set, &r.target.raw, use_, false, message, ctx)
                    }
                    // Bash expands a glob in a redirection's target when it matches one
                    // file: `cat < .e*` reads `.env`.
                    Some(_) if r.target.glob => self.unchecked_glob(
                        set,
                        &r.target.raw,
                        use_,
                        GlobReading::of(analysis),
                        format!(
                            "A redirection to a glob pattern ({}) cannot be checked: bash \
                             redirects to the file it matches.",
                            r.target.raw
                        ),
                        ctx,
                    ),
                    Some(v)
                        if (r.kind == RedirectKind::Read && is_harmless_device(v))
                            || harmless_write_target(v, &analysis.redirects) =>
                    {
                        continue;
                    }
                    Some(_) => {
                        let access = if r.kind == RedirectKind::Read {
                            FileAccess::Read
                        } else {
                            FileAccess::Write
                        };
                        let mut worst: Option<Finding> = None;
                        let v = literal_tilde(&r.target);
                        let Some(paths) = self.resolve_in_dirs(&v, &r.cwd, &r.other_cwds, ctx)
                        else {
                            let f = self.computed_path(
                                set,
                                &format!("$PWD/{v}"),
                                use_,
                                false,
                                format!(
                                    "A redirection to a relative path ({}) after a `cd` to a directory that is not known cannot be checked.",
                                    r.target.raw
                                ),
                                ctx,
                            );
                            details.push(format!("redirect {}: {}", r.target.raw, describe(&f)));
                            redirect_findings.push(f.sub(format!("redirect to {}", r.target.raw)));
                            continue;
                        };
                        for p in paths {
                            let f = self.check_path(set, &p, access, ctx);
                            let f = match self.under_filled(
                                set,
                                &p,
                                use_,
                                filled.get_or_init(|| self.filled_before(analysis, None, ctx)),
                                &format!("> {}", r.target.raw),
                                false,
                                ctx,
                            ) {
                                Some(u) if f.kind == Kind::Allow => u,
                                Some(u) => pick(Some(f), u),
                                None => f,
                            };
                            worst = Some(match worst {
                                None => f,
                                Some(w) if w.kind == Kind::Allow => f,
                                Some(w) if f.kind == Kind::Allow => w,
                                Some(w) => pick(Some(w), f),
                            });
                        }
                        let f = worst.unwrap_or_else(|| Finding::new(Kind::Ask, ""));
                        if self.through_proc(&v, &r.cwd, &r.other_cwds, ctx) {
                            let unchecked = self.unchecked_path(
                                set,
                                use_,
                                format!(
                                    "A redirection through /proc ({}) names what the shell sees and cannot be checked.",
                                    r.target.raw
                                ),
                                ctx,
                            );
                            pick(Some(f), unchecked)
                        } else {
                            f
                        }
                    }
                },
            };
            details.push(format!("redirect {}: {}", r.target.raw, describe(&f)));
            redirect_findings.push(f.sub(format!("redirect to {}", r.target.raw)));
        }
        let attach = |mut f: Finding, details: &[String]| {
            f.details = details.to_vec();
            f
        };
        if let Some(f) = findings
            .iter()
            .chain(&redirect_findings)
            .find(|f| f.kind == Kind::Deny)
        {
            return attach(f.clone(), &details);
        }
        if let Some(r) = self.shell_rule(set, RuleBehavior::Ask, tool, names, &full, false) {
            return attach(
                Finding::new(
                    Kind::Ask,
                    format!("`{trimmed}` requires approval (ask rule)."),
                )
                .with_rule(Some(r))
                .immune(),
                &details,
            );
        }
        if let Some(f) = findings
            .iter()
            .chain(&redirect_findings)
            .find(|f| f.kind == Kind::Ask && f.immune)
        {
            return attach(f.clone(), &details);
        }
        if analysis.truncated {
            // Commands below the depth limit were listed without their context: what they
            // touch may not have been checked against the path rules. One too long is not
            // analysed at all.
            let why = if trimmed.len() > MAX_ANALYZED_CHARS {
                format!(
                    "the command is longer than {MAX_ANALYZED_CHARS} bytes, too long to check everything it runs"
                )
            } else if let Some(why) = analysis
                .complex
                .iter()
                .find(|why| why.starts_with(crate::bash::parse::TOO_MANY_COMMANDS))
            {
                why.clone()
            } else {
                "the command is nested too deeply to check everything it runs".to_owned()
            };
            return attach(Finding::needs_approval(why), &details);
        }
        if !analysis.incomplete.is_empty() {
            // Parsed, but what runs is rebound out of sight (`hash -p`, an alias, `PS4`).
            let why = format!(
                "what the command runs cannot all be seen ({})",
                analysis.incomplete.join("; ")
            );
            return attach(Finding::needs_approval(why), &details);
        }
        // A command name bash makes from a brace list (`r{m,} -rf ~` is `rm r -rf ~`; `{rm,-rf}
        // ~`, which the parser reads as a broken group) hides what runs from every check, the
        // bypass-proof ones included, and is never a program's name: it always asks. A glob
        // may be one (`./target/*/app`): it asks only where Bash deny or ask rules could be
        // dodged.
        let guarded = [RuleBehavior::Deny, RuleBehavior::Ask]
            .into_iter()
            .any(|b| {
                self.content_rules(set, b, tool, names, Some("Bash"))
                    .next()
                    .is_some()
            });
        let made_by_bash = |w: &Word| {
            brace_outside_expansions(&w.raw)
                || (w.value.is_none() && expand_braces(&w.raw).is_some())
                || (w.glob && guarded)
        };
        if let Some(name) = analysis.commands.iter().find_map(|c| {
            // The name as written, and the name each wrapper runs (`nohup r{m,} x`).
            let mut words = &c.words[..];
            for _ in 0..=crate::bash::commands::MAX_WRAPPERS {
                let w = words.first()?;
                if made_by_bash(w) {
                    return Some(w.raw.clone());
                }
                let (starts, _) = wrapped_command_starts(words)?;
                words = &words[starts[0]..];
            }
            None
        }) {
            // (A `{fd}` or digits written before the command name are a redirection's
            // descriptor to bash, which the parser may read as a brace word: said as what
            // it is.)
            let why = if analysis.complex.iter().any(|c| c == REDIRECT_BEFORE_NAME) {
                format!("{REDIRECT_BEFORE_NAME}, so what runs cannot be checked")
            } else {
                format!(
                    "the command name `{name}` is a brace list or a glob that bash expands, so what runs cannot be checked"
                )
            };
            return attach(Finding::needs_approval(why), &details);
        }
        // A glob among a wrapper's own words (`nice -n * push`, where `*` may be `5 git`):
        // the words bash makes of it may move where the command it runs starts, and be its
        // name, so no reading of the command is sure. Asked as a globbed command name is,
        // where Bash deny or ask rules could be dodged.
        if guarded
            && let Some((wrapper, glob)) =
                crate::bash::commands::glob_among_wrapper_words(&analysis.commands)
        {
            let why = format!(
                "`{wrapper}`'s own word `{glob}` is a glob that bash expands, which may change where the command it runs starts, so what runs cannot be checked"
            );
            return attach(Finding::needs_approval(why), &details);
        }
        // A glob among the words (`git pu[s]h`, `npm publis?`) that bash may expand to a
        // word a Bash deny or ask rule names for that program: the rule was matched against
        // the words as written, not against what runs (a file named `push`, which the line
        // may make itself, makes it `git push`). Asked even in bypass mode, as a globbed
        // command name is.
        if let Some(why) = self.glob_may_meet_rules(set, tool, names, analysis) {
            let reason =
                format!("{why}; a Bash deny or ask rule cannot be checked against what it runs");
            return attach(Finding::unproven(&why, reason), &details);
        }
        if !analysis.is_parsed() {
            // What the parser could not read bash may run all the same (`{rm,-rf,~}` is
            // `rm -rf ~` to bash, a broken group to the parser): nothing, the bypass-proof
            // checks included, has seen it.
            let why = format!(
                "{}; what runs cannot be checked",
                analysis.complex.join("; ")
            );
            return attach(Finding::needs_approval(why), &details);
        }
        // find/xargs taking a program's subcommand from their input (`xargs cargo`) could
        // run what a deny or ask rule for that program names (`Bash(cargo publish:*)`): asked
        // about even in bypass mode, when such a rule exists, or one whose first word is not
        // written out (`Bash(* publish:*)`) and may name it. A rule for another program is
        // matched or not whatever the subcommand.
        if let Some(program) = analysis.subcommand_from_input.iter().find(|program| {
            [RuleBehavior::Deny, RuleBehavior::Ask]
                .into_iter()
                .any(|b| {
                    self.content_rules(set, b, tool, names, Some("Bash"))
                        .filter_map(|r| r.shell.as_ref())
                        .any(|p| {
                            p.first_word()
                                .is_none_or(|w| basename(w) == program.as_str())
                        })
                })
        }) {
            let why = format!("{INPUT_SUBCOMMAND} (`{program}`)");
            let reason = format!(
                "{why}; a Bash deny or ask rule for `{program}` cannot be checked against what it runs"
            );
            return attach(Finding::unproven(&why, reason), &details);
        }
        // A command whose name or script is computed (`$X -rf x`, `eval "$y"`, a shell
        // reading its script from stdin, git configured to run an alias or a pager) could be
        // what a deny or ask rule names: with such rules, it is asked about even in bypass
        // mode, as a path that cannot be computed is with path rules. So is it while the
        // settings block reads outside the working directories: what it reads is not seen.
        let blocked_reads = ctx.permission().block_reads_outside_working_dirs;
        if analysis.computed_command && (guarded || blocked_reads) {
            let why = if analysis.is_simple() && !analysis.computed_why.is_empty() {
                analysis.computed_why.join("; ")
            } else if analysis.is_simple() {
                "what it runs is computed".to_owned()
            } else {
                analysis
                    .complex
                    .iter()
                    .chain(&analysis.computed_why)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            let reason = if guarded {
                format!("{why}; a Bash deny or ask rule cannot be checked against what it runs")
            } else {
                format!(
                    "{why}; what it reads may be outside the working directories (`permissions.blockReadsOutsideWorkingDirectories`)"
                )
            };
            return attach(Finding::unproven(&why, reason), &details);
        }
        if !analysis.is_simple() {
            let why = analysis.complex.join("; ");
            return attach(
                Finding::new(
                    Kind::Ask,
                    format!("This command cannot be proven safe and needs approval: {why}."),
                )
                .reason(DecisionReason::Other { reason: why }),
                &details,
            );
        }
        let cds = analysis
            .commands
            .iter()
            .filter(|c| changes_directory(c))
            .count();
        if cds > 1 {
            return attach(
                Finding::new(
                    Kind::Ask,
                    "Commands that change directory more than once need approval.",
                ),
                &details,
            );
        }
        if cds == 1
            && analysis
                .commands
                .iter()
                .any(|c| effective_name(c) == Some("git"))
        {
            return attach(
                Finding::new(
                    Kind::Ask,
                    "Commands that change directory and run git need approval (a bare repository can run code).",
                ),
                &details,
            );
        }
        if let Some(r) = self
            .shell_rule(set, RuleBehavior::Allow, tool, names, &full, false)
            .filter(|_| {
                self.content_rules(set, RuleBehavior::Allow, tool, names, Some("Bash"))
                    .any(|r| matches!(r.shell, Some(ShellPattern::Exact(ref e)) if e == trimmed))
            })
            && redirect_findings.iter().all(|f| f.kind == Kind::Allow)
        {
            return attach(Finding::new(Kind::Allow, "").with_rule(Some(r)), &details);
        }
        if analysis.commands.is_empty() && redirect_findings.is_empty() {
            // Nothing runs: a comment, an empty line, a bare `[[ test ]]`.
            return attach(
                Finding::new(Kind::Allow, "").reason(DecisionReason::Other {
                    reason: "the command runs nothing".into(),
                }),
                &details,
            );
        }
        let not_allowed: Vec<&Finding> = findings
            .iter()
            .chain(&redirect_findings)
            .filter(|f| f.kind != Kind::Allow)
            .collect();
        if not_allowed.is_empty() {
            // Report the first rule that allowed a subcommand, else the first grant that is
            // not a read-only command's (`ls && touch b` is allowed by acceptEdits mode),
            // else the first reason.
            let all = || findings.iter().chain(&redirect_findings);
            let read_only = |f: &Finding| matches!(&f.reason, Some(DecisionReason::Other { reason }) if reason.ends_with("is a read-only command"));
            let mut f = all()
                .find(|f| f.rule.is_some())
                .or_else(|| all().find(|f| !read_only(f)))
                .or_else(|| all().next())
                .cloned()
                .unwrap_or_else(|| Finding::new(Kind::Allow, ""));
            f.kind = Kind::Allow;
            return attach(f, &details);
        }
        let mut f = if not_allowed.len() == 1 {
            not_allowed[0].clone()
        } else {
            Finding::new(
                Kind::Passthrough,
                format!(
                    "This command requires approval for: {}.",
                    not_allowed
                        .iter()
                        .filter_map(|f| f.subcommand.clone())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        };
        let mut suggestions: Vec<RuleValue> = Vec::new();
        for (sub, finding) in analysis.commands.iter().zip(&findings) {
            if finding.kind == Kind::Allow || is_transparent(sub) {
                continue;
            }
            let rv = RuleValue {
                tool_name: tname.to_owned(),
                rule_content: Some(prefix_suggestion(sub)),
            };
            if !suggestions.contains(&rv) && suggestions.len() < 5 {
                suggestions.push(rv);
            }
        }
        if !suggestions.is_empty() {
            f.suggestions.push(PermissionUpdate::AddRules {
                rules: suggestions,
                behavior: RuleBehavior::Allow,
                destination: UpdateDestination::LocalSettings,
            });
        }
        attach(f, &details)
    }

    /// Whether `rule` (one rule string) matches this call, with the engine's matcher and
    /// "any reading" semantics (as for deny rules): the tool name, then the content through
    /// the tool's permission subject, or a `Tool(param:value)` rule's field in the input
    /// (`Bash(run_in_background:true)`). For hook `if` conditions.
    pub fn rule_matches(
        &self,
        rule: &str,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolUseContext,
    ) -> bool {
        matches_rule_with_roots(rule, tool, input, ctx, self.roots.clone())
    }
}

/// Whether one rule string matches a call (see [`PermissionEngine::rule_matches`]), with
/// path roots taken from `ctx` (its cwd and home). A malformed rule matches nothing.
pub fn matches_rule(rule: &str, tool: &dyn Tool, input: &Value, ctx: &ToolUseContext) -> bool {
    let mut roots = PathRoots::for_cwd(ctx.cwd());
    roots.home = ctx.home().map(Path::to_path_buf);
    matches_rule_with_roots(rule, tool, input, ctx, roots)
}

/// Whether one rule string, read as an **allow** rule, covers all of a call: the engine
/// with that rule as its only rule allows the call, by the rule or by what it allows without
/// one (a read-only subcommand). For a shell command every subcommand must be allowed so, and its
/// redirections and paths pass the path checks: `Bash(npm test *)` covers `npm test && npm
/// test --ci`, not `npm test; rm -rf x` nor `npm test > ~/x`. A malformed rule covers
/// nothing. For hooks: an approver chosen by an `if` approves only what its `if` covers.
pub fn covers_as_allow_rule(
    rule: &str,
    tool: &dyn Tool,
    input: &Value,
    ctx: &ToolUseContext,
) -> bool {
    let mut roots = PathRoots::for_cwd(ctx.cwd());
    roots.home = ctx.home().map(Path::to_path_buf);
    let Some((engine, set, names)) = one_rule_engine(RuleBehavior::Allow, rule, tool, input, roots)
    else {
        return false;
    };
    if engine
        .tool_wide(&set, RuleBehavior::Allow, tool, &names)
        .is_some()
    {
        return true;
    }
    matches!(
        engine.check_subject(&set, tool, &names, input, ctx),
        Some(f) if f.kind == Kind::Allow
    )
}

/// An engine whose only rule is `rule` (in path terms for the call: [`rule_in_path_terms`])
/// as a rule of behaviour `b`, its rules and the tool's names; `None` when the rule is
/// malformed.
fn one_rule_engine(
    b: RuleBehavior,
    rule: &str,
    tool: &dyn Tool,
    input: &Value,
    roots: PathRoots,
) -> Option<(PermissionEngine, Arc<RuleSet>, Vec<String>)> {
    let rule = SourcedRule {
        source: RuleSource::Session,
        rule: rule_in_path_terms(rule, tool, input).into_owned(),
    };
    let mut perm = ToolPermissionContext::default();
    match b {
        RuleBehavior::Allow => perm.allow.push(rule),
        RuleBehavior::Deny => perm.deny.push(rule),
        RuleBehavior::Ask => perm.ask.push(rule),
    }
    let (engine, diags) = PermissionEngine::new_lenient(&perm, roots);
    if diags.iter().any(|d| d.error) {
        return None;
    }
    let set = engine.snapshot();
    Some((engine, set, tool_names(tool)))
}

/// A path rule in the call's own tool's name (`Write(*.ts)` for a Write, `Grep(src/**)` for
/// a Grep) as the Edit or Read rule for its path: a hook's `if` filters the calls of a file
/// tool by path so. A `Tool(param:value)` rule on one of the tool's other fields
/// (`Write(content:*TODO*)`, `Grep(pattern:TODO)`) stays as written: it names a field, not a
/// path.
fn rule_in_path_terms<'a>(
    rule: &'a str,
    tool: &dyn Tool,
    input: &Value,
) -> std::borrow::Cow<'a, str> {
    let names_a_field = || {
        let parsed = crate::rule::parse_rule_lenient(rule);
        parsed.content.as_deref().is_some_and(|c| {
            crate::rule::field_rule(&parsed.tool_name, c).is_some_and(|f| !f.primary)
        })
    };
    match (tool.permission_subject(input), rule.find('(')) {
        (Some(PermissionSubject::Path { access, .. }), Some(open))
            if !matches!(&rule[..open], "Read" | "Edit")
                && tool_names(tool).iter().any(|n| n == &rule[..open])
                && !names_a_field() =>
        {
            let kind = match access {
                FileAccess::Write => "Edit",
                FileAccess::Read => "Read",
            };
            format!("{kind}{}", &rule[open..]).into()
        }
        _ => rule.into(),
    }
}

fn matches_rule_with_roots(
    rule: &str,
    tool: &dyn Tool,
    input: &Value,
    ctx: &ToolUseContext,
    roots: PathRoots,
) -> bool {
    let Some((engine, set, names)) = one_rule_engine(RuleBehavior::Deny, rule, tool, input, roots)
    else {
        return false;
    };
    if engine
        .tool_wide(&set, RuleBehavior::Deny, tool, &names)
        .is_some()
    {
        return true;
    }
    // Claude Code's `Tool(param:value)` (`Bash(run_in_background:true)`,
    // `mcp__srv__tool(repo:secret-*)`): the call's top-level field has that value, as a deny
    // rule of that form matches it. A tool whose content has a reading of its own (a
    // command, a name, a path) is matched by that reading too, below.
    if field_rule_hit(&set, RuleBehavior::Deny, tool, &names, input).is_some() {
        return true;
    }
    let Some(r) = set.rules.first() else {
        return false;
    };
    let name_applies = |n: &str| names.iter().any(|x| x == n);
    let applies = match tool.permission_subject(input) {
        Some(PermissionSubject::Command(_)) => name_applies(&r.tool_name) || r.tool_name == "Bash",
        Some(PermissionSubject::Path {
            access: FileAccess::Read,
            ..
        }) => r.tool_name == "Read",
        Some(PermissionSubject::Path {
            access: FileAccess::Write,
            ..
        }) => r.tool_name == "Edit" || r.tool_name == "Read",
        _ => name_applies(&r.tool_name),
    };
    if !applies {
        return false;
    }
    // A command that cannot be parsed: the hook runs (Claude Code's `if` fails open). So
    // does one with a glob that bash may expand to a word the rule names (`git pu[s]h` for
    // `Bash(git push:*)`), or a glob among a wrapper's own words (`nice -n * push`).
    if let Some(PermissionSubject::Command(command)) = tool.permission_subject(input)
        && let Some(pattern) = r.shell.as_ref()
    {
        let analysis = crate::bash::parse::analyze(&command);
        let nullglob = crate::bash::commands::may_turn_on_nullglob(&analysis.commands);
        if !analysis.is_parsed()
            || analysis
                .commands
                .iter()
                .any(|c| crate::bash::commands::glob_may_meet_rule(c, pattern, nullglob).is_some())
            || crate::bash::commands::glob_among_wrapper_words(&analysis.commands).is_some()
        {
            return true;
        }
    }
    match engine.check_subject(&set, tool, &names, input, ctx) {
        Some(f) => f.kind == Kind::Deny && f.rule.is_some(),
        None => false,
    }
}

/// `path` as a permission question names it: with where its links lead (`resolved`) when
/// that is another path, `/p/notes.txt (a link to /h/.ssh/id_rsa)` when `path` itself is the
/// link, `/p/out/x (through a link: /o/x)` when a directory above it is.
fn shown_with_link_target(path: &Path, resolved: &Path) -> String {
    if resolved == path {
        return path.display().to_string();
    }
    let own = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if own {
        format!("{} (a link to {})", path.display(), resolved.display())
    } else {
        format!(
            "{} (through a link: {})",
            path.display(),
            resolved.display()
        )
    }
}

/// The pattern of a `Skill` rule's content (`trimmed`, spaces taken off): without the
/// leading `/` of a slash command (`Skill(/greet)` names the skill `greet`, which the Skill
/// tool is given as `greet` or `/greet`), as Claude Code's Skill tool reads its rules. A
/// deny or ask `Skill(:*)` (or `Skill(/:*)`), a prefix rule with an empty prefix, reaches
/// every skill, as it does there.
fn skill_pattern(trimmed: &str, behavior: RuleBehavior) -> ShellPattern {
    let content = trimmed.trim_start_matches('/');
    if content == ":*" && behavior != RuleBehavior::Allow {
        return ShellPattern::parse("*");
    }
    ShellPattern::parse(content)
}

fn name_prefix_match(p: &ShellPattern, n: &str) -> bool {
    match p {
        ShellPattern::Prefix(prefix) => n
            .strip_prefix(prefix.as_str())
            .is_some_and(|rest| rest.starts_with([':', ' ', '/'])),
        _ => false,
    }
}

fn describe(f: &Finding) -> String {
    let kind = match f.kind {
        Kind::Allow => "allow",
        Kind::Ask => "ask",
        Kind::Deny => "deny",
        Kind::Passthrough => "needs approval",
    };
    match (&f.rule, &f.reason) {
        (Some(r), _) => format!(
            "{kind} by {} ({})",
            r.rule,
            crate::settings::source_name(r.source)
        ),
        (None, Some(DecisionReason::Other { reason })) => format!("{kind}: {reason}"),
        (None, Some(DecisionReason::Mode { mode })) => format!("{kind}: {} mode", mode.as_str()),
        (None, Some(DecisionReason::WorkingDir { reason })) => format!("{kind}: {reason}"),
        (None, Some(DecisionReason::SafetyCheck { reason })) => format!("{kind}: {reason}"),
        _ if !f.message.is_empty() => format!("{kind}: {}", f.message),
        _ => kind.to_owned(),
    }
}

fn pick(current: Option<Finding>, new: Finding) -> Finding {
    match current {
        None => new,
        Some(c) => {
            let rank = |f: &Finding| (f.kind, f.immune);
            if rank(&new) > rank(&c) { new } else { c }
        }
    }
}

/// The engine's own read-only analysis of a shell command, for plan mode: the parse is
/// simple, every command it runs is a built-in read-only command (a `bash -c`/`eval`/`xargs`
/// counts by the commands it runs, which are in the list too; one fed by `xargs`/`find
/// -exec` only when no argument appended to it can make it write or run a program), and no
/// redirection writes a file. Allow rules play no part.
fn is_read_only_shell(analysis: &Analysis) -> bool {
    analysis.is_simple()
        && analysis.commands.iter().all(|c| {
            is_transparent(c)
                || effective_words(c).is_some_and(|w| {
                    is_read_only(w) && (!c.appended_args || reads_only_whatever_is_appended(w))
                })
        })
        && analysis.redirects.iter().all(|r| match r.kind {
            RedirectKind::Write => {
                r.target.value.as_deref().is_some_and(|v| {
                    !r.target.glob && harmless_write_target(v, &analysis.redirects)
                })
            }
            RedirectKind::Read | RedirectKind::FdDup => true,
        })
}

/// What a `find` that deletes (`-delete`, or an `-exec rm` of what it finds) deletes.
#[derive(Debug, Clone)]
struct FindDeletion {
    /// Where its roots start.
    roots_at: usize,
    /// Where its expression starts.
    expression_at: usize,
    /// Nothing filters what it deletes: no test ANDed before the deletion, or one that every
    /// name passes (`-mindepth 1`, `-name '*'`, `-true`). A test after the deletion (find
    /// deletes a file before it tests it), a negated one (`! -name x`) or one with another
    /// branch around it (`-name .git -prune -o -delete`) filters nothing.
    everything: bool,
    /// What its ANDed name filters let through of the protected names: the narrowest of
    /// them (`-name '*.pyc'` rules them all out), [`FindNameFilter::MayMatch`] without one.
    names: FindNameFilter,
    /// Its ANDed name tests, each with its `-o` alternatives (`-name '*.pyc'` is one test
    /// of one pattern, `\( -name a -o -name b \)` one of two): a name passes when each test
    /// has a pattern that matches it ([`FindNameTests`]).
    name_tests: Vec<Vec<String>>,
    /// It removes what it finds with everything under it (`-exec rm -r`).
    recursive: bool,
    /// What it does to what it finds: deletes it (`-delete`, `-exec rm`), moves it away,
    /// empties or overwrites it (`-exec mv`, `truncate`, `sed -i`: [`takes_away_found`]).
    loss: Loss,
    /// It follows links (`-L`, `-follow`; `-H` only for its roots: `roots_follow`).
    follows_links: bool,
    /// It follows links given as its roots (`-H`, `-L`, `-follow`).
    roots_follow: bool,
}

/// What a find that deletes under `dir` with name filters ([`FindNameTests`]) may take of a
/// protected item anywhere below `dir`: a name the filters let through inside a protected
/// directory (`.git`, `.ssh`, …: `-name main` finds a branch's ref, `-name '*.pack'` git's
/// packs), or, for a recursive removal (`-exec rm -r`, `xargs rm -r`), a protected item
/// below a directory the filters let through, which goes with it (`-name lib` removes
/// `vendor/lib/.git`). The whole tree is walked, links followed only when find follows them
/// (`follows_links`: `-L`, `-follow`; a loop ends at the bound); a tree of more than
/// [`MAX_TREE_ENTRIES`] entries counts as a match.
fn protected_names_matching(
    dir: &Path,
    tests: &[Vec<String>],
    recursive: bool,
    follows_links: bool,
) -> Option<String> {
    let tests = FindNameTests::new(tests);
    let walk = WalkCache::walk(dir, follows_links);
    for item in &walk.items {
        let passes = tests.passes(&item.name);
        if let Some(p) = &item.protected
            && passes
        {
            return Some(format!(
                "{}, inside the protected directory {}: its name filter matches it",
                item.path.display(),
                p.display()
            ));
        }
        if !item.own {
            continue;
        }
        // A protected item of its own that the filters let through (`.bashrc` deeper
        // down under `-name '*rc'`).
        if passes {
            return Some(format!(
                "{}, a protected item: its name filter matches it",
                item.path.display()
            ));
        }
        // Removed with a directory above it the filters let through (the one nearest the
        // root).
        if recursive {
            let mut above = Vec::new();
            let mut at = item.parent;
            while let Some(i) = at {
                above.push(i);
                at = walk.dirs[i].1;
            }
            if let Some(&m) = above.iter().rev().find(|&&i| tests.passes(&walk.dirs[i].0)) {
                let m = &walk.dirs[m].2;
                return Some(format!(
                    "{} with everything in it, which holds {}, a protected item: its name filter matches {}",
                    m.display(),
                    item.path.display(),
                    m.display()
                ));
            }
        }
    }
    walk.too_many.then(|| {
        format!(
            "what {} holds: it holds more than {MAX_TREE_ENTRIES} entries, too many to look for protected ones its filter reaches",
            dir.display()
        )
    })
}

/// What the walk of a tree found that a find's name filters may reach
/// ([`protected_names_matching`]): the entries inside protected directories and the
/// protected items of their own, in the order found, with the directories above them.
struct TreeWalk {
    /// Each directory walked: its name, the index of the one it is in (`None`: in the
    /// root), its path.
    dirs: Vec<(OsString, Option<usize>, PathBuf)>,
    /// The entries that matter, in the order found.
    items: Vec<TreeItem>,
    /// It holds more than [`MAX_TREE_ENTRIES`] entries (not all were walked).
    too_many: bool,
}

/// An entry of a [`TreeWalk`].
struct TreeItem {
    path: PathBuf,
    name: OsString,
    /// The directory it is in, among [`TreeWalk::dirs`] (`None`: the root).
    parent: Option<usize>,
    /// The protected directory it is inside.
    protected: Option<PathBuf>,
    /// It is a protected item of its own (`.git`, `.bashrc`, a link into one).
    own: bool,
}

impl TreeWalk {
    /// Walks the tree under `dir`, links followed when `follows_links` (a loop ends at the
    /// bound).
    fn new(dir: &Path, follows_links: bool) -> Self {
        let mut walk = TreeWalk {
            dirs: Vec::new(),
            items: Vec::new(),
            too_many: false,
        };
        let mut seen = 0usize;
        // Directories to list, with the protected directory they are in (or are) and their
        // index among `dirs`.
        let mut pending: Vec<(PathBuf, Option<PathBuf>, Option<usize>)> =
            vec![(dir.to_path_buf(), None, None)];
        while let Some((d, protected, index)) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in entries.flatten() {
                seen += 1;
                if seen > MAX_TREE_ENTRIES {
                    walk.too_many = true;
                    return walk;
                }
                let path = e.path();
                let is_dir = if follows_links {
                    path.is_dir()
                } else {
                    e.file_type().is_ok_and(|t| t.is_dir())
                };
                // A link find follows into a protected directory is in it, whatever its
                // name.
                let linked_into_protected = || {
                    follows_links
                        && is_dir
                        && e.file_type().is_ok_and(|t| t.is_symlink())
                        && std::fs::canonicalize(&path)
                            .is_ok_and(|real| crate::path::protected_reason(&real).is_some())
                };
                // `.config/git` and `.config/fish` are protected where `.config` is not.
                let config_dir = || {
                    is_dir
                        && d.file_name().is_some_and(|n| n == ".config")
                        && (e.file_name() == "git" || e.file_name() == "fish")
                };
                let own = protected.is_none()
                    && (crate::path::protected_name_kind(&e.file_name(), || is_dir).is_some()
                        || config_dir()
                        || linked_into_protected());
                if own || protected.is_some() {
                    walk.items.push(TreeItem {
                        path: path.clone(),
                        name: e.file_name(),
                        parent: index,
                        protected: protected.clone(),
                        own,
                    });
                }
                if is_dir {
                    walk.dirs.push((e.file_name(), index, path.clone()));
                    let inside = protected.clone().or_else(|| own.then(|| path.clone()));
                    pending.push((path, inside, Some(walk.dirs.len() - 1)));
                }
            }
        }
        walk
    }
}

thread_local! {
    /// The trees walked during the check of one command, by root and whether links were
    /// followed ([`WalkCache`]); `None` outside one.
    static WALKS: RefCell<Option<Walks>> = const { RefCell::new(None) };
}

/// The trees walked, by root and whether links were followed ([`WalkCache`]).
type Walks = HashMap<(PathBuf, bool), Rc<TreeWalk>>;

/// The walks of one command's check: each tree is walked once however many finds of the
/// command walk it (`rm $(find . -name a); rm $(find . -name b)`). Held while the check
/// runs; the walks are forgotten after it, so that the next command sees the tree as it is
/// then.
struct WalkCache {
    /// This guard started the cache (an inner check leaves it to the outer one).
    owner: bool,
}

impl WalkCache {
    fn enter() -> Self {
        let owner = WALKS.with(|w| {
            let mut w = w.borrow_mut();
            let starts = w.is_none();
            if starts {
                *w = Some(HashMap::new());
            }
            starts
        });
        WalkCache { owner }
    }

    /// The walk of the tree under `dir`, from the cache when a check runs.
    fn walk(dir: &Path, follows_links: bool) -> Rc<TreeWalk> {
        let key = (dir.to_path_buf(), follows_links);
        if let Some(walk) = WALKS.with(|w| w.borrow().as_ref().and_then(|m| m.get(&key).cloned())) {
            return walk;
        }
        let walk = Rc::new(TreeWalk::new(dir, follows_links));
        WALKS.with(|w| {
            if let Some(m) = w.borrow_mut().as_mut() {
                m.insert(key, walk.clone());
            }
        });
        walk
    }
}

impl Drop for WalkCache {
    fn drop(&mut self) {
        if self.owner {
            WALKS.with(|w| *w.borrow_mut() = None);
        }
    }
}

/// The name tests of a find ([`FindDeletion::name_tests`]), compiled once: a name passes
/// when each test has a pattern that matches it, read as `-iname` (case does not count) so
/// that it errs towards passing; a pattern that does not compile matches every name.
struct FindNameTests(Vec<Vec<Option<globset::GlobMatcher>>>);

impl FindNameTests {
    fn new(tests: &[Vec<String>]) -> Self {
        let compile = |pattern: &String| {
            globset::GlobBuilder::new(&pattern.replace("[^", "[!"))
                .literal_separator(true)
                .case_insensitive(true)
                .build()
                .ok()
                .map(|g| g.compile_matcher())
        };
        Self(
            tests
                .iter()
                .map(|alternatives| alternatives.iter().map(compile).collect())
                .collect(),
        )
    }

    fn passes(&self, name: &std::ffi::OsStr) -> bool {
        let name = name.to_string_lossy();
        self.0.iter().all(|alternatives| {
            alternatives
                .iter()
                .any(|m| m.as_ref().is_none_or(|m| m.is_match(&*name)))
        })
    }
}

/// `words` from the program that the wrappers before it run as it is (`sudo rm`, `env rm`,
/// `busybox rm`, `timeout 5 rm`, their options, numbers and `NAME=value` words skipped); the
/// last word stays ([`behind_wrappers`]).
fn behind_removal_wrappers(words: &[Word]) -> &[Word] {
    behind_wrappers(words)
}

/// Whether `word` is one variable's expansion and nothing else (`$f`, `"$f"`, `"${f}"`, a
/// positional parameter: `"$1"`, `"$@"`).
fn is_one_variable(word: &Word) -> bool {
    let text = word.raw.trim_matches('"');
    let name = text
        .strip_prefix("${")
        .and_then(|t| t.strip_suffix('}'))
        .or_else(|| text.strip_prefix('$'));
    word.value.is_none()
        && name.is_some_and(|n| {
            matches!(n, "@" | "*")
                || (!n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        })
}

/// Whether `word` is one command substitution and nothing else (`$(cmd)`, `` `cmd` ``,
/// `"$(cmd)"`).
fn is_one_substitution(word: &Word) -> bool {
    let raw = word.raw.as_str();
    let text = raw
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(raw);
    if word.value.is_some() {
        return false;
    }
    if let Some(body) = text.strip_prefix('`').and_then(|t| t.strip_suffix('`')) {
        return !body.contains('`');
    }
    let Some(body) = text.strip_prefix("$(") else {
        return false;
    };
    // The `)` that closes it is the last character (quotes and escapes skipped).
    let mut depth = 1usize;
    let mut chars = body.char_indices();
    let mut quote: Option<char> = None;
    while let Some((at, c)) = chars.next() {
        match (quote, c) {
            (Some('\''), '\'') => quote = None,
            (Some('\''), _) => {}
            (_, '\\') => {
                chars.next();
            }
            (Some('"'), '"') => quote = None,
            (None, '\'' | '"') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => {
                depth -= 1;
                if depth == 0 {
                    return at + 1 == body.len();
                }
            }
            _ => {}
        }
    }
    false
}

/// Whether `word` is an operand through which a command takes what it is fed
/// ([`SimpleCommand::fed_by`]): one variable's expansion (a loop's, a script's positional
/// parameters) or one substitution's output, also after a fixed `./` (`./"$1"`, `"./$f"`,
/// `./$(find …)`), or a word holding the placeholder find or xargs fill in the script it is
/// in (`placeholder`: `rm {}` in `-exec sh -c 'rm {}' \;`).
fn is_fed_operand(word: &Word, placeholder: Option<&str>) -> bool {
    if placeholder.is_some_and(|p| word.raw.contains(p)) {
        return true;
    }
    let bare = without_dot_segments(word);
    is_one_variable(&bare) || is_one_substitution(&bare)
}

/// A computed `word` without the `./` segments it starts with (`./"$1"` is `"$1"`,
/// `"./$f"` is `"$f"`); a word with a value is itself.
fn without_dot_segments(word: &Word) -> Word {
    if word.value.is_some() {
        return word.clone();
    }
    let (quote, mut raw) = match word.raw.strip_prefix('"') {
        Some(inner) => ("\"", inner),
        None => ("", word.raw.as_str()),
    };
    let mut stripped = false;
    while let Some(rest) = raw.strip_prefix("./") {
        raw = rest;
        stripped = true;
    }
    if !stripped {
        return word.clone();
    }
    Word {
        raw: format!("{quote}{raw}"),
        ..word.clone()
    }
}

/// A word that is `v` as written.
fn literal_word(v: &str) -> Word {
    Word {
        raw: v.into(),
        value: Some(v.into()),
        plain: true,
        glob: false,
    }
}

/// `w` with the placeholder `fill` (xargs's `-I X`; `{` for parallel's replacement strings,
/// `{}`, `{/}`, `{.}`, …) made `{}`, where find puts what it finds.
fn filled(w: &Word, fill: &str) -> Word {
    let replace = |s: &str| -> String {
        if fill != "{" {
            return s.replace(fill, "{}");
        }
        let mut out = String::new();
        let mut rest = s;
        while let Some(at) = rest.find('{') {
            out.push_str(&rest[..at]);
            match rest[at..].find('}') {
                Some(end) if !rest[at + 1..at + end].contains(['{', ' ']) => {
                    out.push_str("{}");
                    rest = &rest[at + end + 1..];
                }
                _ => {
                    out.push('{');
                    rest = &rest[at + 1..];
                }
            }
        }
        out.push_str(rest);
        out
    };
    let raw = replace(&w.raw);
    // A computed word that is plain once its placeholder is (`of="$PARALLEL_ARG"`).
    let value = match &w.value {
        Some(v) => Some(replace(v)),
        None => {
            (!raw.contains(['$', '`', '\\', '\'', '"', '*', '?', '[', '~'])).then(|| raw.clone())
        }
    };
    Word {
        raw,
        value,
        ..w.clone()
    }
}

/// A program fed what another prints ([`SimpleCommand::fed_by`]), as `find -exec` would run
/// it on the same files.
struct FedTaker<'a> {
    /// Its words, behind its wrappers.
    words: &'a [Word],
    /// Those words with `{}` where what it is fed goes: in place of the operands fed, of
    /// xargs's placeholder, or appended.
    taker: Vec<Word>,
    /// What it does to what it is fed.
    loss: Loss,
    /// It is given one file at a time (`-exec … \;`), not many (`+`).
    one_each: bool,
}

/// What the command `sub` takes away of what it is fed, if it is fed and takes it away:
/// `xargs` (or `parallel`, `xe`) runs it on its input, or its operands are what it is fed
/// through variables, substitutions or a placeholder ([`is_fed_operand`]).
fn fed_taker(sub: &SimpleCommand) -> Option<FedTaker<'_>> {
    let words = behind_removal_wrappers(effective_words(sub)?);
    words.first()?;
    let placeholder = sub.placeholder.as_deref();
    // One whose operands are what it is fed, through variables or substitutions, takes
    // it through them, as one `xargs` runs takes what it appends.
    let reads_its_operands = !sub.run_by_xargs
        && sub.fed_by.is_some()
        && words[1..].iter().any(|w| is_fed_operand(w, placeholder));
    if !sub.run_by_xargs && !reads_its_operands {
        return None;
    }
    let fill = placeholder.unwrap_or("{}");
    let in_place = sub.filled_in_place && words.iter().any(|w| w.raw.contains(fill));
    let taker: Vec<Word> = if reads_its_operands {
        let mut exec: Vec<Word> = words
            .iter()
            .enumerate()
            .map(|(i, w)| match placeholder {
                // Where the placeholder is, in the word (`of={}`, `{}/*`).
                Some(p) if i > 0 && w.raw.contains(p) => filled(w, p),
                _ if i > 0 && is_fed_operand(w, placeholder) => literal_word("{}"),
                _ => w.clone(),
            })
            .collect();
        exec.dedup_by(|a, b| a.raw == "{}" && b.raw == "{}");
        exec
    } else if in_place {
        words.iter().map(|w| filled(w, fill)).collect()
    } else {
        let mut exec = words.to_vec();
        exec.push(literal_word("{}"));
        exec
    };
    let loss = takes_away_found(&taker)?;
    Some(FedTaker {
        words,
        taker,
        loss,
        one_each: reads_its_operands || in_place,
    })
}

/// Whether `arg`, an operand of `sub`, is what find prints and `sub` takes away: checked as
/// `find … -exec` ([`PermissionEngine::removes_what_it_is_fed`]), which replaces the checks
/// of a computed path (`rm -rf $(find . -name __pycache__)` is checked by find's walk, not
/// as a substitution that may be the home).
fn fed_by_find(sub: &SimpleCommand, arg: &Word) -> bool {
    let Some(first) = sub.fed_by.as_ref() else {
        return false;
    };
    !sub.run_by_xargs
        && std::iter::once(first).chain(&sub.also_fed_by).all(|p| {
            behind_wrappers(p)
                .first()
                .and_then(|w| w.value.as_deref())
                .map(basename)
                == Some("find")
        })
        && is_fed_operand(arg, sub.placeholder.as_deref())
        && fed_taker(sub).is_some()
}

/// A redirection that empties what the statement it is in is fed (`: > "$1"` in a script
/// find runs, `> "$f"` in a loop over what find prints), as the command that does the same
/// (`truncate -s0 "$f"`), fed as it is.
fn truncation_as_command(r: &Redirect) -> Option<SimpleCommand> {
    let fed_by = r.fed_by.clone()?;
    (r.truncates && is_fed_operand(&r.target, r.placeholder.as_deref())).then(|| SimpleCommand {
        assignments: Vec::new(),
        words: vec![
            literal_word("truncate"),
            literal_word("-s0"),
            r.target.clone(),
        ],
        appended_args: false,
        filled_in_place: false,
        cwd: r.cwd.clone(),
        other_cwds: r.other_cwds.clone(),
        transparent: false,
        piped_input: false,
        fed_by: Some(fed_by),
        also_fed_by: Vec::new(),
        placeholder: r.placeholder.clone(),
        run_by_xargs: false,
        set_by_loops: Vec::new(),
    })
}

/// What prints the names a program is fed, other than find ([`PermissionEngine::takes_what_is_listed`]).
struct Listing {
    /// The operands it prints (`ls`'s that are no directories, `echo`'s all).
    operands: Vec<Word>,
    /// Its directory operands are listed (`ls` without `-d`), the working directory when
    /// it has none.
    lists_directories: bool,
    /// Hidden names are listed too (`ls -a`, `-A`, `-f`).
    hidden: bool,
}

impl Listing {
    /// What `words` print, for `ls`, `echo` and `printf` with a format that prints each
    /// operand on a line of its own (`'%s\n'`); `None` for another program.
    fn of(words: &[Word]) -> Option<Self> {
        match words.first()?.value.as_deref().map(basename)? {
            "ls" => Some(ls_listing(words)),
            "echo" => {
                let options = words[1..]
                    .iter()
                    .take_while(|w| {
                        w.value.as_deref().is_some_and(|v| {
                            v.len() > 1
                                && v.starts_with('-')
                                && v[1..].chars().all(|c| matches!(c, 'n' | 'e' | 'E'))
                        })
                    })
                    .count();
                Some(Self {
                    operands: words[1 + options..].to_vec(),
                    lists_directories: false,
                    hidden: false,
                })
            }
            "printf" => {
                let format = words.get(1)?.value.as_deref()?;
                let each = format.contains("%s")
                    && format
                        .replace("%s", "")
                        .replace("\\n", "")
                        .chars()
                        .all(|c| c.is_whitespace());
                each.then(|| Self {
                    operands: words[2..].to_vec(),
                    lists_directories: false,
                    hidden: false,
                })
            }
            _ => None,
        }
    }
}

/// What `ls WORDS` lists: its operands after its options, the options that take a value
/// read as such (`-I PAT`, `-w COLS`, `-T COLS`, `--ignore PAT`, `--hide PAT`, `--sort
/// WORD`, `--format WORD`, `--time-style STYLE`, `--block-size SIZE`, …, also abbreviated or
/// with `=`; `--color` takes one only with `=`), and whether hidden names show (`-a`, `-A`,
/// `-f`) and directories are listed (not with `-d`).
fn ls_listing(words: &[Word]) -> Listing {
    const LONG_VALUES: &[&str] = &[
        "ignore",
        "hide",
        "width",
        "tabsize",
        "format",
        "sort",
        "time",
        "time-style",
        "block-size",
        "quoting-style",
        "indicator-style",
    ];
    let mut listing = Listing {
        operands: Vec::new(),
        lists_directories: true,
        hidden: false,
    };
    let mut options = true;
    let mut iter = words.iter().skip(1);
    while let Some(w) = iter.next() {
        let Some(v) = w.value.as_deref() else {
            listing.operands.push(w.clone());
            continue;
        };
        if !options || v == "-" || !v.starts_with('-') {
            listing.operands.push(w.clone());
            continue;
        }
        if v == "--" {
            options = false;
            continue;
        }
        if let Some(long) = v.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            if !inline {
                let takes = LONG_VALUES.contains(&name)
                    || (name.len() >= 4
                        && !"ignore-backups".starts_with(name)
                        && LONG_VALUES.iter().filter(|l| l.starts_with(name)).count() == 1);
                if takes {
                    iter.next();
                    continue;
                }
            }
            if "all".starts_with(name) && !name.is_empty()
                || "almost-all".starts_with(name) && name.len() > 2
            {
                listing.hidden = true;
            }
            if name.len() >= 3 && "directory".starts_with(name) {
                listing.lists_directories = false;
            }
            continue;
        }
        // A bundle of short options: the first that takes a value takes the rest of the
        // bundle, else the next word.
        for (at, c) in v[1..].char_indices() {
            match c {
                'I' | 'T' | 'w' => {
                    if at + 1 == v.len() - 1 {
                        iter.next();
                    }
                    break;
                }
                'a' | 'A' | 'f' => listing.hidden = true,
                'd' => listing.lists_directories = false,
                _ => {}
            }
        }
    }
    listing
}

/// The names of the directories `ls` lists that a program fed by it is checked with, at
/// most ([`PermissionEngine::takes_what_is_listed`]); every name is still looked at for a
/// protected one.
const MAX_LISTED_NAMES: usize = 1000;

/// What a program loses of the files it is given, as [`takes_away_found`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Loss {
    /// Removes them (`rm`, `unlink`, `rmdir`, `-delete`).
    Deletes,
    /// Moves them away (`mv`).
    MovesAway,
    /// Empties them (`truncate`).
    Empties,
    /// Writes something else over them (`shred`, `sed -i`, `perl -i`, `cp /dev/null F`,
    /// `dd of=F`, `tee F`).
    Overwrites,
}

impl Loss {
    /// The verb, after "may" or "would": "delete", "move away", …
    fn verb(self) -> &'static str {
        match self {
            Loss::Deletes => "delete",
            Loss::MovesAway => "move away",
            Loss::Empties => "empty",
            Loss::Overwrites => "overwrite",
        }
    }

    /// The verb with a subject: "deletes", "moves away", …
    fn verbs(self) -> &'static str {
        match self {
            Loss::Deletes => "deletes",
            Loss::MovesAway => "moves away",
            Loss::Empties => "empties",
            Loss::Overwrites => "overwrites",
        }
    }
}

/// A program fed what another prints ([`PermissionEngine::takes_what_ls_lists`]): its text,
/// its words with `{}` where what it is fed goes, what it does to it, and the producer's
/// text.
#[derive(Clone, Copy)]
struct Given<'a> {
    text: &'a str,
    taker: &'a [Word],
    loss: Loss,
    produced: &'a str,
}

/// What the command `words` (a program behind its wrappers, the files find or xargs give it
/// where `{}` is: `rm {}`, `sed -i s/a/b/ {}`) loses of those files, if it takes them away:
/// it removes them (`rm`, `unlink`, `rmdir`), moves them away (`mv`), empties them
/// (`truncate`) or overwrites them (`shred`; `sed -i`/`--in-place` or a sed script's `w {}`,
/// `perl -i` and `dd of={}`, as their file uses say; `tee {}` without `-a`; `cp` with `{}`
/// its destination, not `-t DIR`). A protected file among them is lost as if removed.
/// Other writes (`tee -a`, `chmod`, `touch`) lose no content and are not counted.
fn takes_away_found(words: &[Word]) -> Option<Loss> {
    let name = words.first()?.value.as_deref().map(basename)?;
    let found = |w: &Word| w.value.as_deref().is_some_and(|v| v.contains("{}"));
    let args = words.get(1..).unwrap_or_default();
    match name {
        "rm" | "unlink" | "rmdir" => Some(Loss::Deletes),
        "mv" => Some(Loss::MovesAway),
        "truncate" => Some(Loss::Empties),
        "shred" => Some(Loss::Overwrites),
        // In place, or a file its script writes named by the placeholder (`-exec sed -n 'w
        // {}' …`, `w {}.bak`).
        "sed" | "gsed" => {
            let reads = read_path_args(name, words);
            let writes_found = path_args(name, words)
                .iter()
                .enumerate()
                .any(|(i, w)| !reads.contains(&i) && found(w));
            (sed_in_place(words) || writes_found).then_some(Loss::Overwrites)
        }
        "tee" => (!has_option(words, &['a'], &["--append"]) && args.iter().any(found))
            .then_some(Loss::Overwrites),
        "cp" => destination("cp", words)
            .filter(|d| !d.by_option)
            .and_then(|d| path_args("cp", words).get(d.index).cloned())
            .is_some_and(|d| found(&d))
            .then_some(Loss::Overwrites),
        "dd" | "perl" | "ruby" => file_uses(name, words)?
            .files
            .iter()
            .any(|(w, u)| *u == PathUse::Write && found(w))
            .then_some(Loss::Overwrites),
        // What only changes modes, owners, attributes or times, or makes what is missing,
        // loses no content.
        "chmod" | "chown" | "chgrp" | "touch" | "mkdir" | "mkfifo" | "mknod" | "chattr"
        | "setfacl" => None,
        // Formatters and converters rewrite a file's form in place (`rustfmt {}`, `gofmt -w
        // {}`, `dos2unix {}`), the files of their language only: not counted.
        _ if crate::bash::file_uses::is_rewriter(name) => None,
        // Any other program that writes or removes the files it names, as it does when
        // given them directly ([`path_use`], [`file_uses`]), with `{}` one of those: a
        // destination (`install F {}`, `ln -sf F {}`), a file written (`gzip {}`, `sort -o {}`,
        // `awk -i inplace … {}`), a tree removed (`tar --remove-files -cf A {}`).
        _ => {
            let is_found = found;
            if !args.iter().any(is_found) || path_use(name, words) != Some(PathUse::Write) {
                return None;
            }
            if changes_trees(name, words) {
                return Some(Loss::Deletes);
            }
            if let Some(d) = destination(name, words) {
                return (!d.by_option && path_args(name, words).get(d.index).is_some_and(is_found))
                    .then_some(Loss::Overwrites);
            }
            if let Some(uses) = file_uses(name, words) {
                let written = uses
                    .files
                    .iter()
                    .any(|(w, u)| *u == PathUse::Write && is_found(w));
                // A compressor replaces it by the compressed file.
                let replaced = name == "gzip" || crate::bash::file_uses::is_compressor(name);
                return written.then_some(if replaced {
                    Loss::Deletes
                } else {
                    Loss::Overwrites
                });
            }
            path_args(name, words)
                .iter()
                .any(is_found)
                .then_some(Loss::Overwrites)
        }
    }
}

/// What `find WORDS` deletes ([`FindDeletion`]); `None` when it deletes nothing or is no
/// `find`.
fn find_deletion(words: &[Word]) -> Option<FindDeletion> {
    let name = words.first()?.value.as_deref().map(basename)?;
    if name != "find" {
        return None;
    }
    // find's own options come before its roots (`find -L ~ -delete`).
    let roots_at = 1 + words[1..]
        .iter()
        .take_while(|w| {
            w.value.as_deref().is_some_and(|v| {
                matches!(v, "-P" | "-H" | "-L") || v.starts_with("-O") || v.starts_with("-D")
            })
        })
        .count();
    let expression_at = words[roots_at..]
        .iter()
        .position(|w| {
            w.value
                .as_deref()
                .is_some_and(|v| v.starts_with('-') || v == "(" || v == "!")
        })
        .map_or(words.len(), |i| i + roots_at);
    let expression = &words[expression_at..];
    let follows_links = words[1..roots_at]
        .iter()
        .any(|w| w.value.as_deref() == Some("-L"))
        || expression
            .iter()
            .any(|w| w.value.as_deref() == Some("-follow"));
    // What only orders or bounds the walk (`-mindepth 1`: all but the root itself), tests
    // that every name passes (`-true`, `! -false`, `-name '*'`, `-regex '.*'`), and the
    // deletion itself: `-delete`, or an `-exec rm …` of what was found (`find ~ -exec
    // rm -rf {} +`).
    let value = |i: usize| expression.get(i).and_then(|w| w.value.as_deref());
    // The command an `-exec` at `i` runs, behind the wrappers that run it as it is
    // (`sudo rm`, `env rm`, `timeout 5 rm`); and where its words end.
    let exec_at = |i: usize| {
        let rest = &expression[i + 1..];
        let end = crate::bash::parse::exec_end(rest);
        let mut words = behind_removal_wrappers(&rest[..end])
            .iter()
            .filter_map(|w| w.value.as_deref());
        let program = words.next().map(basename);
        let recursive = words.any(|a| {
            a.starts_with('-') && !a.starts_with("--") && a.contains(['r', 'R'])
                || a == "--recursive"
        });
        (program, recursive, end)
    };
    // Whether the deletion is an `-exec rm -r`: then a test the root itself passes
    // (`-type d`, `-prune`) removes the whole tree with it.
    let recursive_rm = (0..expression.len()).any(|i| {
        matches!(value(i), Some("-exec" | "-execdir" | "-ok" | "-okdir"))
            && matches!(exec_at(i), (Some("rm"), true, _))
    });
    // A name pattern that matches every name (`*`, `?*`), a regex that matches any text.
    let every_name = |v: Option<&str>| {
        v.is_some_and(|v| v.contains('*') && v.chars().all(|c| matches!(c, '*' | '?')))
    };
    let any_text = |v: Option<&str>| {
        v.is_some_and(|v| v == ".+" || (!v.is_empty() && v.replace(".*", "").is_empty()))
    };
    // Options whose next word is their argument, not a test of its own.
    let takes_argument = |v: &str| {
        matches!(
            v,
            "-type"
                | "-xtype"
                | "-size"
                | "-mtime"
                | "-atime"
                | "-ctime"
                | "-mmin"
                | "-amin"
                | "-cmin"
                | "-newer"
                | "-anewer"
                | "-cnewer"
                | "-user"
                | "-group"
                | "-uid"
                | "-gid"
                | "-perm"
                | "-links"
                | "-inum"
                | "-samefile"
                | "-fstype"
                | "-used"
                | "-lname"
                | "-ilname"
                | "-printf"
                | "-fprint"
                | "-fprint0"
                | "-fls"
                | "-context"
        ) || v.starts_with("-newer")
    };
    // A parenthesised group of name tests joined by `-o` (`\( -name '*.pyc' -o -name
    // '*.pyo' \)`): a filter, letting through what its loosest name does.
    let name_alternatives = |group: &[Word]| -> Option<(FindNameFilter, Vec<String>)> {
        let values: Vec<&str> = group
            .iter()
            .map(|w| w.value.as_deref())
            .collect::<Option<_>>()?;
        let mut loosest = FindNameFilter::RulesOut;
        let mut patterns = Vec::new();
        for alternative in values.split(|v| matches!(*v, "-o" | "-or")) {
            match alternative {
                [test, pattern]
                    if matches!(*test, "-name" | "-iname") && !every_name(Some(pattern)) =>
                {
                    loosest = loosest.max(find_name_filter(pattern));
                    patterns.push((*pattern).to_owned());
                }
                _ => return None,
            }
        }
        (patterns.len() > 1).then_some((loosest, patterns))
    };
    let mut deletes = false;
    // What the first deletion does to what it finds.
    let mut loss: Option<Loss> = None;
    // A branch after the deletion, or a negated group: read as filtering nothing.
    let mut branches = false;
    let mut filtered = false;
    let mut names: Option<FindNameFilter> = None;
    let mut name_tests: Vec<Vec<String>> = Vec::new();
    // The test at hand is negated: it filters nothing.
    let mut negated = false;
    // How many groups read inline (`\( … \)` that is no list of names) are open here.
    let mut group_depth = 0usize;
    let mut i = 0;
    while i < expression.len() {
        let v = value(i);
        let was_negated = std::mem::take(&mut negated);
        // A test before the deletion, ANDed, not negated, filters what it deletes.
        let mut filter = |name: Option<FindNameFilter>, patterns: Vec<String>| {
            if !deletes && !was_negated {
                filtered = true;
                if let Some(n) = name {
                    names = Some(names.map_or(n, |m| m.min(n)));
                }
                if !patterns.is_empty() {
                    name_tests.push(patterns);
                }
            }
        };
        let step = match v {
            // `A -o B -delete` deletes what B lets through of what A does not: only the
            // deletion's own branch filters it (`-name .git -prune -o -delete` is unfiltered,
            // `-name node_modules -prune -o -name '*.log' -delete` filtered).
            Some("-o" | "-or" | ",") => {
                if deletes || group_depth > 0 {
                    // A branch after the deletion may delete too (`-name x -delete -o
                    // -delete`), and one inside a group read inline (`\( -true -o -name x
                    // \)`) may let everything through: read as unfiltered.
                    branches = true;
                } else {
                    filtered = false;
                    names = None;
                    name_tests.clear();
                }
                1
            }
            Some("!" | "-not") if value(i + 1) == Some("-false") => 2,
            // A negated group: whatever it holds filters nothing.
            Some("!" | "-not") if value(i + 1) == Some("(") => {
                branches = true;
                1
            }
            Some("!" | "-not") => {
                negated = true;
                1
            }
            Some("(") => {
                // The group up to its `)`.
                let mut depth = 0usize;
                let close = (i..expression.len()).find(|&j| {
                    match value(j) {
                        Some("(") => depth += 1,
                        Some(")") => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                    depth == 0
                });
                match close.and_then(|c| name_alternatives(&expression[i + 1..c]).zip(Some(c))) {
                    Some(((loosest, patterns), c)) => {
                        filter(Some(loosest), patterns);
                        c + 1 - i
                    }
                    // Any other group is read as if it were not there (an `-o` in it
                    // counts as a branch).
                    None => {
                        group_depth += 1;
                        1
                    }
                }
            }
            Some(")") => {
                group_depth = group_depth.saturating_sub(1);
                1
            }
            Some(
                "-depth"
                | "-xdev"
                | "-mount"
                | "-print"
                | "-print0"
                | "-ls"
                | "-ignore_readdir_race"
                | "-noleaf"
                | "-true"
                | "-a"
                | "-and"
                | "-follow"
                | "-daystart"
                | "-nowarn"
                | "-warn"
                | "-prune",
            ) if v != Some("-prune") || recursive_rm || deletes => 1,
            Some("-mindepth" | "-maxdepth" | "-regextype") => 2,
            Some("-type") if recursive_rm && value(i + 1) == Some("d") => 2,
            Some("-name" | "-iname") if every_name(value(i + 1)) => 2,
            Some("-name" | "-iname") => {
                let pattern = value(i + 1).unwrap_or("*");
                filter(Some(find_name_filter(pattern)), vec![pattern.to_owned()]);
                2
            }
            Some("-path" | "-ipath" | "-wholename" | "-iwholename") if every_name(value(i + 1)) => {
                2
            }
            Some("-regex" | "-iregex") if any_text(value(i + 1)) => 2,
            Some("-delete") => {
                deletes = true;
                loss.get_or_insert(Loss::Deletes);
                1
            }
            Some("-exec" | "-execdir" | "-ok" | "-okdir") => {
                let (_, _, end) = exec_at(i);
                let rest = &expression[i + 1..];
                if let Some(taken) = takes_away_found(behind_removal_wrappers(&rest[..end])) {
                    deletes = true;
                    loss.get_or_insert(taken);
                }
                // Another program's exit status says nothing that can be known here: no
                // filter.
                end + 2
            }
            // Only what is empty: no protected file's content, but a protected directory's
            // own empty directories and files are its structure (`.git/refs/tags`, an empty
            // `.git/FETCH_HEAD`): a filter like any other.
            Some("-empty") => {
                filter(None, Vec::new());
                1
            }
            Some("-fprintf") => 3,
            Some(t) if takes_argument(t) => {
                filter(None, Vec::new());
                2
            }
            // Any other test (`-path x`, `-empty`, `-false`, a word it takes).
            _ => {
                filter(None, Vec::new());
                1
            }
        };
        i += step;
    }
    deletes.then(|| FindDeletion {
        roots_at,
        expression_at,
        everything: branches || !filtered,
        names: names.unwrap_or(FindNameFilter::MayMatch),
        name_tests,
        recursive: recursive_rm,
        loss: loss.unwrap_or(Loss::Deletes),
        follows_links,
        roots_follow: follows_links
            || words[1..roots_at]
                .iter()
                .any(|w| w.value.as_deref() == Some("-H")),
    })
}

/// Why a path the shell computes is a safety check (an ask even in bypass mode), though it
/// cannot be checked: written, its fixed part names a protected item (`"$HOME/.bashrc"`,
/// `"$(pwd)/.git/hooks/x"`); removed with everything under it (`rm -r`, `rmdir`, `mv`'s
/// source: `removal`), it is an expansion with nothing fixed after it (`"$HOME"`,
/// `"$PWD"/*`, `$(pwd)`, `$(echo /)`), which may be `/`, the home or the project itself,
/// or one that is such a path when its variables are empty or unset (`"/$d"`, `~/"$x"`,
/// `"$HOME/$x"`).
fn computed_path_safety(raw: &str, use_: PathUse, removal: bool) -> Option<String> {
    if use_ != PathUse::Write {
        return None;
    }
    let text: String = raw.chars().filter(|c| !matches!(c, '"' | '\'')).collect();
    // As written, and with its variables empty or at their defaults (`.gi"$x"t` is `.git`;
    // read with its quotes, which end a variable's name).
    for text in std::iter::once(text.clone()).chain(expansion_readings(raw).unwrap_or_default()) {
        if let Some(why) = protected_reason(Path::new(&text)).or_else(|| {
            protected_glob_reason(&text, false).filter(|_| text.contains(['*', '?', '[']))
        }) {
            return Some(format!("Its fixed part is protected: {why}"));
        }
    }
    if !removal {
        return None;
    }
    // `~+` is `$PWD` and `~-` `$OLDPWD` to bash.
    let text = match text.strip_prefix("~+").or_else(|| text.strip_prefix("~-")) {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("$PWD{rest}"),
        _ => text,
    };
    // `./` before an expansion changes nothing (`./$(x)` is `$(x)`), and after `../` one
    // may name the working directory itself or anything beside it (`../$(basename
    // "$PWD")`): `$PWD/$(x)` is read instead.
    // Leading segments that are `.`, `..` or empty (`./../`, `.././`, `..//`), in any
    // order, up to an expansion: `bare` is what follows them, `climbs` whether a `..` was
    // among them.
    let expansion_at = |t: &str| t.starts_with(['$', '`']);
    let (bare, climbs) = {
        let mut rest = text.as_str();
        let mut climbs = false;
        let mut skipped = false;
        while (!expansion_at(rest) && rest.starts_with('.')) || (skipped && rest.starts_with('/')) {
            let Some((segment, after)) = rest.split_once('/') else {
                break;
            };
            match segment {
                "" | "." => {}
                ".." => climbs = true,
                _ => break,
            }
            skipped = true;
            rest = after;
        }
        if skipped && expansion_at(rest) {
            (rest, climbs)
        } else {
            (text.as_str(), false)
        }
    };
    let above = bare;
    if climbs && computed_path_safety(&format!("$PWD/{above}"), use_, true).is_some() {
        return Some(format!(
            "It removes what an expansion names ({raw}) beside the working directory, which may be the working directory itself, such as the project, or anything beside it."
        ));
    }
    // (Past a `..`, the rest is read as written, as before.)
    let text = if climbs {
        text.clone()
    } else {
        bare.to_owned()
    };
    // With its variables empty or unset (or at their defaults), a path that starts fixed
    // may be `/` or the home (`"/$d"`, `~/"$x"`, `/"$a"/*`, `/./"$x"`).
    if !text.starts_with('$')
        && expansion_readings(raw.strip_prefix('"').unwrap_or(raw)).is_some_and(|readings| {
            readings.iter().any(|r| {
                matches!(
                    r.as_str(),
                    "/" | "/*"
                        | "/.*"
                        | "/.."
                        | "/../*"
                        | "~"
                        | "~/"
                        | "~/*"
                        | "~/.*"
                        | "~/.."
                        | "~/../*"
                )
            })
        })
    {
        return Some(format!(
            "It removes what an expansion names ({raw}), which, with a variable empty or unset, is a whole directory such as / or the home."
        ));
    }
    // The expansion the text starts with: its name (`pwd` for a `$(pwd)` substitution),
    // and what follows it.
    let (name, rest) = if let Some(rest) = ["$(pwd)", "$(pwd -P)", "$(pwd -L)", "`pwd`"]
        .iter()
        .find_map(|p| text.strip_prefix(p))
    {
        ("pwd", rest)
    } else if let Some(rest) = substitution_rest(&text) {
        // Any other command substitution (`$(echo /)`, `` `dirname x` ``).
        ("$(…)", rest)
    } else if let Some(braced) = text.strip_prefix("${") {
        // `${HOME}`, `${HOME:?}`, `${HOME%/}`, `${1}`: any parameter expansion.
        let end = braced.find('}')?;
        let inner = &braced[..end];
        let len = inner
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(inner.len())
            .max(usize::from(inner.starts_with(['@', '*'])));
        if len == 0 {
            return None;
        }
        (&inner[..len], &braced[end + 1..])
    } else {
        let named = text.strip_prefix('$')?;
        let len = if named.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '@' | '*')) {
            1
        } else {
            named
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(named.len())
        };
        if len == 0 {
            return None;
        }
        (&named[..len], &named[len..])
    };
    // The home, the project and a command substitution (`$(echo /)`), whatever follows
    // them that stays at or above them; any other expansion only where, empty, it leaves
    // the root (`"$BUILD"/*` is `/*`) or climbs.
    let home_or_project = matches!(
        name,
        "HOME" | "PWD" | "OLDPWD" | "CLAUDE_PROJECT_DIR" | "pwd" | "$(…)"
    );
    // A default it may take instead (`${x:-$HOME}`, `${x:-/}`, `${x:-~}`) is what follows
    // it then.
    if let Some(inner) = text
        .strip_prefix("${")
        .and_then(|b| b.split_once('}'))
        .map(|(i, _)| i)
        && let Some((_, default)) = [":-", ":=", "-", "="]
            .iter()
            .find_map(|op| inner[name.len()..].strip_prefix(op).map(|d| (op, d)))
        && !default.is_empty()
    {
        let instead = format!("{default}{rest}");
        let instead = match instead.strip_prefix('~') {
            Some(after) if after.is_empty() || after.starts_with('/') => format!("$HOME{after}"),
            _ => instead,
        };
        let literal_root = matches!(
            normal_path_text(&instead).as_str(),
            "/" | "/*" | "/.*" | "/.." | "/../*"
        );
        if literal_root || computed_path_safety(&instead, use_, removal).is_some() {
            return Some(format!(
                "It removes what an expansion names ({raw}), which may be a whole directory such as / or the home."
            ));
        }
    }
    // What follows it, as written and with the variables in it empty or unset
    // (`"$HOME/$x"` is the home when `x` is empty).
    let dangerous = std::iter::once(normal_path_text(rest))
        .chain(expansion_readings(rest).unwrap_or_default())
        .any(|rest| {
            if home_or_project {
                matches!(
                    rest.as_str(),
                    "" | "/" | "/*" | "/*/" | "/.*" | "/.." | "/../" | "/../*"
                )
            } else {
                matches!(
                    rest.as_str(),
                    "/*" | "/*/" | "/.*" | "/.." | "/../" | "/../*"
                )
            }
        });
    dangerous.then(|| {
        format!(
            "It removes what an expansion names ({raw}), which may be a whole directory such as the home or the project."
        )
    })
}

/// The paths `text` may name with each expansion in it at what it may be (`/$d` is `/`,
/// `~/${x}/$(f)` is `~/`, `"$HOME/${x:-..}"` is `$HOME/..`, `${x:+/}` is `` and `/`): an
/// expansion may be empty or unset; `${x:?}` stops the command when it is (a name of its
/// own, `v`); `${x:-W}` and `${x:=W}` are `W` when it is plain, else empty; `${x:+W}` is
/// empty or `W`. Runs of slashes are made one and `.` segments dropped (`/./` is `/`). At
/// most [`MAX_EXPANSION_READINGS`] readings (past that, every expansion empty). `None` when
/// it has no expansion.
fn expansion_readings(text: &str) -> Option<Vec<String>> {
    let mut readings = vec![String::new()];
    let mut any = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let expansion: Option<(usize, Vec<String>)> = match c {
            '$' => {
                let after = &rest[1..];
                // One that does not close takes the rest, which may then be empty (and no
                // later one is looked for again: linear, however many there are).
                if let Some(inner) = after.strip_prefix('{') {
                    Some(match inner.find('}') {
                        Some(end) => (end + 3, braced_readings(&inner[..end])),
                        None => (rest.len(), vec![String::new()]),
                    })
                } else if after.starts_with('(') {
                    let len = substitution_rest(rest).map_or(rest.len(), |r| rest.len() - r.len());
                    Some((len, vec![String::new()]))
                } else {
                    let ident = after
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(after.len());
                    let special =
                        after.starts_with(|c: char| c.is_ascii_digit() || "@*#?$!-".contains(c));
                    (ident > 0 || special)
                        .then(|| (1 + ident.max(usize::from(special)), vec![String::new()]))
                }
            }
            '`' => {
                let len = substitution_rest(rest).map_or(rest.len(), |r| rest.len() - r.len());
                Some((len, vec![String::new()]))
            }
            _ => None,
        };
        match expansion {
            Some((len, options)) => {
                any = true;
                rest = &rest[len..];
                readings = if readings.len() * options.len() > MAX_EXPANSION_READINGS {
                    // Too many: the first reading of each (empty where it may be).
                    readings
                        .into_iter()
                        .map(|r| format!("{r}{}", options[0]))
                        .collect()
                } else {
                    readings
                        .iter()
                        .flat_map(|r| options.iter().map(move |o| format!("{r}{o}")))
                        .collect()
                };
            }
            None => {
                // Quotes end a name and are no part of the path.
                if !matches!(c, '"' | '\'') {
                    for r in &mut readings {
                        r.push(c);
                    }
                }
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    any.then(|| readings.iter().map(|r| normal_path_text(r)).collect())
}

/// At most this many readings of one path's expansions ([`expansion_readings`]).
const MAX_EXPANSION_READINGS: usize = 16;

/// What `${INNER}` may be, most dangerous first ([`expansion_readings`]).
fn braced_readings(inner: &str) -> Vec<String> {
    let plain = |w: &str| crate::bash::values::plain_value(w);
    let name_len = inner
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(inner.len());
    let (name, op) = inner.split_at(name_len);
    if name.is_empty() {
        // `${#x}` is a number; anything else (`${!x}`, `${@}`) may be empty.
        return vec![if inner.starts_with('#') { "v" } else { "" }.to_owned()];
    }
    for (sign, empty_or_word) in [
        (":?", None),
        ("?", None),
        (":-", Some(false)),
        (":=", Some(false)),
        ("-", Some(false)),
        ("=", Some(false)),
        (":+", Some(true)),
        ("+", Some(true)),
    ] {
        if let Some(word) = op.strip_prefix(sign) {
            return match empty_or_word {
                // Stops the command when empty (`${x?}` only when unset: it may be empty).
                None if sign == ":?" => vec!["v".to_owned()],
                None => vec![String::new(), "v".to_owned()],
                Some(false) if plain(word) => vec![word.to_owned()],
                Some(false) => vec![String::new()],
                Some(true) if plain(word) => vec![String::new(), word.to_owned()],
                Some(true) => vec![String::new()],
            };
        }
    }
    vec![String::new()]
}

/// `path` with its runs of slashes made one and its `.` segments dropped (`/./x//y/.` is
/// `/x/y`), as the paths it names are compared.
fn normal_path_text(path: &str) -> String {
    let absolute = path.starts_with('/');
    let kept: Vec<&str> = path
        .split('/')
        .enumerate()
        .filter(|(i, s)| *s != "." && (!s.is_empty() || *i == 0))
        .map(|(_, s)| s)
        .collect();
    let mut out = kept.join("/");
    if path.ends_with('/') && !out.ends_with('/') && !out.is_empty() {
        out.push('/');
    }
    if out.is_empty() && absolute {
        out.push('/');
    }
    out
}

/// Whether the relative path `value` names the directory it is taken in, one above it, or
/// all of its content, however spelled (`.`, `./`, `.//.`, `..`, `../..`, `*`, `./*`, `.*`).
fn names_the_directory_or_above(value: &str) -> bool {
    value
        .split('/')
        .all(|part| matches!(part, "" | "." | ".." | "*" | ".*"))
}

/// The variable `raw` starts with (`$x`, `"${x}"`, `"$x"/`, `$x/etc`) when the command
/// line `analysis` sets it (`x=/; …`, `export x=…`, `for x in ~`, or may set a variable it
/// does not name: `read x`), or the positional parameter it starts with (`"$1"`, `"$@"`).
fn line_variable<'a>(raw: &'a str, analysis: &Analysis) -> Option<&'a str> {
    // The variable the operand starts with, whatever follows it (`"$x"/`, `$x/etc`,
    // `${x:-/}`): what it leads to is the variable's.
    let text = raw.trim_start_matches('"');
    let after = text.strip_prefix("${").or_else(|| text.strip_prefix('$'))?;
    // A positional parameter (`$1`, `"$@"`): the Bash tool's shell has none but those the
    // line sets (`set -- ~`, a function's arguments); `$_` is the last word of the command
    // before (`cd ~ && rm -rf "$_"`).
    if let Some(c) = after
        .chars()
        .next()
        .filter(|c| c.is_ascii_digit() || matches!(c, '@' | '*'))
    {
        return Some(&after[..c.len_utf8()]);
    }
    if after.starts_with('_')
        && !after[1..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
    {
        return Some("_");
    }
    // An indirect expansion (`${!d}`, `${!#}`): any variable, the home's among them.
    if let Some(inner) = text.strip_prefix("${")
        && inner.starts_with('!')
    {
        return Some(&inner[..inner.find('}').unwrap_or(inner.len())]);
    }
    let end = after
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(after.len());
    let name = &after[..end];
    if name.is_empty() {
        return None;
    }
    let assigns = |w: &Word| {
        w.raw
            .strip_prefix(name)
            .is_some_and(|rest| rest.starts_with('=') || rest.starts_with("+="))
    };
    (analysis.hidden_assignment
        || analysis.assigned.iter().any(|a| a.name == name)
        || analysis
            .commands
            .iter()
            .any(|c| c.assignments.iter().any(|a| a.name == name) || c.words.iter().any(assigns)))
    .then_some(name)
}

/// What follows the command substitution `text` starts with (`$(…)` or `` `…` ``), when it
/// starts with one.
fn substitution_rest(text: &str) -> Option<&str> {
    if let Some(parens) = text.strip_prefix('$').filter(|t| t.starts_with('(')) {
        return crate::bash::values::balanced_parens(parens).map(|len| &parens[len..]);
    }
    let inner = text.strip_prefix('`')?;
    inner.find('`').map(|end| &inner[end + 1..])
}

/// The user a `~user` form names (`~root`, `~bin/x`), when `value` starts with one: a home
/// bash looks up in the password database. Not `~`, `~/x`, `~+` or `~-`.
fn user_home(value: &str) -> Option<&str> {
    let rest = value.strip_prefix('~')?;
    let user = rest.split('/').next().unwrap_or("");
    (!user.is_empty()
        && user
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !matches!(user, "+" | "-"))
    .then_some(user)
}

/// Whether the command name `raw` holds a `{` or `}` bash reads as brace syntax: outside
/// quotes, `${…}`, `$(…)` and backticks (`${CC:-gcc}` is a program's name; `r{m,}` and the
/// `rm,-rf}` of `{rm,-rf}` are not). A lone `{` or `}` is a group's (`time { make; }`).
fn brace_outside_expansions(raw: &str) -> bool {
    if matches!(raw, "{" | "}") {
        return false;
    }
    // Open `${`/`$(` expansions, and the quote we are in.
    let mut open: Vec<char> = Vec::new();
    let mut quote: Option<char> = None;
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some('\''), '\'') => quote = None,
            (Some('\''), _) => {}
            (_, '\\') => {
                chars.next();
            }
            (Some('`'), '`') => quote = None,
            (Some('`'), _) => {}
            (_, '$') if matches!(chars.peek(), Some('{' | '(')) => {
                open.push(chars.next().unwrap_or('{'));
            }
            (_, '}') if open.last() == Some(&'{') => {
                open.pop();
            }
            (_, ')') if open.last() == Some(&'(') => {
                open.pop();
            }
            (None, '"') if open.is_empty() => quote = Some('"'),
            (Some('"'), '"') if open.is_empty() => quote = None,
            (None, '\'' | '`') if open.is_empty() => quote = Some(c),
            (None, '{' | '}') if open.is_empty() => return true,
            _ => {}
        }
    }
    false
}

/// The kinds of Read rules `set` has, as a question names them: `Read deny and ask rules`,
/// `Read deny rules` or `Read ask rules` (the last also when it has neither).
fn read_rule_kinds(set: &RuleSet) -> &'static str {
    match (
        set.read[bi(RuleBehavior::Deny)].is_empty(),
        set.read[bi(RuleBehavior::Ask)].is_empty(),
    ) {
        (false, false) => "Read deny and ask rules",
        (false, true) => "Read deny rules",
        _ => "Read ask rules",
    }
}

/// Brace expansion is attempted only on words with at most this many `{`...
const MAX_BRACE_GROUPS: usize = 16;
/// ... and at most this many bytes ...
const MAX_BRACE_WORD_LEN: usize = 1024;
/// ... and gives up above this many words.
const MAX_BRACE_WORDS: usize = 64;

/// `words` with each static brace word replaced by the words bash expands it to, as many
/// arguments (`mv {src/main.rs,docs}` is `mv src/main.rs docs`; `mkdir -p src/{a,b}` makes
/// two directories). The command name is kept as it is.
fn brace_expanded(words: &[Word]) -> std::borrow::Cow<'_, [Word]> {
    let expands = |w: &Word| w.value.is_none() && expand_braces(&w.raw).is_some();
    if !words.iter().skip(1).any(expands) {
        return std::borrow::Cow::Borrowed(words);
    }
    let mut out = Vec::with_capacity(words.len() + 2);
    for (i, w) in words.iter().enumerate() {
        match (i > 0 && w.value.is_none()).then(|| expand_braces(&w.raw)) {
            Some(Some(list)) => out.extend(list.into_iter().map(|v| Word {
                raw: v.clone(),
                glob: v.contains(['*', '?', '[']),
                value: Some(v),
                plain: true,
            })),
            _ => out.push(w.clone()),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The words of a static brace expansion (`{.env,x}`, `src/{a,b/{c,d}}.rs`): `None` when
/// `raw` has no brace list, holds quotes, escapes or expansions, or is too big to expand
/// cheaply (more than [`MAX_BRACE_GROUPS`] braces, [`MAX_BRACE_WORD_LEN`] bytes or
/// [`MAX_BRACE_WORDS`] words): the caller then treats the word as uncomputable. Sequences
/// (`{1..3}`) are not expanded. Iterative, with bounded work.
pub(crate) fn expand_braces(raw: &str) -> Option<Vec<String>> {
    // An escaped character is itself (`{\x,.env}` is `x` and `.env`), unless it is part of
    // the brace syntax.
    let unescaped;
    let raw = if raw.contains('\\') {
        let mut out = String::with_capacity(raw.len());
        let mut chars = raw.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some(d) if !"{},".contains(d) => out.push(d),
                    _ => return None,
                },
                c => out.push(c),
            }
        }
        unescaped = out;
        unescaped.as_str()
    } else {
        raw
    };
    if raw.contains(['\'', '"', '$', '`'])
        || !raw.contains('{')
        || raw.len() > MAX_BRACE_WORD_LEN
        || raw.matches('{').count() > MAX_BRACE_GROUPS
    {
        return None;
    }
    let mut todo = vec![raw.to_owned()];
    let mut out = Vec::new();
    while let Some(s) = todo.pop() {
        match first_brace_list(&s) {
            None => out.push(s),
            Some((open, commas, close)) => {
                let (prefix, suffix) = (&s[..open], &s[close + 1..]);
                let mut from = open + 1;
                let mut alternatives = Vec::with_capacity(commas.len() + 1);
                for end in commas.into_iter().chain([close]) {
                    alternatives.push(format!("{prefix}{}{suffix}", &s[from..end]));
                    from = end + 1;
                }
                todo.extend(alternatives.into_iter().rev());
            }
        }
        // Every pending word expands to at least one word.
        if out.len() + todo.len() > MAX_BRACE_WORDS {
            return None;
        }
    }
    (out.len() > 1 || out.first().is_some_and(|w| w != raw)).then_some(out)
}

/// The first brace list of `s` with a comma at its top level: the byte offsets of its `{`,
/// of its top-level commas and of its `}`.
fn first_brace_list(s: &str) -> Option<(usize, Vec<usize>, usize)> {
    for (i, c) in s.char_indices() {
        if c != '{' {
            continue;
        }
        let mut depth = 0usize;
        let mut commas = Vec::new();
        for (j, d) in s[i..].char_indices() {
            match d {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        if !commas.is_empty() {
                            return Some((i, commas, i + j));
                        }
                        break;
                    }
                }
                ',' if depth == 1 => commas.push(i + j),
                _ => {}
            }
        }
    }
    None
}

/// [`Word::path_value`], empty for a computed word.
fn literal_tilde(w: &Word) -> std::borrow::Cow<'_, str> {
    w.path_value().unwrap_or_default()
}

/// A redirection target that is no file: `/dev/null`, the standard streams, the terminal,
/// `/dev/fd/N`. Exactly these names: `/dev/fd/../../etc/x` is `/etc/x`, and `-` is a file
/// named `-` to a redirection.
fn is_harmless_device(v: &str) -> bool {
    matches!(v, "/dev/null" | "/dev/tty") || is_stream_device(v)
}

/// One of the process's own streams: `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`.
fn is_stream_device(v: &str) -> bool {
    matches!(v, "/dev/stdin" | "/dev/stdout" | "/dev/stderr")
        || v.strip_prefix("/dev/fd/")
            .is_some_and(|fd| !fd.is_empty() && fd.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether a command of the line before `sub` that acceptEdits mode lets write files
/// (`mkdir`, `touch`, `cp`, `rm`, …, behind safe wrappers too: `timeout 9 cp`), or a
/// redirection that writes a path with a component among `names` (or one that cannot be
/// known), may change what `sub` will find, which no check on the disk as it is now can
/// see: a repository git discovers (`printf … > config && git status` runs the planted
/// `core.fsmonitor`), an ignore file ripgrep obeys (`rm .gitignore && rg KEY`). Other
/// commands that write need approval of their own (a rule the user wrote trusts them with
/// more).
fn line_writes_before(analysis: &Analysis, sub: &SimpleCommand, names: &[&str]) -> bool {
    let touches = |target: &Word| {
        let Some(v) = target.value.as_deref().filter(|_| !target.glob) else {
            return true;
        };
        Path::new(v)
            .components()
            .any(|c| c.as_os_str().to_str().is_some_and(|c| names.contains(&c)))
    };
    // Each command as bash runs it, its brace lists expanded (`cp {evil,extra.cfg}` is
    // `cp evil extra.cfg`), as acceptEdits mode judges it.
    file_writing_redirects(analysis).any(|r| touches(&r.target))
        || commands_before(analysis, Some(sub)).any(|(_, _, words)| accept_edits_allows(&words))
}

/// The first command of the line before `sub` (or a write redirection of the line) that
/// may create a name starting with `-`, for a glob of `sub` to match
/// ([`PermissionEngine::option_like_glob`]): a command acceptEdits mode lets write files
/// (`touch`, `mkdir`, `cp`, `mv`, `ln`, `tee`, …, behind safe wrappers too) one of whose
/// paths (operands, sources, destinations) has a last component that starts with `-`, is
/// a glob (`cp d/* .` brings what `d` holds), or brings a directory's contents (`cp -r
/// d/. .`, rsync's `d/`); a write redirection whose target's last component starts with
/// `-`, or is a glob or computed. Other commands that write need approval of their own.
fn line_may_make_option_names(analysis: &Analysis, sub: &SimpleCommand) -> Option<String> {
    let makes = |w: &Word, contents_slash: bool| {
        let Some(v) = w.value.as_deref().filter(|_| !w.glob) else {
            return true;
        };
        let trimmed = v.trim_end_matches('/');
        let last = trimmed.rsplit('/').next().unwrap_or(trimmed);
        last.starts_with('-')
            || matches!(last, "." | "..")
            || (contents_slash && v.ends_with('/') && !trimmed.is_empty())
    };
    if let Some(r) = file_writing_redirects(analysis).find(|r| makes(&r.target, false)) {
        return Some(format!("> {}", r.target.raw));
    }
    commands_before(analysis, Some(sub))
        .find(|(_, name, words)| {
            accept_edits_allows(words)
                && path_args(name, words)
                    .iter()
                    .any(|a| makes(a, *name == "rsync"))
        })
        .map(|(c, _, _)| c.raw_text())
}

/// The commands of the line before `sub` (every command of the line for `None`), each with
/// its program's base name and its words as bash runs it: wrappers taken off
/// ([`effective_words`]), brace lists expanded (`cp {evil,extra.cfg}` is `cp evil
/// extra.cfg`). A command whose words cannot be known ([`effective_words`] gives none, for an
/// assignment that changes what runs) or whose name is computed is left out. What an
/// earlier command does to the files a later one meets ([`line_writes_before`],
/// [`line_may_make_option_names`], [`PermissionEngine::filled_before`]).
fn commands_before<'a>(
    analysis: &'a Analysis,
    sub: Option<&'a SimpleCommand>,
) -> impl Iterator<Item = (&'a SimpleCommand, &'a str, std::borrow::Cow<'a, [Word]>)> {
    analysis
        .commands
        .iter()
        .take_while(move |c| sub.is_none_or(|s| !std::ptr::eq(*c, s)))
        .filter_map(|c| {
            let words = effective_words(c)?;
            // Expansion keeps the command name as it is.
            let name = words.first()?.value.as_deref().map(basename)?;
            Some((c, name, brace_expanded(words)))
        })
}

/// The write redirections of the line that may change a file: every one but those
/// reaching no file ([`harmless_write_target`]); one whose target is computed is among
/// them.
fn file_writing_redirects(analysis: &Analysis) -> impl Iterator<Item = &Redirect> {
    analysis.redirects.iter().filter(|r| {
        r.kind == RedirectKind::Write
            && !r
                .target
                .value
                .as_deref()
                .is_some_and(|v| harmless_write_target(v, &analysis.redirects))
    })
}

/// The names git's discovery reads on its way up ([`line_writes_before`]).
const GIT_DISCOVERY_NAMES: &[&str] = &[
    ".git",
    "objects",
    "refs",
    "HEAD",
    "config",
    "commondir",
    "gitdir",
];

/// The ignore files ripgrep obeys ([`line_writes_before`]): `.gitignore`, `.ignore`,
/// `.rgignore`, `.git/info/exclude`, git's global `ignore`.
const RG_IGNORE_NAMES: &[&str] = &[".gitignore", ".ignore", ".rgignore", ".git", "ignore"];

/// A write redirection's target that reaches no file: `/dev/null`, the terminal, or one of
/// the command's own streams when no redirection of the command put a file on one. Linux
/// opens `/dev/fd/N` (and `/dev/stdout`, ...) afresh through `/proc/self/fd/N`, truncating:
/// `printf x < .git/config > /dev/fd/0` rewrites `.git/config`.
fn harmless_write_target(v: &str, redirects: &[Redirect]) -> bool {
    matches!(v, "/dev/null" | "/dev/tty")
        || (is_stream_device(v)
            && redirects.iter().all(|r| {
                r.kind == RedirectKind::FdDup
                    || r.target.value.as_deref().is_some_and(|t| {
                        !r.target.glob
                            && (matches!(t, "/dev/null" | "/dev/tty") || is_stream_device(t))
                    })
            }))
}

/// The file in a session's directory (`<tmp>/toolwright-<id>-<x>/project`) that records the
/// project the session was opened in: its working directory, absolute with its links
/// followed, as the bytes of the path (no newline after it). The session writes it when it
/// makes the directory, readable by its owner only; an earlier session's saved results are
/// read without asking only by a session of the project it names.
pub const SESSION_PROJECT_FILE: &str = "project";

/// The longest project record read ([`SESSION_PROJECT_FILE`]): longer than any path.
const PROJECT_RECORD_MAX: u64 = 64 * 1024;

/// Whether `path` is in the context's results directory, where a result too large for the
/// conversation is saved for the model to Read (Claude Code's internal `tool-results`
/// path). `resolved` (every link on the way followed) must be inside the directory too: a
/// link in it that points out of it does not count. An earlier session's results directory
/// counts when that session was of the context's project ([`in_earlier_results_dir`]).
fn inside_results_dir(path: &Path, resolved: &Path, ctx: &ToolUseContext) -> bool {
    let Some(dir) = ctx.results_dir() else {
        return false;
    };
    let dir = normalize_lexically(dir);
    let real = resolve_symlinks(&dir);
    ((path.starts_with(&dir) || path.starts_with(&real)) && resolved.starts_with(&real))
        || in_earlier_results_dir(resolved, &real, ctx.project_dir())
}

/// Whether `resolved` is in the results directory of an earlier session of this user and of
/// this project, the one whose results directory is `current`
/// (`<tmp>/toolwright-<id>-<x>/tool-results`) and whose project is `project` (the working
/// directory its context was opened with): a `toolwright run --json` gives the model a
/// saved result's path, and the next run is another session. Only a session directory
/// beside this one's, with the same owner and private to it (mode 0700, not a link: no
/// other user could have put a file there), whose project record ([`SESSION_PROJECT_FILE`],
/// a regular file, not a link) names `project`, its links followed: Claude Code's exemption
/// covers the tool results under the current project's directory only, so another
/// project's saved results (its secrets a command printed) are asked about as any path
/// outside the working directories, and so are those of a session from before the record.
/// The path must be resolved (a link in it leading out does not count).
fn in_earlier_results_dir(resolved: &Path, current: &Path, project: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    let (Some(session), Some(base)) = (current.parent(), current.parent().and_then(Path::parent))
    else {
        return false;
    };
    let Some(leaf) = current.file_name() else {
        return false;
    };
    let Ok(inside) = resolved.strip_prefix(base) else {
        return false;
    };
    let mut parts = inside.components();
    let (Some(std::path::Component::Normal(name)), Some(std::path::Component::Normal(sub))) =
        (parts.next(), parts.next())
    else {
        return false;
    };
    let prefix = session
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.split('-').next())
        .unwrap_or("toolwright");
    if sub != leaf
        || !name
            .to_str()
            .is_some_and(|n| n.starts_with(&format!("{prefix}-")))
    {
        return false;
    }
    let earlier = base.join(name);
    let private = match (
        std::fs::symlink_metadata(&earlier),
        std::fs::symlink_metadata(session),
    ) {
        (Ok(earlier), Ok(ours)) => {
            earlier.is_dir() && earlier.uid() == ours.uid() && earlier.mode() & 0o077 == 0
        }
        _ => false,
    };
    private && recorded_project(&earlier).is_some_and(|recorded| same_project(&recorded, project))
}

/// The project recorded in the session directory `session` ([`SESSION_PROJECT_FILE`]):
/// `None` when there is no record, or it is not a regular file of the directory's owner
/// (a link, a directory), is empty, or is longer than any path.
fn recorded_project(session: &Path) -> Option<PathBuf> {
    use std::io::Read as _;
    use std::os::unix::ffi::OsStringExt as _;
    use std::os::unix::fs::MetadataExt as _;
    let record = session.join(SESSION_PROJECT_FILE);
    let owner = std::fs::symlink_metadata(session).ok()?.uid();
    // Not through a link, nor anything but a regular file (a FIFO would block the read);
    // the file opened must be the one looked at.
    let seen = std::fs::symlink_metadata(&record).ok()?;
    if !seen.file_type().is_file()
        || seen.uid() != owner
        || seen.len() == 0
        || seen.len() > PROJECT_RECORD_MAX
    {
        return None;
    }
    let file = std::fs::File::open(&record).ok()?;
    let opened = file.metadata().ok()?;
    if (opened.dev(), opened.ino()) != (seen.dev(), seen.ino()) {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(PROJECT_RECORD_MAX).read_to_end(&mut bytes).ok()?;
    let path = PathBuf::from(std::ffi::OsString::from_vec(bytes));
    path.is_absolute().then_some(path)
}

/// Whether `recorded`, a session's project record, names the project `project`: the same
/// path, `project` as the context has it or with its links followed.
fn same_project(recorded: &Path, project: &Path) -> bool {
    recorded == project
        || recorded == normalize_lexically(project)
        || std::fs::canonicalize(project).is_ok_and(|real| recorded == real)
}

/// The path the kernel resolves: `..` applies to the symlink-resolved directory so far.
fn physical_path(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::from("/");
    for comp in path.components() {
        match comp {
            Component::ParentDir => {
                if let Ok(real) = std::fs::canonicalize(&out) {
                    out = real;
                }
                out.pop();
            }
            Component::Normal(s) => out.push(s),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    resolve_symlinks(&out)
}

/// Whether `cp WORDS` copies links as links (`-a`, `-d`, `-P`, `-r`/`-R`, `--archive`,
/// `--no-dereference`, `--recursive`), so that a relative one names another place where it
/// lands.
fn copies_links_as_links(words: &[Word]) -> bool {
    has_option(
        words,
        &['a', 'd', 'P', 'r', 'R'],
        &["--archive", "--no-dereference", "--recursive"],
    )
}

/// Whether `rsync WORDS` copies symbolic links as links (`-a`, `-l`, `--archive`,
/// `--links`), not told to copy what they point to instead (`-L`, `--copy-links`).
fn rsync_copies_links(words: &[Word]) -> bool {
    has_option(words, &['a', 'l'], &["--archive", "--links"])
        && !has_option(words, &['L'], &["--copy-links"])
}

/// Where the links at `src` (the link itself, or those in the tree below it, at most 10,000
/// entries looked at) lead once `src` is at `landing`: each with where it lands, an
/// absolute target as it says, a relative one read from the link's new directory,
/// lexically.
fn link_targets(src: &Path, landing: &Path) -> Vec<(PathBuf, PathBuf)> {
    const MAX_ENTRIES: usize = 10_000;
    let mut out = Vec::new();
    let mut seen = 0usize;
    let mut stack = vec![(src.to_path_buf(), landing.to_path_buf())];
    while let Some((at, lands)) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&at) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            if let Ok(target) = std::fs::read_link(&at) {
                if target.is_absolute() {
                    out.push((lands.clone(), normalize_lexically(&target)));
                } else if let Some(dir) = lands.parent() {
                    out.push((lands.clone(), normalize_lexically(&dir.join(target))));
                }
            }
            continue;
        }
        if !meta.is_dir() {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&at) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return out;
            }
            stack.push((e.path(), lands.join(e.file_name())));
        }
    }
    out
}

/// The files a tracer or wrapper itself writes or reads, before the command it runs: `strace`
/// and `ltrace -o F` (`--output=F`, `-oF`), `valgrind --log-file=F` / `--xml-file=F`,
/// `fakeroot -s F` (saves its state) and `-i F` (loads it). `None`: a computed or globbed
/// name.
fn wrapper_files(name: &str, words: &[Word]) -> Vec<(Option<String>, PathUse)> {
    let mut out = Vec::new();
    let value = |w: Option<&Word>| w.and_then(|w| w.value.clone().filter(|_| !w.glob));
    let mut i = 1;
    while let Some(w) = words.get(i) {
        i += 1;
        let Some(a) = w.value.as_deref() else {
            continue;
        };
        if !a.starts_with('-') || a == "--" {
            break;
        }
        match name {
            "strace" | "ltrace" => {
                if a == "--output" {
                    out.push((value(words.get(i)), PathUse::Write));
                    i += 1;
                    continue;
                }
                if let Some(v) = a.strip_prefix("--output=") {
                    out.push((Some(v.to_owned()), PathUse::Write));
                    continue;
                }
                if a.starts_with("--") {
                    continue;
                }
                // A bundle of short options (`-fo F`, `-ofile`): the first that takes a
                // value takes the rest of the word, or the next word.
                let valued = if name == "strace" {
                    "abeEIoOpPsSuUX"
                } else {
                    "aAeEFlLnopsuwx"
                };
                for (k, c) in a.char_indices().skip(1) {
                    if !valued.contains(c) {
                        continue;
                    }
                    let rest = &a[k + c.len_utf8()..];
                    let v = if rest.is_empty() {
                        i += 1;
                        value(words.get(i - 1))
                    } else {
                        Some(rest.to_owned())
                    };
                    if c == 'o' {
                        out.push((v, PathUse::Write));
                    }
                    break;
                }
            }
            "valgrind" => {
                for opt in ["--log-file=", "--xml-file="] {
                    if let Some(v) = a.strip_prefix(opt) {
                        out.push((Some(v.to_owned()), PathUse::Write));
                    }
                }
            }
            "fakeroot" => match a {
                "-s" => {
                    out.push((value(words.get(i)), PathUse::Write));
                    i += 1;
                }
                "-i" => {
                    out.push((value(words.get(i)), PathUse::Read));
                    i += 1;
                }
                "-l" | "-f" | "-b" | "--lib" | "--faked" => i += 1,
                _ => {}
            },
            _ => return out,
        }
    }
    out
}

/// The shells that read a startup file they are given.
const NESTED_SHELL_NAMES: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "ash", "mksh"];

/// The startup files a nested shell reads before its script, as written (`None`: computed):
/// `--rcfile F` / `--init-file F`, and `BASH_ENV` or `ENV` set on its line (`BASH_ENV=F bash
/// -c …`, `env ENV=F sh -i`; one set otherwise, `export BASH_ENV=F`, is not known).
fn startup_files(words: &[Word], sub: &SimpleCommand, analysis: &Analysis) -> Vec<Option<String>> {
    let mut out = Vec::new();
    let options = words.iter().skip(1);
    let mut named = false;
    for w in options {
        if named {
            // A glob names what it matches (`--rcfile .en?`): not worked out here.
            out.push(w.value.clone().filter(|_| !w.glob));
            named = false;
            continue;
        }
        match w.value.as_deref() {
            Some("--rcfile" | "--init-file") => named = true,
            Some(v) if !v.starts_with('-') => break,
            _ => {}
        }
    }
    // `NAME=value` as written: a value without expansions, its quotes taken away.
    let value_of = |raw: &str| -> Option<Option<String>> {
        let (name, value) = raw.split_once('=')?;
        if !matches!(name.trim_end_matches('+'), "BASH_ENV" | "ENV") {
            return None;
        }
        Some(
            (!value.contains(['$', '`', '\\']))
                .then(|| value.chars().filter(|c| !matches!(c, '"' | '\'')).collect()),
        )
    };
    let before = out.len();
    out.extend(sub.assignments.iter().filter_map(|a| value_of(&a.raw)));
    for c in &analysis.commands {
        out.extend(c.assignments.iter().filter_map(|a| value_of(&a.raw)));
        out.extend(c.words.iter().filter_map(|w| value_of(&w.raw)));
    }
    // Set some other way (`export BASH_ENV=…`, `declare`, `read`): not known here.
    if out.len() == before && analysis.startup_env {
        out.push(None);
    }
    out
}

/// How bash matches the line's globs, as far as the line says: a hidden name is matched by
/// any pattern when the line names `dotglob` or `GLOBIGNORE` (`shopt -s dotglob; cat *`
/// reads `.env`), and regardless of case when it names `nocaseglob` (`shopt -s
/// nocaseglob; cat .ENV*` reads `.env`); `**` goes down directories with `globstar`.
#[derive(Debug, Clone, Copy)]
struct GlobReading {
    dotglob: bool,
    nocase: bool,
    /// `**` matches across directories (`shopt -s globstar`): not listed here.
    globstar: bool,
}

impl GlobReading {
    /// Found once, when the command was analysed ([`Analysis::glob_options`]): this is
    /// asked for each of its commands.
    fn of(analysis: &Analysis) -> Self {
        let options = analysis.glob_options;
        GlobReading {
            dotglob: options.dotglob,
            nocase: options.nocaseglob,
            globstar: options.globstar,
        }
    }
}

/// Lists the entries a last-component glob could match: `(directory, matching entries)`, or
/// `None` when the glob is not in the last component only.
/// `None` too for what `globset` would read differently from bash: a POSIX class, an
/// equivalence class or a collating symbol (`[[:alpha:]]`, `[[=e=]]`, `[[.a.]]`), which it
/// does not know (bash's `[^x]` is read as `[!x]`), and a directory with more than
/// [`MAX_GLOB_ENTRIES`] entries, which is not listed to the end. A hidden name is matched
/// only by a pattern that starts with `.`, unless `dotglob`; case counts unless
/// `nocaseglob` ([`GlobReading`]).
fn expand_glob(path: &Path, reading: GlobReading) -> Option<(PathBuf, Vec<PathBuf>)> {
    let dir = path.parent()?.to_path_buf();
    let pattern = path.file_name()?.to_str()?;
    if dir.to_string_lossy().contains(['*', '?', '[']) {
        return None;
    }
    if pattern.contains("[:")
        || pattern.contains("[=")
        || pattern.contains("[.")
        || (reading.globstar && pattern.contains("**"))
    {
        return None;
    }
    let pattern = pattern.replace("[^", "[!");
    let glob = globset::GlobBuilder::new(&pattern)
        .literal_separator(true)
        .case_insensitive(reading.nocase)
        .build()
        .ok()?
        .compile_matcher();
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(&dir) {
        for (n, e) in rd.flatten().enumerate() {
            if n == MAX_GLOB_ENTRIES {
                return None;
            }
            // As bash matches without `dotglob`: a leading `.` only by a leading `.`
            // (`cat *` reads no `.env`, `cat .e*` does).
            let hidden = e.file_name().as_encoded_bytes().first() == Some(&b'.');
            if hidden && !reading.dotglob && !pattern.starts_with('.') {
                continue;
            }
            if glob.is_match(e.file_name()) {
                out.push(dir.join(e.file_name()));
            }
        }
    }
    Some((dir, out))
}

/// How a command writes a whole tree, for [`PermissionEngine::written_below`].
#[derive(Debug, Clone, Copy)]
struct TreeWrite<'a> {
    /// What it does, for messages (`removes everything under`).
    how: &'a str,
    /// Links below the root are followed (`cp -rL`).
    follow_links: bool,
    /// Its files leave their names (`mv`, where they land): a file a Read deny rule
    /// protects, moved where the rule does not reach it (`mv config c2 && cat
    /// c2/prod.json`), is denied.
    moves: bool,
}

/// Entries of a tree a recursive command reads that are checked against the Read deny
/// rules at most.
const MAX_TREE_ENTRIES: usize = 100_000;

/// Entries of one directory a glob is matched against at most.
const MAX_GLOB_ENTRIES: usize = 10_000;

/// Distinct paths one command's arguments are checked for at most; past that the command
/// is asked about (its paths are not all checked).
const MAX_CHECKED_PATHS: usize = 20_000;

const NO_PREFIX: &[&str] = &[
    "rm", "rmdir", "sudo", "doas", "bash", "sh", "zsh", "eval", "exec", "env", "xargs", "chmod",
    "chown", "dd", "mv", "cp", "python", "python3", "node", "perl", "ruby", "curl", "wget", "ssh",
    "scp", "kill", "pkill", "killall", "sed", "awk", "gawk", "find", "npx", "bunx", "pnpx", "uvx",
    "pipx", "busybox", "toybox", "script", "sg",
];

/// Subcommands that run any command or code they are given (`uv run bash -c …`, `npm exec
/// …`, `docker run … sh`): a `prog sub:*` prefix of one would allow anything, so the exact
/// command is stored instead.
const NO_PREFIX_SUBCOMMANDS: &[(&str, &str)] = &[
    ("uv", "run"),
    ("uv", "tool"),
    ("npm", "exec"),
    ("npm", "x"),
    ("pnpm", "exec"),
    ("pnpm", "dlx"),
    ("yarn", "exec"),
    ("yarn", "dlx"),
    ("bun", "x"),
    ("bun", "exec"),
    ("deno", "eval"),
    ("deno", "run"),
    ("poetry", "run"),
    ("pipenv", "run"),
    ("conda", "run"),
    ("nix", "run"),
    ("nix", "shell"),
    ("docker", "run"),
    ("docker", "exec"),
    ("podman", "run"),
    ("podman", "exec"),
    ("kubectl", "exec"),
    ("kubectl", "run"),
];

/// What git's discovery (`setup_git_directory_gently_1`) finds at one directory on its
/// walk up.
enum GitAt {
    /// A `.git` that names the repository: a directory that is a git directory, or a file
    /// (a gitfile, which names one elsewhere; git stops at an invalid one too).
    DotGit {
        /// The `.git` is a directory whose configuration names a work tree
        /// (`core.worktree`).
        configured_work_tree: bool,
    },
    /// A `.git` git may or may not take for a git directory ([`is_git_directory`]'s
    /// `Err`): where git's walk ends cannot be told.
    Unsure,
    /// The directory itself is a git directory (or may be): git takes it for a bare
    /// repository.
    Bare,
    /// Neither: git goes on up.
    Nothing,
}

/// What git's discovery finds at `at`: a `.git` that is a regular file (a gitfile) or
/// passes git's git-directory test ([`is_git_directory`]) stops it; any other `.git` (an
/// empty `.git/`, a dangling link, a `HEAD` that is no ref) does not, and git then checks
/// `at` itself as a bare repository.
fn git_at(at: &Path) -> GitAt {
    let dot_git = at.join(".git");
    match std::fs::metadata(&dot_git) {
        Ok(meta) if meta.is_file() => {
            return GitAt::DotGit {
                configured_work_tree: false,
            };
        }
        Ok(_) => match is_git_directory(&dot_git) {
            Ok(true) => {
                let configured = std::fs::read(dot_git.join("config"))
                    .is_ok_and(|c| c.to_ascii_lowercase().windows(8).any(|w| w == b"worktree"));
                return GitAt::DotGit {
                    configured_work_tree: configured,
                };
            }
            Ok(false) => {}
            Err(_) => return GitAt::Unsure,
        },
        Err(_) => {}
    }
    match is_git_directory(at) {
        Ok(false) => GitAt::Nothing,
        Ok(true) | Err(_) => GitAt::Bare,
    }
}

/// git's own test of a git directory (`is_git_directory` in git's `setup.c`: a `HEAD` that
/// is a ref, and `objects` and `refs` that pass `access(X_OK)`, where `commondir` points):
/// [`crate::git_config::is_git_directory`], `Err` (in words) where it cannot be told.
pub(crate) fn is_git_directory(dir: &Path) -> Result<bool, String> {
    crate::git_config::is_git_directory(dir)
}

/// The work tree of the repository git finds from `dir`: the nearest directory up from it
/// whose `.git` stops git's discovery ([`git_at`]). When none does, git finds no
/// repository: the nearest directory that holds any `.git` (which git skipped, but which
/// may be taken for a repository all the same), or `dir` itself. `None` when it cannot be
/// told: `dir` is inside a git directory (a bare repository, `.git` itself), a `.git` on
/// the way may or may not be taken, or the repository's configuration names a work tree
/// (`core.worktree`).
fn git_work_tree(dir: &Path) -> Option<PathBuf> {
    let mut skipped: Option<&Path> = None;
    for at in dir.ancestors() {
        match git_at(at) {
            GitAt::DotGit {
                configured_work_tree,
            } => return (!configured_work_tree).then(|| at.to_path_buf()),
            GitAt::Bare | GitAt::Unsure => return None,
            GitAt::Nothing => {
                if skipped.is_none() && at.join(".git").symlink_metadata().is_ok() {
                    skipped = Some(at);
                }
            }
        }
    }
    Some(skipped.unwrap_or(dir).to_path_buf())
}

/// The first directory up from `dir`, before one whose `.git` stops git's discovery, that
/// git takes (or may take) for a bare repository ([`git_at`], [`is_git_directory`]).
/// `None` when there is none, or a `.git` on the way may or may not stop git (the check of
/// the repository's own files asks about it, naming it:
/// [`crate::git_config::repository_programs`]).
fn planted_git_dir(dir: &Path) -> Option<PathBuf> {
    for at in dir.ancestors() {
        match git_at(at) {
            GitAt::DotGit { .. } | GitAt::Unsure => return None,
            GitAt::Bare => return Some(at.to_path_buf()),
            GitAt::Nothing => {}
        }
    }
    None
}

/// The prefix rule content "don't ask again" stores for a subcommand: `program subcommand:*`
/// (or the exact command for programs too dangerous to allow by prefix).
pub fn prefix_suggestion(sub: &SimpleCommand) -> String {
    // The exact command, as a pattern that matches only it.
    let exact = || escape_stars(&sub.raw_text());
    if sub.words.iter().any(|w| w.value.is_none()) {
        return exact();
    }
    // A command too dangerous to prefix, behind any wrapper (`nice rm -rf x`, `setsid rm`),
    // in any reading of the wrappers' options.
    let no_prefix = wrapped_readings(&sub.words)
        .into_iter()
        .any(|(reading, _)| {
            reading
                .first()
                .and_then(|w| w.value.as_deref())
                .is_some_and(|n| NO_PREFIX.contains(&basename(n)))
        });
    if no_prefix {
        return exact();
    }
    // Allow rules see through the safe wrappers (`nice`, `timeout 5`): the prefix is the
    // wrapped command's. Behind another wrapper (`setsid git push`) the command as written.
    let mut words = &sub.words[..];
    while let Some(n) = safe_wrapper_len(words) {
        words = &words[n..];
    }
    if wrapped_command_starts(words).is_some() {
        return exact();
    }
    let Some(name) = words.first().and_then(|w| w.value.as_deref()) else {
        return exact();
    };
    let second = words.get(1).and_then(|w| w.value.as_deref()).filter(|s| {
        s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == ':')
    });
    match (second, words.len()) {
        (Some(s), _) if NO_PREFIX_SUBCOMMANDS.contains(&(basename(name), s)) => exact(),
        (Some(s), _) => format!("{name} {s}:*"),
        // A lone program (`make`): any arguments.
        (None, 1) => format!("{name}:*"),
        // An option or a path first (`sed -i …`, `git -C dir log`): no subcommand to stop
        // at, and `sed:*` would allow `sed 'e cmd'`; the exact command is stored.
        (None, _) => exact(),
    }
}

/// The first `Tool(param:value)` rule of behaviour `b` on `tool` that the call's `input`
/// matches, with the field and value as a message shows them.
fn field_rule_hit(
    set: &RuleSet,
    b: RuleBehavior,
    tool: &dyn Tool,
    names: &[String],
    input: &Value,
) -> Option<(SourcedRule, String)> {
    set.fields[bi(b)].iter().find_map(|&i| {
        let rule = set.rules.get(i)?;
        if !tool_matches(&rule.tool, tool, names) {
            return None;
        }
        let shown = rule.field.as_ref()?.matches(input)?;
        Some((rule.sourced.clone(), shown))
    })
}

/// The denial of a call by a `Tool(param:value)` deny rule its input matches.
fn field_rule_denial(
    set: &RuleSet,
    tool: &dyn Tool,
    names: &[String],
    input: &Value,
) -> Option<Finding> {
    let (rule, shown) = field_rule_hit(set, RuleBehavior::Deny, tool, names, input)?;
    Some(
        Finding::new(
            Kind::Deny,
            format!(
                "Permission to use {} with `{shown}` has been denied.",
                tool.name()
            ),
        )
        .with_rule(Some(rule)),
    )
}

/// The ask of a tool-wide ask rule (`ask: ["Bash"]`): asked even in bypass mode.
fn wide_ask_finding(name: &str, rule: SourcedRule) -> Finding {
    Finding::new(
        Kind::Ask,
        format!("Permission to use {name} requires approval (ask rule)."),
    )
    .with_rule(Some(rule))
    .immune()
}

fn merge(subject: Option<Finding>, own: PermissionResult) -> (Finding, Option<Value>) {
    let (own_f, updated) = match own {
        PermissionResult::Allow {
            updated_input,
            reason,
        } => {
            let mut f = Finding::new(Kind::Allow, "");
            f.reason = reason;
            (f, updated_input)
        }
        PermissionResult::Ask {
            message,
            updated_input,
            suggestions,
            reason,
        } => {
            let immune = matches!(
                reason,
                Some(DecisionReason::SafetyCheck { .. }) | Some(DecisionReason::Rule { .. })
            );
            let mut f = Finding::new(Kind::Ask, message);
            f.reason = reason;
            f.suggestions = suggestions;
            f.immune = immune;
            (f, updated_input)
        }
        PermissionResult::Deny { message, reason } => {
            (Finding::new(Kind::Deny, message).reason(reason), None)
        }
        PermissionResult::Passthrough {
            message,
            suggestions,
        } => {
            let mut f = Finding::new(Kind::Passthrough, message.unwrap_or_default());
            f.suggestions = suggestions;
            (f, None)
        }
    };
    let Some(s) = subject else {
        return (own_f, updated);
    };
    let chosen = match (s.kind, own_f.kind) {
        (Kind::Deny, _) => s,
        (_, Kind::Deny) => own_f,
        (Kind::Ask, Kind::Ask) => {
            if own_f.immune && !s.immune {
                own_f
            } else {
                s
            }
        }
        (Kind::Ask, _) => s,
        (_, Kind::Ask) => own_f,
        (Kind::Allow, _) => s,
        (_, Kind::Allow) => own_f,
        _ => {
            let mut s = s;
            if s.message.is_empty() {
                s.message = own_f.message;
            }
            s.suggestions.extend(own_f.suggestions);
            s
        }
    };
    (chosen, updated)
}

/// Whether git in `sub` (its words `words`) is told to work on another repository than the one
/// its directory holds: `-C`, `--git-dir` and the like, a `GIT_` variable assigned on the
/// command line, or (`git_env`) one set earlier in the line. Such git is asked about by the
/// checks of those, not judged by the repository found here.
fn git_sent_elsewhere(sub: &SimpleCommand, words: &[Word], git_env: bool) -> bool {
    git_env
        || git_repository_elsewhere(words)
        || sub.assignments.iter().any(|a| a.name.starts_with("GIT_"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brace_expansion_is_bounded() {
        assert_eq!(
            expand_braces("{a,b}.rs"),
            Some(vec!["a.rs".to_owned(), "b.rs".to_owned()])
        );
        assert_eq!(
            expand_braces("src/{a,b/{c,d}}"),
            Some(vec!["src/a".into(), "src/b/c".into(), "src/b/d".into()])
        );
        assert_eq!(expand_braces("{a}"), None);
        assert_eq!(
            expand_braces("{{a,b}"),
            Some(vec!["{a".into(), "{b".into()])
        );
        // 2^6 = 64 words is the most; more, or more than 16 braces, is not expanded.
        assert_eq!(expand_braces(&"{a,b}".repeat(6)).map(|v| v.len()), Some(64));
        assert_eq!(expand_braces(&"{a,b}".repeat(7)), None);
        assert_eq!(expand_braces(&format!("{}x", "{a}".repeat(17))), None);
        assert_eq!(expand_braces(&"{a,b}".repeat(8000)), None);
        assert_eq!(
            expand_braces(&format!("{}a,b{}", "{".repeat(5000), "}".repeat(5000))),
            None
        );
    }
}
