//! The permission vocabulary shared by tools, hooks and the permission engine.
//!
//! These are data types only. Parsing rules and deciding calls is `tool-perms`' job; here
//! live the shapes that cross crate boundaries: what a tool's own check returns
//! ([`PermissionResult`]), the modes, the rule sources, and the permission updates that hooks
//! and prompts hand back (same JSON as Claude Code).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The permission mode of a session (Claude Code's `PermissionMode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PermissionMode {
    /// Ask for anything not allowed by a rule.
    #[default]
    Default,
    /// File edits inside the working directories are allowed without asking.
    AcceptEdits,
    /// Everything not denied and not safety-checked is allowed.
    BypassPermissions,
    /// Anything that would ask is denied instead.
    DontAsk,
    /// Planning: read-only tools only.
    Plan,
    /// A classifier decides instead of a prompt.
    Auto,
}

impl PermissionMode {
    /// The name used in settings files and hook input (`acceptEdits`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "acceptEdits",
            Self::BypassPermissions => "bypassPermissions",
            Self::DontAsk => "dontAsk",
            Self::Plan => "plan",
            Self::Auto => "auto",
        }
    }
}

/// Where a rule or setting came from, in Claude Code's scan order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RuleSource {
    /// `~/.claude/settings.json`.
    UserSettings,
    /// `.claude/settings.json` in the project.
    ProjectSettings,
    /// `.claude/settings.local.json` in the project.
    LocalSettings,
    /// A file passed with `--settings`.
    FlagSettings,
    /// Managed (policy) settings.
    PolicySettings,
    /// `--allowedTools` / `--disallowedTools` on the command line.
    CliArg,
    /// A slash command's frontmatter.
    Command,
    /// Granted during this session only.
    Session,
}

/// The three rule behaviours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleBehavior {
    /// Run without asking.
    Allow,
    /// Never run.
    Deny,
    /// Ask the user first.
    Ask,
}

/// A rule string as written (`Bash(npm test:*)`) with the place it came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SourcedRule {
    /// Where the rule was written.
    pub source: RuleSource,
    /// The rule as written in the settings file.
    pub rule: String,
}

/// The permission state a call is decided against, carried in the
/// [`ToolUseContext`](crate::ToolUseContext).
///
/// Rules are kept as written; `tool-perms` parses them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolPermissionContext {
    /// The current mode.
    pub mode: PermissionMode,
    /// Directories outside the cwd that tools may work in.
    pub additional_working_directories: Vec<PathBuf>,
    /// Allow rules.
    pub allow: Vec<SourcedRule>,
    /// Deny rules.
    pub deny: Vec<SourcedRule>,
    /// Ask rules.
    pub ask: Vec<SourcedRule>,
    /// Whether `bypassPermissions` may be entered in this session.
    pub bypass_available: bool,
    /// Background agents cannot prompt: anything that would ask is denied.
    pub avoid_prompts: bool,
    /// The mode plan mode was entered from, to return to when it ends (Claude Code's
    /// `prePlanMode`); kept by [`set_mode`](Self::set_mode).
    pub pre_plan_mode: Option<PermissionMode>,
    /// Only managed settings may give permission rules (`allowManagedPermissionRulesOnly`):
    /// no rule is added during the session either (a user's "always" allows once, a hook's
    /// `updatedPermissions` adds nothing).
    pub managed_rules_only: bool,
    /// The settings' `permissions.blockReadsOutsideWorkingDirectories`: the file tools that
    /// read (Read, Grep, Glob) are denied a path outside the working directories in every
    /// mode, and a shell command that reads one is asked about in every mode.
    pub block_reads_outside_working_dirs: bool,
    /// The settings' `permissions.blockWritesOutsideWorkingDirectories`: the file tools that
    /// write (Write, Edit, NotebookEdit) are denied a path outside the working directories
    /// in every mode (shell commands are not limited by it).
    pub block_writes_outside_working_dirs: bool,
    /// The settings' `permissions.denyInsteadOfPrompting`: a call that would ask is denied
    /// instead, even where the host turns [`avoid_prompts`](Self::avoid_prompts) off to ask
    /// a person (a terminal, an MCP client).
    pub deny_instead_of_prompting: bool,
}

