//! Sub-agent definitions: `.claude/agents/<name>.md` files (Claude Code's format) and the
//! built-in `general-purpose` agent.
//!
//! A definition is a Markdown file whose frontmatter (between `---` lines) names the agent
//! and restricts its tools; the body is the agent's system prompt:
//!
//! ```text
//! ---
//! name: reviewer
//! description: Reviews a change for bugs
//! tools: Read, Grep, Glob          # or a YAML list; absent (or `*`) = every tool; empty = none
//! disallowedTools: [Bash]          # removed from whatever `tools` gives
//! model: haiku                     # sonnet, opus, haiku, inherit or a model name
//! permissionMode: plan             # only ever stricter than the caller's mode
//! ---
//! You review code. ...
//! ```
//!
//! The frontmatter is read by [`tools_builtin::frontmatter`], as skills' is (block scalars,
//! lists, quotes, comments); what it could not read is in [`AgentDefinition::warnings`] and
//! among the problems [`load_agent_definitions`] returns.
//!
//! Claude Code's `hooks`, `skills` and `mcpServers` fields are not applied, and a warning
//! says so for each: a definition's own hooks do not run, its skills are not preloaded, no
//! server is connected for it. A definition whose `hooks` name a PreToolUse or
//! PermissionRequest hook ([`GUARD_HOOK_EVENTS`]) is loaded and listed, but a call of its
//! type is refused ([`AgentDefinition::unguarded_refusal`]): the agent would otherwise run
//! what its guard blocks.
//!
//! Definitions are read from the user's directory (`$CLAUDE_CONFIG_DIR/agents`, else
//! `~/.claude/agents`) and from `.claude/agents` in the project directory and its parents
//! (up to the git repository's root, or only the project directory outside a repository; never the home directory). A project definition overrides a user one of the same name,
//! the nearer directory winning, and both override the built-in one. Each directory's
//! subfolders are read too, as in Claude Code (the name is the frontmatter's, not the
//! path's); a file in a subfolder without a `name` in its frontmatter is no definition and is
//! skipped quietly. Of two files under one directory that define one name, the one whose
//! path sorts last is used, with a notice.
//!
//! `tools` and `disallowedTools` name MCP tools as permission rules do: `mcp__srv` and
//! `mcp__srv__*` name every tool of server `srv` ([`AgentDefinition::select_tools`]). Each
//! entry is read once, at most [`MAX_TOOL_ENTRIES`] different ones.
//!
//! A definition's body goes to the model without a Read permission, so the skills' refusals
//! apply ([`tools_builtin::skill`]): a file is read as a `SKILL.md` is (a regular file, up to
//! `MAX_SKILL_BYTES`), a project's definition whose file leads out of the project through a
//! symbolic link is not loaded, and one whose file a Read deny rule covers is neither listed
//! nor started ([`AgentDefinition::refused_file`]).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tool_core::{PermissionMode, RuleSource, SourcedRule, Tool, ToolPermissionContext};
use tool_perms::{PathRoots, PermissionEngine};
use tools_builtin::frontmatter;

/// The built-in agent's type.
pub const GENERAL_PURPOSE: &str = "general-purpose";

/// How much of a definition's description goes into the Agent tool's description, which
/// is sent with every request: the first this many characters, with an ellipsis when cut
/// ([`AgentDefinition::listed_description`]).
pub const MAX_LISTED_DESCRIPTION_CHARS: usize = 1_000;

/// How many different entries of a definition's `tools` are read: past this many, the list is
/// cut with a warning (the rest give nothing), so that a huge list cannot hold up loading
/// (and a signal) nor the Agent tool's description; a `disallowedTools` list past it refuses
/// the definition instead, since cutting it would let the rest of what it keeps out in.
/// Duplicates are dropped first, and the file is read up to
/// [`tools_builtin::skill::MAX_SKILL_BYTES`].
pub const MAX_TOOL_ENTRIES: usize = 2_000;

/// The tools no sub-agent gets (Claude Code's `ALL_AGENT_DISALLOWED_TOOLS`): they need the
/// user or belong to the main thread. `Agent` is also withheld unless a definition's `tools`
/// names it. The worktree tools are ours to add: the worktree session is the main
/// thread's (one per session, in its app state), so a sub-agent's `ExitWorktree` would
/// remove the directory its parent works in, and its `EnterWorktree` would move only
/// itself while refusing the parent's.
pub const AGENT_DISALLOWED_TOOLS: &[&str] = &[
    "TaskOutput",
    "ExitPlanMode",
    "EnterPlanMode",
    "AskUserQuestion",
    "TaskStop",
    "EnterWorktree",
    "ExitWorktree",
];

const GENERAL_PURPOSE_PROMPT: &str = "You are an agent started by another agent to carry out one task on its behalf. Use the tools available to you to complete the task in the user message fully: search, read and change what the task requires, and nothing more.

When you are done, answer with a concise report of what you did and what you found, with the absolute paths of the files that matter. The agent that started you passes your answer on; it does not see your tool calls, so put everything it needs in the answer.";

/// Where a definition comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentSource {
    /// Built into Toolwright.
    BuiltIn,
    /// The user's agents directory.
    User,
    /// A project's `.claude/agents`.
    Project,
}

/// One sub-agent type.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentDefinition {
    /// The type name (`subagent_type`).
    pub name: String,
    /// When to use it (shown to the model in the Agent tool's description).
    pub description: String,
    /// The tools it may use (`None`: every tool of the parent).
    pub tools: Option<Vec<String>>,
    /// Tools removed from that set.
    pub disallowed_tools: Vec<String>,
    /// The model (`sonnet`, `opus`, `haiku`, `inherit` or a model name).
    pub model: Option<String>,
    /// At most this many model requests (`maxTurns`).
    pub max_turns: Option<usize>,
    /// The permission mode its sub-agents run in (`permissionMode`), when no looser than
    /// the caller's ([`permission_for`](Self::permission_for)); `None`: the caller's.
    pub permission_mode: Option<PermissionMode>,
    /// The system prompt.
    pub prompt: String,
    /// Where it was read from.
    pub source: AgentSource,
    /// The file, for definitions read from disk (as found, links not resolved).
    pub path: Option<PathBuf>,
    /// Where that file really was when it was read (every link resolved): what the checks
    /// of a file read without a Read permission judge ([`refused_file`](Self::refused_file)),
    /// so that a link changed after the read cannot pass them for another file.
    pub file: Option<PathBuf>,
    /// What in the frontmatter could not be read as written (`line N: ...`) and what was
    /// done instead, and the fields read but not applied (`hooks`, `skills`,
    /// `mcpServers`); empty for a clean frontmatter.
    pub warnings: Vec<String>,
    /// The events of [`GUARD_HOOK_EVENTS`] the frontmatter's `hooks` names. Toolwright does
    /// not run a definition's own hooks, so an agent whose hooks would guard its calls is
    /// not started at all ([`unguarded_refusal`](Self::unguarded_refusal)) rather than run
    /// without them; empty for a definition without such hooks.
    pub guard_hooks: Vec<String>,
}

/// The hook events that guard a call (they can refuse it before it runs): a definition
/// whose `hooks` names one is refused ([`AgentDefinition::guard_hooks`]), as a guard hook of
/// a type Toolwright cannot run refuses the calls it would see (docs/hooks.md).
pub const GUARD_HOOK_EVENTS: &[&str] = &["PreToolUse", "PermissionRequest"];

impl AgentDefinition {
    /// The built-in `general-purpose` agent: every tool, the parent's model.
    pub fn general_purpose() -> Self {
        Self {
            name: GENERAL_PURPOSE.to_owned(),
            description: "General-purpose agent for researching complex questions, searching for code, and executing multi-step tasks. When you are searching for a keyword or file and are not confident that you will find the right match in the first few tries, use this agent to perform the search for you.".to_owned(),
            tools: None,
            disallowed_tools: Vec::new(),
            model: None,
            max_turns: None,
            permission_mode: None,
            prompt: GENERAL_PURPOSE_PROMPT.to_owned(),
            source: AgentSource::BuiltIn,
            path: None,
            file: None,
            warnings: Vec::new(),
            guard_hooks: Vec::new(),
        }
    }

    /// Parses a definition file's text. `fallback_name` (the file stem) names an agent whose
    /// frontmatter has no `name`. Only a bad name refuses the definition (or a
    /// `disallowedTools` list of more than [`MAX_TOOL_ENTRIES`] different entries, which
    /// cannot be cut without letting the rest in; a `tools` list that long is cut with a
    /// warning); a bad optional field (`maxTurns` that is no whole number above zero, a
    /// `model` written as a list, a `permissionMode` that is no mode) is left out with a
    /// warning ([`warnings`](Self::warnings)), its default applying. A `tools` or
    /// `disallowedTools` entry that names no tool Toolwright or Claude Code knows is warned
    /// about too: a host with tools of its own names them with
    /// [`parse_with_host_tools`](Self::parse_with_host_tools).
    pub fn parse(text: &str, fallback_name: &str, source: AgentSource) -> Result<Self, String> {
        Self::parse_with_host_tools(text, fallback_name, source, &[])
    }

    /// [`parse`](Self::parse) for a host that adds `host_tools` (their names) beside the
    /// built-in tools: a `tools` or `disallowedTools` entry naming one is no unknown name.
    pub fn parse_with_host_tools(
        text: &str,
        fallback_name: &str,
        source: AgentSource,
        host_tools: &[String],
    ) -> Result<Self, String> {
        let (front, body) = frontmatter::split(text).map_err(|e| e.to_string())?;
        let name = front
            .text("name")
            .map_or_else(|| fallback_name.to_owned(), |n| n.trim().to_owned());
        if name.is_empty() || name.chars().any(char::is_whitespace) {
            return Err(format!(
                "the agent name `{name}` is empty or contains spaces"
            ));
        }
        // The name goes into the Agent tool's description and into messages as written: an
        // escape sequence there would reach the model and a terminal.
        if name.chars().any(char::is_control) {
            return Err(format!(
                "the agent name `{}` contains control characters",
                tools_builtin::skill::listing_text(&name)
            ));
        }
        let mut warnings = front.warnings().to_vec();
        let max_turns = match front.value("maxTurns") {
            Some(frontmatter::Value::Text(v)) if v.trim().is_empty() => None,
            Some(frontmatter::Value::Text(v)) if is_flow_list(v) => {
                warnings.push(
                    "maxTurns is written as a list, not a number; ignored (the default applies)"
                        .to_owned(),
                );
                None
            }
            Some(frontmatter::Value::Text(v)) => match v.trim().parse::<usize>() {
                Ok(n) if n > 0 => Some(n),
                _ => {
                    warnings.push(format!(
                        "maxTurns `{}` is not a whole number above zero; ignored (the default applies)",
                        v.trim()
                    ));
                    None
                }
            },
            Some(frontmatter::Value::List(_)) => {
                warnings.push(
                    "maxTurns is written as a list, not a number; ignored (the default applies)"
                        .to_owned(),
                );
                None
            }
            None => None,
        };
        // A block list (`- haiku` lines) or a flow one (`[haiku]`): no model name.
        let model_is_list = match front.value("model") {
            Some(frontmatter::Value::List(_)) => true,
            Some(frontmatter::Value::Text(v)) => is_flow_list(v),
            None => false,
        };
        if model_is_list {
            warnings.push(
                "model is written as a list, not a name; ignored (the caller's model applies)"
                    .to_owned(),
            );
        }
        // Absent, or `*` alone: every tool. Present but empty (`tools:`, `tools: ""`,
        // `tools: []`): none, as Claude Code reads it (an empty list never opens up).
        let tools = match front.list("tools") {
            Some(items) if items.len() == 1 && items[0] == "*" => None,
            Some(items) => Some(items),
            None if front.value("tools").is_some() => Some(Vec::new()),
            None => None,
        };
        // Each entry once, and at most `MAX_TOOL_ENTRIES` of them: what is done per entry
        // below, and when the tools are chosen, stays linear and bounded.
        let tools = tools.map(|items| {
            let mut items = distinct(items);
            if items.len() > MAX_TOOL_ENTRIES {
                warnings.push(format!(
                    "tools names {} different entries: only the first {MAX_TOOL_ENTRIES} are read (the rest give nothing)",
                    items.len()
                ));
                items.truncate(MAX_TOOL_ENTRIES);
            }
            items
        });
        let disallowed_tools = distinct(front.list("disallowedTools").unwrap_or_default());
        if disallowed_tools.len() > MAX_TOOL_ENTRIES {
            return Err(format!(
                "disallowedTools names {} different entries, more than the {MAX_TOOL_ENTRIES} read (cutting the list would let the rest in)",
                disallowed_tools.len()
            ));
        }
        // A tool's name in another case (`bash`) names no tool: said, with the one meant. A
        // name no tool has (`Bsah`) is said too: as written it gives (or keeps out) nothing.
        for (field, list, after, unknown) in [
            (
                "tools",
                tools.as_deref().unwrap_or_default(),
                "",
                "it gives nothing",
            ),
            (
                "disallowedTools",
                &disallowed_tools[..],
                " It is kept out all the same",
                "it keeps nothing out",
            ),
        ] {
            for entry in list {
                let written = tool_name_of(entry);
                let known = known_spelling(written);
                if known != written {
                    warnings.push(format!(
                        "{field} names `{written}`, which is no tool (names are case-sensitive): `{known}` is meant?{after}"
                    ));
                } else if names_no_tool(written, host_tools) {
                    // One a typo away from a known tool: said, and in `disallowedTools`
                    // that tool is kept out all the same (a misspelt restriction still
                    // restricts; see `select_tools`).
                    let warning = match tool_perms::settings::tool_name_meant(written) {
                        Some(meant) if field == "tools" => format!(
                            "{field} names `{written}`, which is no tool (did you mean `{meant}`?): {unknown}"
                        ),
                        Some(meant) => format!(
                            "{field} names `{written}`, which is no tool (did you mean `{meant}`?): `{meant}` is kept out all the same"
                        ),
                        None => format!(
                            "{field} names `{written}`, which is no tool: {unknown} (MCP tools are named `mcp__<server>__<tool>`)"
                        ),
                    };
                    warnings.push(warning);
                }
                // `Bash(git status)`: as in Claude Code, only the Agent tool reads what is in
                // parentheses (the agent types it may start); anywhere else the whole tool
                // is meant, which is said.
                if entry.contains('(') && !matches!(written, "Agent" | "Task") {
                    // The rule that would do what the entry seems to mean: a path rule on a
                    // tool whose path rules are never consulted is written for Edit (the
                    // writing tools) or Read (the searching ones); any other rule, a
                    // `Tool(param:value)` one too, holds as written, but for one on the field
                    // the tool's rules stand for (`Write(file_path:...)`), which Claude Code
                    // ignores: no rule is suggested then.
                    let content = tool_perms::rule::parse_rule_lenient(entry).content;
                    let rule = match content.as_deref() {
                        Some(c) => match tool_perms::rule::path_rule_meant(written, c) {
                            Some(meant) => Some(meant),
                            None if tool_perms::rule::field_rule(written, c)
                                .is_some_and(|f| f.primary) =>
                            {
                                None
                            }
                            None => Some(entry.to_owned()),
                        },
                        None => Some(entry.to_owned()),
                    };
                    warnings.push(match (field == "tools", rule) {
                        (true, Some(rule)) => format!(
                            "tools names `{entry}`: the part in parentheses restricts nothing here, the agent gets the whole `{written}` tool (permission rules such as `{rule}` restrict what it may run)"
                        ),
                        (true, None) => format!(
                            "tools names `{entry}`: the part in parentheses restricts nothing here, the agent gets the whole `{written}` tool"
                        ),
                        (false, Some(rule)) => format!(
                            "disallowedTools names `{entry}`: the part in parentheses is not read here, the whole `{written}` tool is kept out (a deny rule such as `{rule}` keeps out only such calls)"
                        ),
                        (false, None) => format!(
                            "disallowedTools names `{entry}`: the part in parentheses is not read here, the whole `{written}` tool is kept out"
                        ),
                    });
                }
            }
        }
        let permission_mode = match front.value("permissionMode") {
            Some(frontmatter::Value::Text(v)) if v.trim().is_empty() => None,
            Some(frontmatter::Value::Text(v)) if !is_flow_list(v) => {
                match tool_perms::settings::parse_mode(v.trim()) {
                    Ok(mode) => Some(mode),
                    Err(_) => {
                        warnings.push(format!(
                            "permissionMode `{}` is no permission mode (default, acceptEdits, plan, dontAsk, bypassPermissions or auto); ignored (the caller's mode applies)",
                            v.trim()
                        ));
                        None
                    }
                }
            }
            Some(_) => {
                warnings.push(
                    "permissionMode is written as a list, not a mode; ignored (the caller's mode applies)"
                        .to_owned(),
                );
                None
            }
            None => None,
        };
        // Claude Code runs a definition's `hooks` while its agent runs, preloads its
        // `skills` and connects its `mcpServers`; Toolwright does none of these, and says
        // so. Hooks that would guard the agent's calls also keep it from starting: run
        // without its guard, the agent could do what the guard blocks.
        let mut guard_hooks = Vec::new();
        if let Some(hooks) = written(front.value("hooks")) {
            let lower = hooks.to_ascii_lowercase();
            guard_hooks = GUARD_HOOK_EVENTS
                .iter()
                .filter(|event| lower.contains(&event.to_ascii_lowercase()))
                .map(|event| (*event).to_owned())
                .collect();
            warnings.push(if guard_hooks.is_empty() {
                "hooks are not applied: Toolwright does not run an agent definition's own hooks, and the agent runs without them (hooks in a settings file run for every agent)".to_owned()
            } else {
                format!(
                    "hooks are not applied: Toolwright does not run an agent definition's own hooks, and its {} hooks would guard the agent's calls, so calls of this agent type are refused rather than run unguarded (move the hooks to a settings file, where they guard every agent, or remove them from the definition)",
                    guard_hooks.join(" and ")
                )
            });
        }
        if written(front.value("skills")).is_some() {
            warnings.push(
                "skills is not applied: the skills it names are not preloaded into the agent's context".to_owned(),
            );
        }
        if written(front.value("mcpServers")).is_some() {
            warnings.push(
                "mcpServers is not applied: no server is connected for the agent, which gets only the caller's MCP tools (its `tools` may name them)".to_owned(),
            );
        }
        // Written by Claude Code's `/agents` on one line, with `\n` for its line breaks,
        // which Claude Code's loader turns into real ones.
        let description = front
            .text("description")
            .unwrap_or_default()
            .trim()
            .replace("\\n", "\n");
        let description_chars = description.chars().count();
        if description_chars > MAX_LISTED_DESCRIPTION_CHARS {
            warnings.push(format!(
                "description is {description_chars} characters long: the Agent tool's description (sent with every request) shows its first {MAX_LISTED_DESCRIPTION_CHARS}"
            ));
        }
        Ok(Self {
            name,
            description,
            tools,
            disallowed_tools,
            model: front
                .text("model")
                .map(|m| m.trim().to_owned())
                .filter(|m| !m.is_empty() && !model_is_list),
            max_turns,
            permission_mode,
            prompt: body.trim().to_owned(),
            source,
            path: None,
            file: None,
            warnings,
            guard_hooks,
        })
    }