impl ToolPermissionContext {
    /// Switches to `mode` as Claude Code does: entering plan mode remembers the mode it
    /// left in [`pre_plan_mode`](Self::pre_plan_mode); any other switch forgets it. A host
    /// that changes the mode (the user's mode switch) does it with this, so that leaving
    /// plan mode never returns to a mode the user has left since.
    pub fn set_mode(&mut self, mode: PermissionMode) {
        if mode == PermissionMode::Plan {
            if self.mode != PermissionMode::Plan {
                self.pre_plan_mode = Some(self.mode);
            }
        } else {
            self.pre_plan_mode = None;
        }
        self.mode = mode;
    }

    /// Whether plan mode holds back calls that change things: plan mode without bypass
    /// available (with it, plan mode allows as bypass does).
    pub fn plan_mode_refuses_changes(&self) -> bool {
        self.mode == PermissionMode::Plan && !self.bypass_available
    }

    /// Plan mode's refusal of a call of `tool` that would change things: what the
    /// permission engine answers, and what a tool whose changes the engine cannot see (a
    /// durable cron job's file, a new worktree) answers from its own permission check.
    pub fn plan_mode_refusal(tool: &str) -> PermissionResult {
        PermissionResult::deny(
            format!(
                "Plan mode is active: {tool} would make changes, and only read-only tools run until the plan is approved with ExitPlanMode."
            ),
            DecisionReason::Mode {
                mode: PermissionMode::Plan,
            },
        )
    }
}

/// Why a decision was reached; shown to users and written to telemetry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum DecisionReason {
    /// A rule matched.
    Rule {
        /// The rule as written.
        rule: String,
        /// Its source.
        source: RuleSource,
    },
    /// The mode decided.
    Mode {
        /// The mode.
        mode: PermissionMode,
    },
    /// A hook decided.
    Hook {
        /// The hook's name or command.
        hook: String,
        /// The hook's reason, if any.
        reason: Option<String>,
    },
    /// A protected path (`.git/`, shell rc files, ...): asks even in bypass mode.
    SafetyCheck {
        /// What was protected.
        reason: String,
    },
    /// The path is outside the working directories.
    WorkingDir {
        /// Explanation.
        reason: String,
    },
    /// The user answered the permission question with an allow: once, or for good
    /// (`permanent`: "don't ask again", which also added rules).
    User {
        /// Whether the answer also holds for later calls.
        permanent: bool,
    },
    /// Anything else, explained.
    Other {
        /// Explanation.
        reason: String,
    },
}

/// What a permission check decided for one call.
#[derive(Debug, Clone, PartialEq)]
pub enum PermissionResult {
    /// The call may run, possibly with a changed input.
    Allow {
        /// The input to run with instead of the model's, if changed.
        updated_input: Option<Value>,
        /// Why.
        reason: Option<DecisionReason>,
    },
    /// The user must be asked.
    Ask {
        /// What to show the user.
        message: String,
        /// The input to run with if the user agrees, if changed.
        updated_input: Option<Value>,
        /// Rules the user might add to stop being asked.
        suggestions: Vec<PermissionUpdate>,
        /// Why.
        reason: Option<DecisionReason>,
    },
    /// The call must not run; `message` is what the model sees.
    Deny {
        /// The model-facing reason.
        message: String,
        /// Why.
        reason: DecisionReason,
    },
    /// The checker has no opinion; the general rules and mode decide.
    Passthrough {
        /// Context for the prompt the general flow may show.
        message: Option<String>,
        /// Rules the user might add.
        suggestions: Vec<PermissionUpdate>,
    },
}

impl PermissionResult {
    /// A plain allow with the input unchanged.
    pub fn allow() -> Self {
        Self::Allow {
            updated_input: None,
            reason: None,
        }
    }