    /// Why an agent of this type is not started, when its `hooks` would guard its calls
    /// ([`guard_hooks`](Self::guard_hooks)): Toolwright does not apply them, and an agent
    /// run without its guard could do what the guard blocks. In the words the model sees.
    pub fn unguarded_refusal(&self) -> Option<String> {
        if self.guard_hooks.is_empty() {
            return None;
        }
        let file = self
            .path
            .as_deref()
            .map(|p| format!(" ({})", p.display()))
            .unwrap_or_default();
        Some(format!(
            "Agent type '{}' cannot be started: its definition{file} has {} hooks, which Toolwright does not apply to an agent's calls, so the agent is not run without them. Do the task another way (another agent type, or your own tools); the user can move those hooks into a settings file, where they guard every agent.",
            self.name,
            self.guard_hooks.join(" and ")
        ))
    }

    /// The permission context of a sub-agent of this type started by a caller in `caller`:
    /// the caller's, in the definition's `permissionMode` when that is no looser than the
    /// caller's mode, so that a definition (a project's, say) can only restrict. `plan`
    /// refuses changes even where the caller could bypass (plan mode with bypass available
    /// would allow everything); under a caller that never asks (`dontAsk`, or no one to ask)
    /// the sub-agent never asks either. `Err` says why the definition's mode was not applied
    /// (it would loosen the caller's): the caller's context then applies as it is.
    pub fn permission_for(
        &self,
        caller: &ToolPermissionContext,
    ) -> Result<ToolPermissionContext, String> {
        let Some(wanted) = self.permission_mode else {
            return Ok(caller.clone());
        };
        let has = latitude(caller.mode, caller.bypass_available);
        if latitude(wanted, false) > has {
            return Err(format!(
                "permissionMode `{}` was not applied: it would loosen the caller's mode (`{}`); a sub-agent's mode may only be stricter than its caller's",
                wanted.as_str(),
                caller.mode.as_str()
            ));
        }
        // The caller's `avoid_prompts` (nobody to ask) goes with the clone.
        let mut permission = caller.clone();
        let dont_ask = caller.mode == PermissionMode::DontAsk;
        match wanted {
            // As strict as a caller in dontAsk already is: nothing changes.
            PermissionMode::Default | PermissionMode::Auto if dont_ask => {}
            PermissionMode::Plan => {
                permission.set_mode(PermissionMode::Plan);
                permission.bypass_available = false;
                // Plan mode asks about some reads; a caller in dontAsk would not.
                permission.avoid_prompts |= dont_ask;
            }
            other => permission.set_mode(other),
        }
        Ok(permission)
    }

    /// The description as the Agent tool's description lists it: its first
    /// [`MAX_LISTED_DESCRIPTION_CHARS`] characters, followed by `…` when it is longer (it is
    /// sent with every request), on one line with control characters shown as escapes (as
    /// skills' descriptions are listed): a definition (a cloned repository's) must not add
    /// lines of its own to what the model reads, nor escape sequences to a terminal that
    /// prints it.
    pub fn listed_description(&self) -> Cow<'_, str> {
        match self
            .description
            .char_indices()
            .nth(MAX_LISTED_DESCRIPTION_CHARS)
        {
            Some((cut, _)) => Cow::Owned(format!(
                "{}…",
                tools_builtin::skill::listing_text(&self.description[..cut])
            )),
            None => {
                let line = tools_builtin::skill::listing_text(&self.description);
                if line == self.description {
                    Cow::Borrowed(&self.description)
                } else {
                    Cow::Owned(line)
                }
            }
        }
    }

    /// Whether the definition lets the agent start agents itself (its `tools` names `Agent`
    /// or `Task`, possibly as `Agent(type, ...)`).
    pub fn allows_agent_tool(&self) -> bool {
        self.tools.as_ref().is_some_and(|tools| {
            tools
                .iter()
                .any(|t| matches!(tool_name_of(t), "Agent" | "Task"))
        })
    }

    /// The agent types an agent of this type may start: those its `tools` names as
    /// `Agent(a, b)` (or `Task(...)`); `None` (any) when it names the Agent tool bare.
    pub fn allowed_agent_types(&self) -> Option<Vec<String>> {
        let mut types = Vec::new();
        for entry in self.tools.iter().flatten() {
            if !matches!(tool_name_of(entry), "Agent" | "Task") {
                continue;
            }
            let inner = entry
                .split_once('(')
                .and_then(|(_, rest)| rest.trim_end().strip_suffix(')'));
            match inner {
                None => return None,
                Some(list) => types.extend(
                    list.split(',')
                        .map(str::trim)
                        .filter(|t| !t.is_empty())
                        .map(str::to_owned),
                ),
            }
        }
        Some(types)
    }

    /// The tools an agent of this type gets out of `parent` (the calling context's tools):
    /// the definition's `tools` (all when absent) minus `disallowedTools`, minus the tools no
    /// sub-agent gets, minus `Agent` unless `tools` names it. MCP names match as permission
    /// rules' do: `mcp__srv` and `mcp__srv__*` name every tool of server `srv`.
    pub fn select_tools(&self, parent: &[Arc<dyn Tool>]) -> Vec<Arc<dyn Tool>> {
        self.select_tools_noting(parent).0
    }

    /// [`select_tools`](Self::select_tools), with what to tell about the choice: a `tools`
    /// or `disallowedTools` entry that loading could not judge (an MCP tool's name, a glob,
    /// a name with `_`, such as a host's tool) and that names none of `parent`'s tools, so
    /// that it gives (or keeps out) nothing.
    pub fn select_tools_noting(
        &self,
        parent: &[Arc<dyn Tool>],
    ) -> (Vec<Arc<dyn Tool>>, Vec<String>) {
        let allows_agent = self.allows_agent_tool();
        // What `disallowedTools` names keeps a tool out in any case (`bash`), and also
        // misspelt (`Bsah`), unless one of the caller's tools has that very name: a misspelt
        // restriction still restricts.
        let meant = |written: &'_ str| -> String {
            let written = known_spelling(written);
            if written.starts_with("mcp__") || parent.iter().any(|t| t.name() == written) {
                return written.to_owned();
            }
            tool_perms::settings::tool_name_meant(written)
                .unwrap_or(written)
                .to_owned()
        };
        let given: Option<Vec<(&str, EntryMatcher)>> = self.tools.as_ref().map(|list| {
            list.iter()
                .map(|entry| (entry.as_str(), EntryMatcher::new(tool_name_of(entry))))
                .collect()
        });
        let withheld: Vec<(&str, EntryMatcher)> = self
            .disallowed_tools
            .iter()
            .map(|entry| {
                (
                    entry.as_str(),
                    EntryMatcher::new(&meant(tool_name_of(entry))),
                )
            })
            .collect();
        let any_of = |entries: &[(&str, EntryMatcher)], tool: &dyn Tool| {
            entries.iter().any(|(_, m)| m.matches(tool))
        };
        let selected = parent
            .iter()
            .filter(|t| {
                let name = t.name();
                if name == "Agent" {
                    return allows_agent && !any_of(&withheld, t.as_ref());
                }
                if AGENT_DISALLOWED_TOOLS.contains(&name) {
                    return false;
                }
                let allowed = given.as_deref().is_none_or(|list| any_of(list, t.as_ref()));
                allowed && !any_of(&withheld, t.as_ref())
            })
            .cloned()
            .collect();
        let mut notices = Vec::new();
        for (field, entries, unknown) in [
            (
                "tools",
                given.as_deref().unwrap_or_default(),
                "it gives nothing",
            ),
            ("disallowedTools", &withheld[..], "it keeps nothing out"),
        ] {
            for (entry, matcher) in entries {
                let written = tool_name_of(entry);
                if not_judged_on_loading(written)
                    && !parent.iter().any(|t| matcher.matches(t.as_ref()))
                {
                    notices.push(format!(
                        "{field} names `{written}`, which is none of the caller's tools: {unknown}"
                    ));
                }
            }
        }
        (selected, notices)
    }

    /// `tools` (some of them chosen for an agent of this type) in the order this
    /// definition's `tools` names them: what each entry gives, first entry first, then what
    /// no entry names (all of them when `tools` is absent). Each entry is matched once
    /// against the tools, so that a long list takes time in proportion to its length.
    pub fn in_written_order(&self, tools: Vec<Arc<dyn Tool>>) -> Vec<Arc<dyn Tool>> {
        let Some(entries) = &self.tools else {
            return tools;
        };
        let mut left: Vec<Option<Arc<dyn Tool>>> = tools.into_iter().map(Some).collect();
        let mut ordered = Vec::with_capacity(left.len());
        for entry in entries {
            if left.iter().all(Option::is_none) {
                break;
            }
            let matcher = EntryMatcher::new(tool_name_of(entry));
            for slot in &mut left {
                if slot.as_ref().is_some_and(|t| matcher.matches(t.as_ref())) {
                    ordered.extend(slot.take());
                }
            }
        }
        ordered.extend(left.into_iter().flatten());
        ordered
    }

    /// The Read deny rule of `ctx` that covers this definition's file (on its path or the
    /// real path it was read from), if one does: its body would go to the model as a system
    /// prompt without a Read permission, so such a definition is neither listed nor started,
    /// as the Skill tool refuses such a skill ([`tools_builtin::skill::denied_file`]).
    /// `None` for the built-in definition.
    pub fn refused_file(&self, ctx: &tool_core::ToolUseContext) -> Option<SourcedRule> {
        let path = self.path.as_deref()?;
        tools_builtin::skill::denied_file(ctx, path, self.file.as_deref().unwrap_or(path))
    }
}