    /// A plain passthrough (no opinion).
    pub fn passthrough() -> Self {
        Self::Passthrough {
            message: None,
            suggestions: Vec::new(),
        }
    }

    /// A deny with `message` for the model.
    pub fn deny(message: impl Into<String>, reason: DecisionReason) -> Self {
        Self::Deny {
            message: message.into(),
            reason,
        }
    }

    /// An ask with `message` for the user.
    pub fn ask(message: impl Into<String>) -> Self {
        Self::Ask {
            message: message.into(),
            updated_input: None,
            suggestions: Vec::new(),
            reason: None,
        }
    }

    /// The behaviour name: `allow`, `ask`, `deny` or `passthrough`.
    pub fn behavior(&self) -> &'static str {
        match self {
            Self::Allow { .. } => "allow",
            Self::Ask { .. } => "ask",
            Self::Deny { .. } => "deny",
            Self::Passthrough { .. } => "passthrough",
        }
    }
}

/// One rule inside a [`PermissionUpdate`] (`{toolName, ruleContent?}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleValue {
    /// The tool name (`Bash`, `mcp__srv__tool`).
    pub tool_name: String,
    /// The content inside the parentheses, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_content: Option<String>,
}

/// Where a [`PermissionUpdate`] is saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum UpdateDestination {
    /// `~/.claude/settings.json`.
    UserSettings,
    /// `.claude/settings.json`.
    ProjectSettings,
    /// `.claude/settings.local.json`.
    LocalSettings,
    /// This session only.
    Session,
    /// The command line's rule set.
    CliArg,
}

/// A change to the permission state (Claude Code's `PermissionUpdate`, same JSON), as
/// suggested to the user or returned by a `PermissionRequest` hook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum PermissionUpdate {
    /// Add rules.
    AddRules {
        /// The rules.
        rules: Vec<RuleValue>,
        /// Their behaviour.
        behavior: RuleBehavior,
        /// Where to save them.
        destination: UpdateDestination,
    },
    /// Replace all rules of one behaviour.
    ReplaceRules {
        /// The rules.
        rules: Vec<RuleValue>,
        /// Their behaviour.
        behavior: RuleBehavior,
        /// Where to save them.
        destination: UpdateDestination,
    },
    /// Remove rules.
    RemoveRules {
        /// The rules.
        rules: Vec<RuleValue>,
        /// Their behaviour.
        behavior: RuleBehavior,
        /// Where to remove them from.
        destination: UpdateDestination,
    },
    /// Change the mode.
    SetMode {
        /// The new mode.
        mode: PermissionMode,
        /// Where to save it.
        destination: UpdateDestination,
    },
    /// Add working directories.
    AddDirectories {
        /// The directories.
        directories: Vec<String>,
        /// Where to save them.
        destination: UpdateDestination,
    },
    /// Remove working directories.
    RemoveDirectories {
        /// The directories.
        directories: Vec<String>,
        /// Where to remove them from.
        destination: UpdateDestination,
    },
}

/// Whether the byte at `idx` of a rule is escaped: preceded by an odd number of
/// backslashes (`\(` is a literal parenthesis, `\\(` a backslash and an opening one).
pub fn rule_char_is_escaped(rule: &[u8], idx: usize) -> bool {
    rule[..idx]
        .iter()
        .rev()
        .take_while(|&&b| b == b'\\')
        .count()
        % 2
        == 1
}