/// One `tools` or `disallowedTools` entry, as it matches the caller's tools.
enum EntryMatcher {
    /// A tool's name or alias, legacy names as permission rules normalise them.
    Name(String),
    /// MCP tools (`mcp__srv`, `mcp__srv__*`, `mcp__srv__tool`, a glob such as `mcp__*`): what
    /// a tool-wide deny rule of that text takes away, decided by the permission engine, so
    /// that server names are normalised and matched as in the settings' rules.
    Mcp(Box<PermissionEngine>),
}

impl EntryMatcher {
    /// The matcher of `name` (an entry without its parentheses).
    fn new(name: &str) -> Self {
        if !name.starts_with("mcp__") {
            return Self::Name(normalize(name).to_owned());
        }
        let rule = ToolPermissionContext {
            deny: vec![SourcedRule {
                source: RuleSource::Session,
                rule: name.to_owned(),
            }],
            ..ToolPermissionContext::default()
        };
        // A name no rule can be made of (reported by nobody here) matches nothing, and the
        // notice for an entry that names none of the caller's tools says so.
        let (engine, _malformed) = PermissionEngine::new_lenient(&rule, PathRoots::for_cwd("/"));
        Self::Mcp(Box::new(engine))
    }

    fn matches(&self, tool: &dyn Tool) -> bool {
        match self {
            Self::Name(wanted) => {
                wanted == tool.name() || tool.aliases().iter().any(|a| normalize(a) == wanted)
            }
            Self::Mcp(engine) => engine.is_blanket_denied(tool),
        }
    }
}

/// Whether loading leaves a `tools` or `disallowedTools` entry's tool name unjudged (see
/// [`names_no_tool`]): a name with `_` or `*` (MCP tools, globs, host tools).
fn not_judged_on_loading(name: &str) -> bool {
    name.contains(['_', '*'])
}

/// Whether a one-line value is a YAML flow list (`[haiku]`, `[]`), which the frontmatter
/// reader keeps as written: for a field of one value (`model`, `maxTurns`), a list, not a
/// value.
fn is_flow_list(value: &str) -> bool {
    let v = value.trim();
    v.starts_with('[') && v.ends_with(']')
}

/// A frontmatter field's value as written (a block list's items joined by spaces; the
/// nested lines of a mapping come joined into its text), `None` when it is absent or
/// empty (`{}`, `[]`, `null` and `~` included).
fn written(value: Option<&frontmatter::Value>) -> Option<String> {
    let text = match value? {
        frontmatter::Value::Text(text) => text.trim().to_owned(),
        frontmatter::Value::List(items) => items.join(" ").trim().to_owned(),
    };
    (!matches!(text.as_str(), "" | "{}" | "[]" | "null" | "~")).then_some(text)
}

/// `items` without repeats, the first of each kept in place (linear: a set of those seen).
fn distinct(items: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::with_capacity(items.len());
    items
        .into_iter()
        .filter(|item| seen.insert(item.clone()))
        .collect()
}

/// `Agent(worker)` -> `Agent`.
fn tool_name_of(entry: &str) -> &str {
    entry.split('(').next().unwrap_or(entry).trim()
}

/// How much a mode lets run without the user, for comparing a definition's mode with its
/// caller's: plan mode that refuses changes 0, `default`, `auto` (no classifier here) and
/// `dontAsk` 1, `acceptEdits` 2, `bypassPermissions` (and plan mode with bypass available,
/// which allows as bypass does) 3.
fn latitude(mode: PermissionMode, bypass_available: bool) -> u8 {
    match mode {
        PermissionMode::Plan if bypass_available => 3,
        PermissionMode::Plan => 0,
        PermissionMode::Default | PermissionMode::Auto | PermissionMode::DontAsk => 1,
        PermissionMode::AcceptEdits => 2,
        PermissionMode::BypassPermissions => 3,
    }
}

/// Whether `name` (a `tools` or `disallowedTools` entry's tool, in its known case) is no
/// tool's: neither a known tool ([`tool_perms::settings::KNOWN_TOOL_NAMES`]) nor one of
/// `host_tools`. A name with `_` or `*` (MCP tools, globs) is never taken for unknown, as
/// settings' rules do.
fn names_no_tool(name: &str, host_tools: &[String]) -> bool {
    !name.is_empty()
        && !not_judged_on_loading(name)
        && !tool_perms::settings::KNOWN_TOOL_NAMES.contains(&name)
        && !host_tools.iter().any(|host| host == name)
}

/// The known tool name `name` is in another case (`bash` -> `Bash`), else `name` itself.
fn known_spelling(name: &str) -> &str {
    if tool_perms::settings::KNOWN_TOOL_NAMES.contains(&name) {
        return name;
    }
    tool_perms::settings::KNOWN_TOOL_NAMES
        .iter()
        .find(|known| known.eq_ignore_ascii_case(name))
        .copied()
        .unwrap_or(name)
}

/// Legacy names as permission rules normalise them.
fn normalize(name: &str) -> &str {
    match name {
        "Task" => "Agent",
        "KillShell" => "TaskStop",
        "AgentOutputTool" | "BashOutputTool" | "BashOutput" => "TaskOutput",
        other => other,
    }
}

/// The user's agents directory: `$CLAUDE_CONFIG_DIR/agents`, else `~/.claude/agents`.
pub fn user_agents_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("agents"));
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".claude").join("agents"))
}

/// The project agents directories of `cwd`, farthest first: `.claude/agents` in `cwd` and
/// each parent up to the git repository's root (outside a repository, `cwd` only), never
/// the home directory or above it (see
/// [`tool_core::project_dirs`]).
fn project_agents_dirs(cwd: &Path) -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut dirs: Vec<PathBuf> = tool_core::project_dirs(cwd, cwd, home.as_deref())
        .into_iter()
        .map(|dir| dir.join(".claude").join("agents"))
        .collect();
    dirs.reverse();
    dirs
}