/// What is wrong with a permission rule's syntax (`Tool` or `Tool(content)`), or `None` for
/// a well-formed one: an empty rule, mismatched parentheses (as many unescaped `(` as `)`
/// are needed, Claude Code's check; escaped ones, `\(`, do not count), text after the
/// closing `)`, no tool name before `(`, a tool name with spaces, a backslash or a control
/// or invisible character, empty parentheses `()` (or nothing but spaces between them). The
/// one check behind tool-perms' `parse_rule` and the hooks' `if` diagnostics, so that a rule
/// one refuses the other reports. Takes time linear in the rule.
pub fn rule_syntax_problem(rule: &str) -> Option<&'static str> {
    if rule.trim().is_empty() {
        return Some("the rule is empty");
    }
    let bytes = rule.as_bytes();
    // One pass: a byte is escaped when an odd number of backslashes comes right before it.
    let (mut opens, mut closes, mut backslashes) = (0usize, 0usize, 0usize);
    let mut first_open = None;
    for (i, &b) in bytes.iter().enumerate() {
        let escaped = backslashes % 2 == 1;
        match b {
            b'(' if !escaped => {
                opens += 1;
                first_open.get_or_insert(i);
            }
            b')' if !escaped => closes += 1,
            _ => {}
        }
        backslashes = if b == b'\\' { backslashes + 1 } else { 0 };
    }
    let name_end = first_open.unwrap_or(bytes.len());
    // Before the other checks on the name: `Bash\u{200b}(rm:*)` is no rule with content for
    // a tool of that name, it is a name no tool has.
    if rule[..name_end].chars().any(crate::is_hidden_char) {
        return Some(
            "the tool name holds a control or invisible character (shown escaped), which no tool's name has",
        );
    }
    if opens == 0 && closes == 0 {
        return rule
            .contains(char::is_whitespace)
            .then_some("a tool name cannot contain spaces (did you mean `Tool(content)`?)");
    }
    // What is wrong with the name before the first `(` is said first: it is what the rule
    // would be read as (`)Bash(*)` as the tool `)Bash`).
    if let Some(open) = first_open {
        let name = &rule[..open];
        if name.is_empty() {
            return Some("the tool name before `(` is empty");
        }
        if name.contains(char::is_whitespace) {
            return Some("a tool name cannot contain spaces");
        }
        // `\()()` would read as the tool `\()`, which no tool is, and would not read back.
        if name.contains('\\') {
            return Some("a tool name cannot contain `\\`");
        }
        // `)Bash(*)` would be saved as `)Bash`, which does not read back.
        if name.contains(')') {
            return Some("a tool name cannot contain `)`");
        }
    }
    if opens != closes {
        return Some(if opens > closes {
            "mismatched parentheses: a `(` is never closed (escape literal ones as `\\(` and `\\)`)"
        } else {
            "mismatched parentheses: a `)` closes nothing (escape literal ones as `\\(` and `\\)`)"
        });
    }
    if !rule.ends_with(')') || rule_char_is_escaped(bytes, bytes.len() - 1) {
        return Some("the rule must end with `)` after its content");
    }
    let open = first_open.unwrap_or(0);
    if &rule[open..] == "()" {
        return Some("empty parentheses `()`: write the bare tool name for a tool-wide rule");
    }
    // `Bash( )` is `Bash()` with spaces: no command is empty, and no path.
    if rule[open + 1..rule.len() - 1].trim().is_empty() {
        return Some(
            "empty parentheses (nothing but spaces between them): write the bare tool name for a tool-wide rule",
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_update_json_matches_claude_code() {
        let json = serde_json::json!({
            "type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}],
            "behavior": "allow",
            "destination": "localSettings"
        });
        let update: PermissionUpdate = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(serde_json::to_value(&update).unwrap(), json);
        let mode: PermissionUpdate = serde_json::from_value(
            serde_json::json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"}),
        )
        .unwrap();
        assert!(matches!(
            mode,
            PermissionUpdate::SetMode {
                mode: PermissionMode::AcceptEdits,
                ..
            }
        ));
    }

    #[test]
    fn mode_names() {
        for mode in [
            PermissionMode::Default,
            PermissionMode::AcceptEdits,
            PermissionMode::BypassPermissions,
            PermissionMode::DontAsk,
            PermissionMode::Plan,
            PermissionMode::Auto,
        ] {
            assert_eq!(serde_json::to_value(mode).unwrap(), mode.as_str());
        }
    }
}