/// Reads the definitions of the agents directory `dir` and its subfolders into `into`, as
/// Claude Code reads them (the name is the frontmatter's, not the path's). The folders are
/// walked as a commands directory's are ([`tools_builtin::skill::markdown_files`]: bounded
/// in depth, files and entries, hidden folders skipped, links to directories not followed),
/// hidden files included as Claude Code reads them, in the order of the files' paths; what
/// was left unread is said in `problems`. A file in a subfolder without frontmatter or
/// without a `name` in it is no definition and is skipped without a word, as Claude Code
/// skips it (a README.md or docs/guide.md of a cloned agent collection); a file at the top
/// level is read as before (its stem names it, and a problem is said).
fn read_dir_definitions(
    dir: &Path,
    source: AgentSource,
    host_tools: &[String],
    into: &mut BTreeMap<String, AgentDefinition>,
    problems: &mut Vec<String>,
) {
    let walk = tools_builtin::skill::markdown_files(dir, true);
    for unread in walk.unread() {
        problems.push(format!(
            "{} was not read whole: {unread}; agent definitions there are not read",
            dir.display(),
        ));
    }
    for link in &walk.linked_dirs {
        problems.push(format!(
            "{} was not read for agent definitions: it is a link to a folder, and links to folders are not followed (move or copy the definitions into a real folder)",
            link.display()
        ));
    }
    // The file of each name defined in this directory's tree so far: of two files defining
    // one name, the one whose path sorts last is used, and that is said.
    let mut defined_here: BTreeMap<String, PathBuf> = BTreeMap::new();
    for (_, file) in walk.found {
        let stem = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        // Read as a skill's file is: its real path, a regular file only, at most
        // `MAX_SKILL_BYTES`.
        let Some((text, read_warnings, cut, real)) = tools_builtin::skill::read_skill_file(&file)
        else {
            problems.push(format!(
                "agent definition {} ignored: it could not be read as a regular file",
                file.display()
            ));
            continue;
        };
        // A project's definition goes to the model without a Read permission: it may not
        // lead out of the project (a cloned repository could link `~/.aws/credentials`), as
        // a project skill may not.
        if source == AgentSource::Project
            && let Some(project) = dir.parent().and_then(Path::parent)
            && let Some(outside) = tools_builtin::skill::file_link_outside(project, &file, &real)
        {
            problems.push(link_outside_problem(&file, &outside));
            continue;
        }
        // Below the top level a file must say it is a definition (Claude Code's loader
        // skips a file without a `name` quietly): a cloned collection's README.md would
        // otherwise give a notice on every start, or become an agent named after its file.
        if file.parent() != Some(dir) && !names_an_agent(&text) {
            tracing::debug!(file = %file.display(), "not an agent definition: no `name` in frontmatter");
            continue;
        }
        let parsed = AgentDefinition::parse_with_host_tools(&text, &stem, source, host_tools)
            .map_err(|e| {
                if cut {
                    format!("{e} ({})", read_warnings.join("; "))
                } else {
                    e
                }
            });
        match parsed {
            Ok(mut definition) => {
                definition.warnings.splice(0..0, read_warnings);
                problems.extend(
                    definition
                        .warnings
                        .iter()
                        .map(|warning| format!("agent definition {}: {warning}", file.display())),
                );
                if let Some(earlier) = defined_here.insert(definition.name.clone(), file.clone()) {
                    problems.push(format!(
                        "agent definitions {} and {} both define the agent `{}`: {} is used, {} is not (of the files in one agents directory and its subfolders that define one name, the one whose path sorts last is)",
                        earlier.display(),
                        file.display(),
                        definition.name,
                        file.display(),
                        earlier.display()
                    ));
                }
                definition.path = Some(file);
                definition.file = Some(real);
                into.insert(definition.name.clone(), definition);
            }
            Err(e) => problems.push(format!("agent definition {} ignored: {e}", file.display())),
        }
    }
}

/// Whether `text` starts with frontmatter that has a `name`: what makes a file in a
/// subfolder of an agents directory a definition.
fn names_an_agent(text: &str) -> bool {
    frontmatter::split(text).is_ok_and(|(front, _)| front.text("name").is_some())
}

/// Why a project's definition at `file` is refused: it leads out of its project.
fn link_outside_problem(file: &Path, outside: &tools_builtin::skill::LinkOutside) -> String {
    let user_dir = user_agents_dir().map_or_else(
        || "~/.claude/agents".to_owned(),
        |d| d.display().to_string(),
    );
    // The file itself is the link: a copy goes where it is. A directory on the way is: a
    // copy in its place (a copy "into" it would go through it, out of the project).
    let instead = if outside.link == file {
        format!(
            "Copy the file into {} instead of linking to it",
            file.parent().unwrap_or(file).display()
        )
    } else {
        format!(
            "Replace the link {} with a directory of copies of what it leads to",
            outside.link.display()
        )
    };
    format!(
        "agent definition {} ignored: it is a project agent definition, and its file {} leads out of the project {}: the symbolic link {} takes it to {}. A project's agent definition is read without a Read permission, so it may only use files inside the project. {instead}, or move the definition to your own agents directory ({user_dir}).",
        file.display(),
        file.display(),
        outside.project.display(),
        outside.link.display(),
        outside.target.display(),
    )
}

/// Every agent definition `cwd` sees: the built-in one, the user's, the project's when the
/// folder is trusted (later ones override earlier ones of the same name), sorted by name;
/// and the problems to tell the user: the files that could not be read or were refused (a
/// project's definition whose file leads out of the project through a symbolic link, as a
/// project skill's may not), what of a definition could not be read as written (or a note
/// that the project's were not read), and a `CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS` value
/// that is not used ([`max_concurrent_from_env`](super::subagent::max_concurrent_from_env)).
pub fn load_agent_definitions(
    cwd: &Path,
    project_trusted: bool,
) -> (Vec<AgentDefinition>, Vec<String>) {
    load_agent_definitions_with_host_tools(cwd, project_trusted, &[])
}

/// [`load_agent_definitions`] for a host that adds `host_tools` (their names) beside the
/// built-in tools: a definition's `tools` or `disallowedTools` naming one is not reported
/// as naming no tool.
pub fn load_agent_definitions_with_host_tools(
    cwd: &Path,
    project_trusted: bool,
    host_tools: &[String],
) -> (Vec<AgentDefinition>, Vec<String>) {
    let mut map = BTreeMap::new();
    let mut problems = Vec::new();
    problems.extend(super::subagent::max_concurrent_from_env().1);
    let builtin = AgentDefinition::general_purpose();
    map.insert(builtin.name.clone(), builtin);
    if let Some(dir) = user_agents_dir() {
        read_dir_definitions(&dir, AgentSource::User, host_tools, &mut map, &mut problems);
    }
    let project_dirs = project_agents_dirs(cwd);
    if project_trusted {
        for dir in project_dirs {
            read_dir_definitions(
                &dir,
                AgentSource::Project,
                host_tools,
                &mut map,
                &mut problems,
            );
        }
    } else if let Some(dir) = project_dirs.iter().find(|d| d.is_dir()) {
        problems.push(format!(
            "{} was not read: the folder is not trusted (its agents could replace the built-in ones)",
            dir.display()
        ));
    }
    (map.into_values().collect(), problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_agents_come_from_the_repository_not_above_it() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let repo = tmp.path().join("outer/repo");
        let cwd = repo.join("src");
        std::fs::create_dir_all(&cwd).unwrap_or_else(|e| panic!("{e}"));
        // Outside a repository only the directory itself is the project's: a parent such
        // as a shared `/tmp` has no say in it.
        assert_eq!(project_agents_dirs(&cwd), [cwd.join(".claude/agents")]);
        std::fs::create_dir(repo.join(".git")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            project_agents_dirs(&cwd),
            [repo.join(".claude/agents"), cwd.join(".claude/agents")]
        );
    }

    #[test]
    fn frontmatter_lists_and_comma_lists_parse() {
        let text = "---\nname: reviewer\ndescription: \"Reviews code\"\ntools: Read, Grep, Agent(a, b)\ndisallowedTools:\n  - Bash\n  - 'Write'\nmodel: haiku # cheap\nmaxTurns: 3\n---\n\nYou review.\n";
        let d = AgentDefinition::parse(text, "file", AgentSource::Project).unwrap();
        assert_eq!(d.name, "reviewer");
        assert_eq!(d.description, "Reviews code");
        assert_eq!(d.tools.as_deref().unwrap(), ["Read", "Grep", "Agent(a, b)"]);
        assert_eq!(d.disallowed_tools, ["Bash", "Write"]);
        assert_eq!(d.model.as_deref(), Some("haiku"));
        assert_eq!(d.max_turns, Some(3));
        assert_eq!(d.prompt, "You review.");
        assert!(d.allows_agent_tool());

        let yaml = "---\ndescription: x\ntools: [\"Read\", Glob]\n---\nbody";
        let d = AgentDefinition::parse(yaml, "stem", AgentSource::User).unwrap();
        assert_eq!(d.name, "stem");
        assert_eq!(d.tools.as_deref().unwrap(), ["Read", "Glob"]);
        let star =
            AgentDefinition::parse("---\ntools: \"*\"\n---\n", "s", AgentSource::User).unwrap();
        assert_eq!(star.tools, None);
        // Written but empty: no tools at all, never every tool.
        for empty in ["tools:", "tools: \"\"", "tools: []", "tools:\n  -"] {
            let d = AgentDefinition::parse(&format!("---\n{empty}\n---\n"), "e", AgentSource::User)
                .unwrap();
            assert_eq!(d.tools.as_deref(), Some(&[][..]), "{empty}");
            let parent: Vec<Arc<dyn Tool>> = vec![
                Arc::new(tools_builtin::Read),
                Arc::new(tools_builtin::Bash::default()),
            ];
            assert!(d.select_tools(&parent).is_empty(), "{empty}");
        }
    }

    /// Descriptions written as YAML block scalars or continued on indented lines read as
    /// YAML reads them (the same frontmatter reader as skills).
    #[test]
    fn multi_line_descriptions_read_as_yaml() {
        let text = "---\nname: a\ndescription: |\n  Use for reviews.\n  Example: a diff\ntools:\n  - Read\n---\nbody";
        let d = AgentDefinition::parse(text, "f", AgentSource::User).unwrap();
        assert_eq!(d.description, "Use for reviews.\nExample: a diff");
        assert_eq!(d.tools.as_deref().unwrap(), ["Read"]);
        let folded = "---\ndescription: Reviews code\n  for bugs # and style\n---\n";
        let d = AgentDefinition::parse(folded, "f", AgentSource::User).unwrap();
        assert_eq!(d.description, "Reviews code for bugs");
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        let odd = "---\nname: a\nmodel: \"haiku\ntools: Read\n---\n";
        let d = AgentDefinition::parse(odd, "f", AgentSource::User).unwrap();
        assert_eq!(d.tools.as_deref().unwrap(), ["Read"]);
        assert!(
            d.warnings.len() == 1 && d.warnings[0].starts_with("line 3: the value of `model`"),
            "{:?}",
            d.warnings
        );
        // As `/agents` writes one: a single line, `\n` for line breaks, `: ` and `#` inside.
        let one_line = "---\nname: r\ndescription: Use when asked.\\n\\n<example>\\nuser: \"Fix issue #42\"\\n</example>\n---\n";
        let d = AgentDefinition::parse(one_line, "f", AgentSource::User).unwrap();
        assert_eq!(
            d.description,
            "Use when asked.\n\n<example>\nuser: \"Fix issue #42\"\n</example>"
        );
        let e = AgentDefinition::parse("---\nname: a\n", "f", AgentSource::User).unwrap_err();
        assert!(e.contains("not closed"), "{e}");
    }

    /// `hooks`, `skills` and `mcpServers` are said not to be applied; hooks naming a guard
    /// event (in any case, nested as YAML nests them or on one line) make the type refused,
    /// other hooks do not; an empty field (`{}`, `[]`) says nothing.
    #[test]
    fn unapplied_fields_are_said_and_guard_hooks_refuse_the_type() {
        let nested = "---\nname: g\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: exit 2\nskills:\n  - review\nmcpServers: [memory]\n---\nbody";
        let d = AgentDefinition::parse(nested, "f", AgentSource::User).unwrap();
        assert_eq!(d.guard_hooks, ["PreToolUse"]);
        assert_eq!(d.prompt, "body");
        assert!(
            d.warnings.len() == 3
                && d.warnings[0].starts_with("hooks are not applied")
                && d.warnings[0].contains("its PreToolUse hooks would guard")
                && d.warnings[1].starts_with("skills is not applied")
                && d.warnings[2].starts_with("mcpServers is not applied"),
            "{:?}",
            d.warnings
        );
        let why = d.unguarded_refusal().unwrap();
        assert!(
            why.starts_with(
                "Agent type 'g' cannot be started: its definition has PreToolUse hooks"
            ),
            "{why}"
        );
        let flow = "---\nhooks: {\"permissionrequest\": [], \"PostToolUse\": []}\n---\n";
        let d = AgentDefinition::parse(flow, "f", AgentSource::User).unwrap();
        assert_eq!(d.guard_hooks, ["PermissionRequest"]);
        let post = "---\nhooks:\n  PostToolUse:\n    - hooks:\n        - type: command\n          command: 'true'\n---\n";
        let d = AgentDefinition::parse(post, "f", AgentSource::User).unwrap();
        assert!(d.guard_hooks.is_empty() && d.unguarded_refusal().is_none());
        assert!(
            d.warnings.len() == 1 && d.warnings[0].contains("the agent runs without them"),
            "{:?}",
            d.warnings
        );
        let empty = "---\nhooks: {}\nskills: []\nmcpServers:\n---\n";
        let d = AgentDefinition::parse(empty, "f", AgentSource::User).unwrap();
        assert!(
            d.guard_hooks.is_empty() && d.warnings.is_empty(),
            "{:?}",
            d.warnings
        );
    }

    #[test]
    fn bad_definitions_say_why() {
        let e = AgentDefinition::parse("no frontmatter", "x", AgentSource::User).unwrap_err();
        assert!(e.contains("frontmatter"), "{e}");
        let e =
            AgentDefinition::parse("---\nname: a b\n---\n", "x", AgentSource::User).unwrap_err();
        assert!(e.contains("spaces"), "{e}");
    }

    /// A bad optional field is ignored with a warning and the definition kept: `maxTurns`
    /// of 0, below 0, not a whole number or written as a list leaves the default limit
    /// (0 made every run of the agent stop at once), and a `model` written as a list the
    /// caller's model. Only a bad name drops the definition.
    #[test]
    fn bad_optional_fields_are_ignored_with_a_warning() {
        for bad in ["0", "-3", "ten", "2.5"] {
            let text = format!("---\nname: a\nmaxTurns: {bad}\nmodel: haiku\n---\nbody");
            let d = AgentDefinition::parse(&text, "f", AgentSource::User)
                .unwrap_or_else(|e| panic!("{bad}: {e}"));
            assert_eq!(d.max_turns, None, "{bad}");
            assert_eq!(d.model.as_deref(), Some("haiku"), "{bad}");
            assert_eq!(d.prompt, "body");
            assert!(
                d.warnings.len() == 1
                    && d.warnings[0].contains(&format!("maxTurns `{bad}`"))
                    && d.warnings[0].contains("the default applies"),
                "{bad}: {:?}",
                d.warnings
            );
        }
        let listed = "---\nname: a\nmaxTurns:\n  - 3\nmodel:\n  - haiku\n---\n";
        let d = AgentDefinition::parse(listed, "f", AgentSource::User).unwrap();
        assert_eq!((d.max_turns, d.model.as_deref()), (None, None));
        assert!(
            d.warnings.len() == 2
                && d.warnings.iter().any(|w| w.contains("maxTurns"))
                && d.warnings.iter().any(|w| w.contains("model")),
            "{:?}",
            d.warnings
        );
        let d = AgentDefinition::parse("---\nmaxTurns: 7\n---\n", "f", AgentSource::User).unwrap();
        assert_eq!(d.max_turns, Some(7));
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    }

    /// A flow-style list (`model: [haiku]`, `maxTurns: [3]`) is a list as much as a block
    /// one: the field is dropped with the list notice (the model was sent as the name
    /// `[haiku]`, and `maxTurns` got the notice for a value that is not a number), while
    /// `tools` and `disallowedTools` written so still give their items.
    #[test]
    fn flow_lists_for_single_values_are_ignored_with_the_list_warning() {
        for (model, turns) in [
            ("[haiku]", "[3]"),
            ("[]", "[ ]"),
            ("[haiku, opus]", "[3, 4]"),
        ] {
            let text = format!(
                "---\nname: a\nmodel: {model}\nmaxTurns: {turns}\ntools: [Read, Glob]\ndisallowedTools: [Glob]\n---\nbody"
            );
            let d = AgentDefinition::parse(&text, "f", AgentSource::User)
                .unwrap_or_else(|e| panic!("{model}: {e}"));
            assert_eq!((d.model.as_deref(), d.max_turns), (None, None), "{model}");
            assert_eq!(d.tools.as_deref().unwrap(), ["Read", "Glob"]);
            assert_eq!(d.disallowed_tools, ["Glob"]);
            assert!(
                d.warnings.len() == 2
                    && d.warnings
                        .iter()
                        .any(|w| w.starts_with("maxTurns is written as a list"))
                    && d.warnings
                        .iter()
                        .any(|w| w.starts_with("model is written as a list")),
                "{model}: {:?}",
                d.warnings
            );
        }
        // A model name with brackets inside it is still a name (Claude Code's `sonnet[1m]`).
        let d = AgentDefinition::parse("---\nmodel: sonnet[1m]\n---\n", "f", AgentSource::User)
            .unwrap();
        assert_eq!(d.model.as_deref(), Some("sonnet[1m]"));
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    }

    #[test]
    fn tool_selection_restricts_and_withholds_agent() {
        let parent: Vec<Arc<dyn Tool>> = vec![
            Arc::new(tools_builtin::Read),
            Arc::new(tools_builtin::Glob),
            Arc::new(tools_builtin::Bash::default()),
            Arc::new(tools_builtin::AskUserQuestion),
        ];
        let names = |d: &AgentDefinition| -> Vec<String> {
            d.select_tools(&parent)
                .iter()
                .map(|t| t.name().to_owned())
                .collect()
        };
        let all = AgentDefinition::general_purpose();
        assert_eq!(names(&all), ["Read", "Glob", "Bash"]);
        let mut some = AgentDefinition::general_purpose();
        some.tools = Some(vec!["Read".into(), "Bash".into(), "AskUserQuestion".into()]);
        some.disallowed_tools = vec!["Bash".into()];
        assert_eq!(names(&some), ["Read"]);
    }

    /// A tool name in another case (`bash`) names no tool: in `disallowedTools` it still
    /// keeps the tool out (it was ignored without a word, and the sub-agent got Bash); in
    /// `tools` it gives nothing. Both are warned about, with the name meant.
    #[test]
    fn a_tool_name_in_another_case_is_warned_about_and_still_withheld() {
        let parent: Vec<Arc<dyn Tool>> = vec![
            Arc::new(tools_builtin::Read),
            Arc::new(tools_builtin::Glob),
            Arc::new(tools_builtin::Bash::default()),
        ];
        let d = AgentDefinition::parse(
            "---\nname: a\ntools: Read, glob, Bash\ndisallowedTools: [bash, Nonesuch]\n---\nbody",
            "a",
            AgentSource::User,
        )
        .unwrap();
        let names: Vec<String> = d
            .select_tools(&parent)
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        assert_eq!(names, ["Read"]);
        assert_eq!(
            d.warnings,
            [
                "tools names `glob`, which is no tool (names are case-sensitive): `Glob` is meant?",
                "disallowedTools names `bash`, which is no tool (names are case-sensitive): `Bash` is meant? It is kept out all the same",
                "disallowedTools names `Nonesuch`, which is no tool: it keeps nothing out (MCP tools are named `mcp__<server>__<tool>`)",
            ]
        );
    }

    /// A `tools` or `disallowedTools` entry naming no tool is warned about (a misspelt
    /// `disallowedTools: Wrte, Edti, Bsah` was ignored without a word), but not a name of
    /// the host's own tools, an MCP tool's, a glob, a known tool with its rule content
    /// (`Bash(git:*)`, warned about only for its parentheses) or the Agent tool naming agent
    /// types.
    #[test]
    fn names_of_no_tool_are_warned_about_but_not_the_hosts_own() {
        let text = "---\nname: a\ntools: Read, Raed, Faulty, mcp__docs__search, Bash(git:*), Agent(x, y)\ndisallowedTools: Wrte, Edti, Bsah, Faulty, mcp__*\n---\nbody";
        let warnings = |host: &[String]| {
            AgentDefinition::parse_with_host_tools(text, "a", AgentSource::User, host)
                .unwrap()
                .warnings
        };
        let unknown = |field: &str, name: &str, consequence: &str| {
            format!(
                "{field} names `{name}`, which is no tool: {consequence} (MCP tools are named `mcp__<server>__<tool>`)"
            )
        };
        let typo = |field: &str, name: &str, meant: &str, consequence: &str| {
            format!(
                "{field} names `{name}`, which is no tool (did you mean `{meant}`?): {consequence}"
            )
        };
        let mut expected = vec![
            typo("tools", "Raed", "Read", "it gives nothing"),
            unknown("tools", "Faulty", "it gives nothing"),
            "tools names `Bash(git:*)`: the part in parentheses restricts nothing here, the agent gets the whole `Bash` tool (permission rules such as `Bash(git:*)` restrict what it may run)".to_owned(),
            typo(
                "disallowedTools",
                "Wrte",
                "Write",
                "`Write` is kept out all the same",
            ),
            typo(
                "disallowedTools",
                "Edti",
                "Edit",
                "`Edit` is kept out all the same",
            ),
            typo(
                "disallowedTools",
                "Bsah",
                "Bash",
                "`Bash` is kept out all the same",
            ),
            unknown("disallowedTools", "Faulty", "it keeps nothing out"),
        ];
        assert_eq!(warnings(&[]), expected);
        expected.retain(|w| !w.contains("Faulty"));
        assert_eq!(warnings(&["Faulty".to_owned()]), expected);
    }

    /// A `disallowedTools` entry a typo away from a tool (`Bsah`, `Wrte`) keeps that tool
    /// out (the "read only" sub-agent got Bash, Edit and Write), unless one of the caller's
    /// tools has that very name.
    #[test]
    fn a_misspelt_restriction_still_restricts() {
        let parent: Vec<Arc<dyn Tool>> = vec![
            Arc::new(tools_builtin::Read),
            Arc::new(tools_builtin::Glob),
            Arc::new(tools_builtin::Bash::default()),
        ];
        let d = AgentDefinition::parse(
            "---\nname: ro\ndisallowedTools: Bsah, Glbo\n---\nbody",
            "ro",
            AgentSource::Project,
        )
        .unwrap();
        let names: Vec<String> = d
            .select_tools(&parent)
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        assert_eq!(names, ["Read"]);
    }

    /// A tool of an MCP server, as `tools-mcp` names it (`mcp__<server>__<tool>`, both parts
    /// normalised).
    struct FromServer {
        name: String,
        server: &'static str,
        tool: &'static str,
    }

    impl FromServer {
        fn tool(server: &'static str, tool: &'static str) -> Arc<dyn Tool> {
            let name = format!(
                "mcp__{}__{}",
                tool_core::normalize_mcp_name(server),
                tool_core::normalize_mcp_name(tool)
            );
            Arc::new(Self { name, server, tool })
        }
    }

    #[tool_core::async_trait]
    impl Tool for FromServer {
        fn name(&self) -> &str {
            &self.name
        }
        fn input_schema(&self) -> serde_json::Value {
            serde_json::json!({"type": "object"})
        }
        fn description(&self) -> std::borrow::Cow<'_, str> {
            "an MCP tool".into()
        }
        fn max_result_size(&self) -> tool_core::MaxResultSize {
            tool_core::MaxResultSize::Chars(100)
        }
        fn mcp_info(&self) -> Option<tool_core::McpToolInfo> {
            Some(tool_core::McpToolInfo {
                server_name: self.server.to_owned(),
                tool_name: self.tool.to_owned(),
                source: None,
            })
        }
        async fn call(
            &self,
            _input: serde_json::Value,
            _ctx: tool_core::ToolUseContext,
            _progress: tool_core::ProgressSender,
        ) -> Result<tool_core::ToolResult, tool_core::ToolError> {
            Ok(tool_core::ToolResult::text("called"))
        }
    }

    /// `mcp__SERVER` and `mcp__SERVER__*` name every tool of that server in `tools` and in
    /// `disallowedTools`, the server's name normalised as permission rules do (`my.docs` is
    /// `my_docs`), and `mcp__*` every MCP tool (server-wide names kept nothing out and gave
    /// nothing); an exact name still names its tool alone. An entry loading could not judge
    /// that names none of the caller's tools is noted; one that does is not.
    #[test]
    fn server_wide_mcp_names_name_every_tool_of_the_server() {
        let parent: Vec<Arc<dyn Tool>> = vec![
            Arc::new(tools_builtin::Read),
            FromServer::tool("my.docs", "search"),
            FromServer::tool("my.docs", "fetch"),
            FromServer::tool("big", "send"),
        ];
        let chosen = |front: &str| {
            let d =
                AgentDefinition::parse(&format!("---\n{front}\n---\nbody"), "a", AgentSource::User)
                    .unwrap();
            let (tools, notices) = d.select_tools_noting(&parent);
            let names: Vec<String> = tools.iter().map(|t| t.name().to_owned()).collect();
            (names, notices)
        };
        let none: Vec<String> = Vec::new();
        for front in [
            "disallowedTools: mcp__my_docs, mcp__big__*",
            "disallowedTools: [\"mcp__*\"]",
        ] {
            assert_eq!(
                chosen(front),
                (vec!["Read".to_owned()], none.clone()),
                "{front}"
            );
        }
        assert_eq!(
            chosen("tools: mcp__my_docs__*, Read"),
            (
                vec![
                    "Read".to_owned(),
                    "mcp__my_docs__search".to_owned(),
                    "mcp__my_docs__fetch".to_owned()
                ],
                none.clone()
            )
        );
        assert_eq!(
            chosen("tools: mcp__big\ndisallowedTools: mcp__my_docs__fetch"),
            (vec!["mcp__big__send".to_owned()], none.clone())
        );
        let (names, notices) =
            chosen("tools: Read, mcp__gone\ndisallowedTools: mcp__big__nosuch, my_tool");
        assert_eq!(names, ["Read"]);
        assert_eq!(
            notices,
            [
                "tools names `mcp__gone`, which is none of the caller's tools: it gives nothing",
                "disallowedTools names `mcp__big__nosuch`, which is none of the caller's tools: it keeps nothing out",
                "disallowedTools names `my_tool`, which is none of the caller's tools: it keeps nothing out",
            ]
        );
    }

    /// The Agent tool's description lists a description's first 1,000 characters with an
    /// ellipsis, cut on a character boundary, and loading says it was cut; a description
    /// of 1,000 characters is listed whole, without a word.
    #[test]
    fn a_long_description_is_listed_cut_with_a_warning() {
        let parse = |description: &str| {
            AgentDefinition::parse(
                &format!("---\ndescription: {description}\n---\nbody"),
                "a",
                AgentSource::User,
            )
            .unwrap()
        };
        let whole = parse(&"ü".repeat(MAX_LISTED_DESCRIPTION_CHARS));
        assert_eq!(whole.listed_description(), whole.description);
        assert!(whole.warnings.is_empty(), "{:?}", whole.warnings);
        let long = parse(&"ü".repeat(MAX_LISTED_DESCRIPTION_CHARS + 1));
        assert_eq!(
            long.listed_description(),
            format!("{}…", "ü".repeat(MAX_LISTED_DESCRIPTION_CHARS))
        );
        assert_eq!(
            long.warnings,
            [
                "description is 1001 characters long: the Agent tool's description (sent with every request) shows its first 1000"
            ]
        );
    }

    /// Found by review: a description's line breaks and control characters went into the
    /// Agent tool's description as written, so a definition (a cloned repository's) added
    /// lines of its own to what the model reads, and escape sequences to a terminal that
    /// prints it. Listed as skills' descriptions are: on one line (a run of whitespace, line
    /// breaks and tabs included, is one space), every other control character shown as its
    /// escape (`\u{1b}`); the definition keeps its description as written.
    /// Found by review: a name with an escape sequence went into the Agent tool's
    /// description and into messages as written. Refused, the name shown escaped.
    #[test]
    fn an_agent_name_with_control_characters_is_refused() {
        let refused = AgentDefinition::parse(
            "---\nname: re\u{1b}[31mviewer\ndescription: d\n---\nbody",
            "a",
            AgentSource::Project,
        )
        .unwrap_err();
        assert_eq!(
            refused,
            "the agent name `re\\u{1b}[31mviewer` contains control characters"
        );
    }

    #[test]
    fn a_description_is_listed_on_one_line_with_controls_escaped() {
        let parse = |text: &str| AgentDefinition::parse(text, "a", AgentSource::Project).unwrap();
        // A block scalar and `/agents`' one-line form with `\n`.
        for text in [
            "---\ndescription: |\n  Use for reviews.\n  Example: a diff\n---\nbody",
            "---\ndescription: Use for reviews.\\nExample: a diff\n---\nbody",
        ] {
            let d = parse(text);
            assert_eq!(d.description, "Use for reviews.\nExample: a diff");
            assert_eq!(d.listed_description(), "Use for reviews. Example: a diff");
        }
        // Raw controls in the file: ESC (a colour sequence), BEL, NUL, a C1 CSI, DEL, a tab,
        // a carriage return and a line separator (a line feed would end the line).
        let d = parse(
            "---\ndescription: a \u{1b}[31mred\u{1b}[0m\u{7}\u{0} b\u{9b}2J\u{7f}\tc\rd\u{2028}e\n---\nbody",
        );
        let listed = d.listed_description();
        assert_eq!(
            listed,
            "a \\u{1b}[31mred\\u{1b}[0m\\u{7}\\u{0} b\\u{9b}2J\\u{7f} c d e"
        );
        assert!(!listed.chars().any(char::is_control), "{listed:?}");
        // Cut at the description's own 1,000th character, then made one line: an escape is
        // never cut in two.
        let mut d = AgentDefinition::general_purpose();
        d.description = format!("{}\u{1b}\n{}", "x".repeat(999), "y".repeat(10));
        assert_eq!(
            d.listed_description(),
            format!("{}\\u{{1b}}…", "x".repeat(999))
        );
        // A description without controls is listed as it is.
        d.description = "Reviews code".to_owned();
        assert!(matches!(
            d.listed_description(),
            Cow::Borrowed("Reviews code")
        ));
    }

    /// Two files of one directory defining one name: the one whose file name sorts last is
    /// used, and a notice names both (the other was dropped without a word). A nearer
    /// directory's definition overriding a farther one's is no such case.
    #[test]
    fn two_files_defining_one_name_are_said() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let dir = tmp.path();
        for (file, body) in [("b.md", "B"), ("a.md", "A"), ("c.md", "C")] {
            let name = if file == "c.md" { "other" } else { "twin" };
            std::fs::write(dir.join(file), format!("---\nname: {name}\n---\n{body}"))
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let mut map = BTreeMap::new();
        let mut problems = Vec::new();
        read_dir_definitions(dir, AgentSource::Project, &[], &mut map, &mut problems);
        assert_eq!(map["twin"].prompt, "B");
        let (a, b) = (dir.join("a.md"), dir.join("b.md"));
        assert_eq!(
            problems,
            [format!(
                "agent definitions {} and {} both define the agent `twin`: {} is used, {} is not (of the files in one agents directory and its subfolders that define one name, the one whose path sorts last is)",
                a.display(),
                b.display(),
                b.display(),
                a.display()
            )]
        );
        // Another directory's definition of the name overrides it, as documented, unsaid.
        let nearer = tmp.path().join("nearer");
        std::fs::create_dir(&nearer).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(nearer.join("z.md"), "---\nname: twin\n---\nZ")
            .unwrap_or_else(|e| panic!("{e}"));
        let mut problems = Vec::new();
        read_dir_definitions(&nearer, AgentSource::Project, &[], &mut map, &mut problems);
        assert_eq!(map["twin"].prompt, "Z");
        assert!(problems.is_empty(), "{problems:?}");
    }

    /// A `tools` entry with a rule's content (`Bash(git status)`) gives the whole tool, and a
    /// `disallowedTools` one keeps the whole tool out: both are said. The Agent tool's
    /// parentheses (the types it may start) are read, and not warned about.
    #[test]
    fn parentheses_outside_the_agent_tool_are_warned_about() {
        let d = AgentDefinition::parse(
            "---\ntools: Read, Bash(git status), Agent(worker)\ndisallowedTools: Write(/etc/**)\n---\nbody",
            "a",
            AgentSource::User,
        )
        .unwrap();
        assert_eq!(
            d.warnings,
            [
                "tools names `Bash(git status)`: the part in parentheses restricts nothing here, the agent gets the whole `Bash` tool (permission rules such as `Bash(git status)` restrict what it may run)",
                "disallowedTools names `Write(/etc/**)`: the part in parentheses is not read here, the whole `Write` tool is kept out (a deny rule such as `Edit(/etc/**)` keeps out only such calls)",
            ]
        );
        let parent: Vec<Arc<dyn Tool>> = vec![
            Arc::new(tools_builtin::Read),
            Arc::new(tools_builtin::Bash::default()),
            Arc::new(tools_builtin::Write),
        ];
        let names: Vec<String> = d
            .select_tools(&parent)
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        assert_eq!(names, ["Read", "Bash"]);
    }

    /// A permission context in `mode` (`bypass_available` as given).
    fn caller(mode: PermissionMode, bypass_available: bool) -> ToolPermissionContext {
        ToolPermissionContext {
            mode,
            bypass_available,
            ..ToolPermissionContext::default()
        }
    }

    /// A definition's `permissionMode` applies only when it is no looser than the caller's
    /// mode (it was ignored altogether): `plan` under any caller (refusing changes even
    /// where the caller could bypass), `default` under acceptEdits or bypass; never
    /// `bypassPermissions` or `acceptEdits` under a caller in default mode, nor anything
    /// but `plan` under a caller in plan mode. Under a caller that never asks, the
    /// sub-agent never asks either.
    #[test]
    fn a_definitions_permission_mode_only_restricts() {
        use PermissionMode::{AcceptEdits, Auto, BypassPermissions, Default, DontAsk, Plan};
        let with_mode = |mode: &str| {
            AgentDefinition::parse(
                &format!("---\nname: a\npermissionMode: {mode}\n---\nbody"),
                "a",
                AgentSource::Project,
            )
            .unwrap()
        };
        // (definition, caller, caller's bypass available) -> the sub-agent's mode, or None
        // when the definition's mode is not applied.
        let cases = [
            ("plan", Default, false, Some(Plan)),
            ("plan", BypassPermissions, true, Some(Plan)),
            ("plan", AcceptEdits, false, Some(Plan)),
            ("plan", Plan, true, Some(Plan)),
            ("plan", DontAsk, false, Some(Plan)),
            ("default", AcceptEdits, false, Some(Default)),
            ("manual", BypassPermissions, true, Some(Default)),
            ("default", DontAsk, false, Some(DontAsk)),
            ("dontAsk", BypassPermissions, true, Some(DontAsk)),
            ("dontAsk", Default, false, Some(DontAsk)),
            ("acceptEdits", BypassPermissions, true, Some(AcceptEdits)),
            ("auto", Default, false, Some(Auto)),
            (
                "bypassPermissions",
                BypassPermissions,
                true,
                Some(BypassPermissions),
            ),
            ("bypassPermissions", Default, false, None),
            ("bypassPermissions", AcceptEdits, false, None),
            ("acceptEdits", Default, false, None),
            ("default", Plan, false, None),
            ("dontAsk", Plan, false, None),
        ];
        for (wanted, mode, bypass, expected) in cases {
            let case = format!("{wanted} under {} (bypass {bypass})", mode.as_str());
            let d = with_mode(wanted);
            assert!(d.warnings.is_empty(), "{case}: {:?}", d.warnings);
            let caller = caller(mode, bypass);
            match (d.permission_for(&caller), expected) {
                (Ok(p), Some(expected)) => {
                    assert_eq!(p.mode, expected, "{case}");
                    if expected == Plan {
                        assert!(p.plan_mode_refuses_changes(), "{case}");
                    }
                    assert_eq!(p.avoid_prompts, mode == DontAsk && expected == Plan, "{case}");
                }
                (Err(why), None) => assert!(
                    why.starts_with(&format!("permissionMode `{wanted}` was not applied: it would loosen the caller's mode (`{}`)", mode.as_str())),
                    "{case}: {why}"
                ),
                (got, expected) => panic!("{case}: {got:?}, expected {expected:?}"),
            }
        }
        // Without a mode of its own, the sub-agent has its caller's context as it is.
        let plain = AgentDefinition::general_purpose();
        let bypassing = caller(BypassPermissions, true);
        assert_eq!(plain.permission_for(&bypassing).unwrap(), bypassing);
        // A caller with nobody to ask keeps its sub-agent from asking, whatever its mode.
        let unattended = ToolPermissionContext {
            avoid_prompts: true,
            ..bypassing
        };
        for (wanted, expected) in [("default", Default), ("plan", Plan)] {
            let p = with_mode(wanted).permission_for(&unattended).unwrap();
            assert_eq!((p.mode, p.avoid_prompts), (expected, true), "{wanted}");
        }
        // A mode that is none, or a list, is ignored with a warning.
        for (written, warning) in [
            ("yolo", "permissionMode `yolo` is no permission mode"),
            ("[plan]", "permissionMode is written as a list"),
        ] {
            let d = with_mode(written);
            assert_eq!(d.permission_mode, None, "{written}");
            assert!(
                d.warnings.len() == 1 && d.warnings[0].starts_with(warning),
                "{written}: {:?}",
                d.warnings
            );
        }
    }
}
