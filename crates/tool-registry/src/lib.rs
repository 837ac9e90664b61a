//! The one place that names Toolwright's concrete tools.
//!
//! The registry assembles the tool crates into the list the model sees. Like ripgrep's flag
//! list, it is one ordered table ([`BUILTIN_TOOLS`]); each entry names its tool, says how
//! it is gated, and builds it. Three gates:
//!
//! - **Cargo features** (compile time): a gated tool is not compiled into a profile that
//!   leaves it out. `cargo xtask profiles` proves it: the feature (or crate) holding its
//!   code is not in the `external` build as cargo resolves it, and its marker string is in
//!   the `internal` binary only.
//! - **Environment** (run time): an entry gated by a variable ([`Gate::Env`]) is in the list
//!   only when the variable is truthy (`1`, `true`, `yes`, `on`; unset, empty or anything
//!   else is off, and Claude Code's name for the same switch counts when ours is unset); one
//!   gated by its absence ([`Gate::NotEnv`], TodoWrite) only when it is not.
//! - **Lazy construction**: entries hold a constructor, not a tool; nothing is built until
//!   [`all_base_tools`] runs, and expensive state inside a tool (a parser, an index) is
//!   built on first use by the tool itself.
//!
//! [`assemble_tool_pool`] merges built-in and MCP tools in a stable order.
//!
//! The registry never runs a tool, and no other crate names a concrete tool.
//!
//! # Crate features
//!
//! - `external` (default): the tools a public build ships.
//! - `internal`: everything (`external` plus every family below).
//! - `proactive`: Sleep.
//! - `worktree`: EnterWorktree, ExitWorktree.
//! - `agent-triggers`: CronCreate, CronList, CronDelete.
//! - `repl`: REPL.
//! - `word-count`: WordCount, the example tool crate (`examples/tools-word-count`).
//!
//! # Runtime gates
//!
//! - `TOOLWRIGHT_ENABLE_TASKS` (or Claude Code's `CLAUDE_CODE_ENABLE_TASKS`): TaskCreate,
//!   TaskGet, TaskUpdate and TaskList (Claude Code's todo v2) replace TodoWrite.
//!
//! # Example
//!
//! ```
//! let tools = tool_registry::all_base_tools();
//! assert!(tools.iter().any(|t| t.name() == "Bash"));
//! assert_eq!(tool_registry::gate_of("Read"), "always");
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

use std::collections::HashSet;
use std::sync::Arc;

use tool_core::Tool;

/// How an entry of the tool list is gated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// Always present.
    Always,
    /// Compiled in only with this Cargo feature.
    Feature(&'static str),
    /// Present only when this environment variable is set to a truthy value.
    Env(&'static str),
    /// Present only when this environment variable is *not* set to a truthy value (the tool
    /// an [`Gate::Env`] family replaces).
    NotEnv(&'static str),
}

/// Whether `value` (of an environment variable) is truthy ([`tool_core::env_truthy`]).
fn truthy(value: Option<String>) -> bool {
    value.is_some_and(|v| tool_core::env_truthy(&v))
}

impl Gate {
    /// A short name for listings: `always`, `feature:NAME`, `env:VAR`.
    pub fn describe(self) -> String {
        match self {
            Self::Always => "always".to_owned(),
            Self::Feature(f) => format!("feature:{f}"),
            Self::Env(v) => format!("env:{v}"),
            Self::NotEnv(v) => format!("env:!{v}"),
        }
    }

    /// Whether an entry with this gate is in the list, with environment variables read
    /// through `env` (feature gates are decided at compile time: an entry that exists is
    /// open).
    pub fn is_open_in(self, env: &dyn Fn(&str) -> Option<String>) -> bool {
        // A variable, or, when it is not set, Claude Code's name for the same switch (ours
        // set to `0` wins over a `CLAUDE_CODE_…=1` left in a shell profile).
        let on = |var: &str| match env(var).filter(|v| !v.trim().is_empty()) {
            Some(value) => tool_core::env_truthy(&value),
            None => ENV_ALIASES
                .iter()
                .any(|(ours, theirs)| *ours == var && truthy(env(theirs))),
        };
        match self {
            Self::Always | Self::Feature(_) => true,
            Self::Env(var) => on(var),
            Self::NotEnv(var) => !on(var),
        }
    }
}

/// Claude Code's names of our switches: a user's existing setting works unchanged.
const ENV_ALIASES: &[(&str, &str)] = &[(TASKS_ENV, "CLAUDE_CODE_ENABLE_TASKS")];

/// One entry of the tool list.
#[derive(Debug, Clone, Copy)]
pub struct ToolEntry {
    /// The tool's name.
    pub name: &'static str,
    /// Its gate.
    pub gate: Gate,
    /// Builds it.
    pub build: fn() -> Arc<dyn Tool>,
}

macro_rules! entry {
    ($name:literal, $gate:expr, $make:expr) => {
        ToolEntry {
            name: $name,
            gate: $gate,
            build: || Arc::new($make),
        }
    };
}

/// The built-in tools in Claude Code's order. Feature-gated entries exist only in builds
/// with their feature.
pub const BUILTIN_TOOLS: &[ToolEntry] = &[
    entry!("TaskOutput", Gate::Always, tools_builtin::TaskOutput),
    entry!("Bash", Gate::Always, tools_builtin::Bash::default()),
    entry!("Glob", Gate::Always, tools_builtin::Glob),
    entry!("Grep", Gate::Always, tools_builtin::Grep),
    entry!("ExitPlanMode", Gate::Always, tools_builtin::ExitPlanMode),
    entry!("Read", Gate::Always, tools_builtin::Read),
    entry!("Edit", Gate::Always, tools_builtin::Edit),
    entry!("Write", Gate::Always, tools_builtin::Write),
    entry!("NotebookEdit", Gate::Always, tools_builtin::NotebookEdit),
    entry!("WebFetch", Gate::Always, tools_builtin::WebFetch),
    entry!(
        "TodoWrite",
        Gate::NotEnv(TASKS_ENV),
        tools_builtin::TodoWrite
    ),
    entry!("WebSearch", Gate::Always, tools_builtin::WebSearch),
    entry!("TaskStop", Gate::Always, tools_builtin::TaskStop),
    entry!(
        "AskUserQuestion",
        Gate::Always,
        tools_builtin::AskUserQuestion
    ),
    entry!("Skill", Gate::Always, tools_builtin::Skill),
    entry!("EnterPlanMode", Gate::Always, tools_builtin::EnterPlanMode),
    entry!(
        "TaskCreate",
        Gate::Env(TASKS_ENV),
        tools_builtin::TaskCreate
    ),
    entry!("TaskGet", Gate::Env(TASKS_ENV), tools_builtin::TaskGet),
    entry!(
        "TaskUpdate",
        Gate::Env(TASKS_ENV),
        tools_builtin::TaskUpdate
    ),
    entry!("TaskList", Gate::Env(TASKS_ENV), tools_builtin::TaskList),
    #[cfg(feature = "worktree")]
    entry!(
        "EnterWorktree",
        Gate::Feature("worktree"),
        tools_builtin::EnterWorktree
    ),
    #[cfg(feature = "worktree")]
    entry!(
        "ExitWorktree",
        Gate::Feature("worktree"),
        tools_builtin::ExitWorktree
    ),
    #[cfg(feature = "repl")]
    entry!(
        "REPL",
        Gate::Feature("repl"),
        tools_builtin::Repl::default()
    ),
    #[cfg(feature = "proactive")]
    entry!("Sleep", Gate::Feature("proactive"), tools_builtin::Sleep),
    #[cfg(feature = "agent-triggers")]
    entry!(
        "CronCreate",
        Gate::Feature("agent-triggers"),
        tools_builtin::CronCreate
    ),
    #[cfg(feature = "agent-triggers")]
    entry!(
        "CronDelete",
        Gate::Feature("agent-triggers"),
        tools_builtin::CronDelete
    ),
    #[cfg(feature = "agent-triggers")]
    entry!(
        "CronList",
        Gate::Feature("agent-triggers"),
        tools_builtin::CronList
    ),
    #[cfg(feature = "word-count")]
    entry!(
        "WordCount",
        Gate::Feature("word-count"),
        tools_word_count::WordCount
    ),
    entry!("ToolSearch", Gate::Always, tools_builtin::ToolSearch),
];

/// The environment variable that turns Claude Code's todo v2 on: TaskCreate, TaskGet,
/// TaskUpdate and TaskList instead of TodoWrite. Claude Code's `CLAUDE_CODE_ENABLE_TASKS`
/// does the same.
pub const TASKS_ENV: &str = "TOOLWRIGHT_ENABLE_TASKS";

/// Every built-in tool of this build whose runtime gate is open, in list order.
pub fn all_base_tools() -> Vec<Arc<dyn Tool>> {
    all_base_tools_in(&|var| std::env::var(var).ok())
}

/// [`all_base_tools`] with the runtime gates read through `env` instead of the process
/// environment (for hosts that keep their own, and for tests).
pub fn all_base_tools_in(env: &dyn Fn(&str) -> Option<String>) -> Vec<Arc<dyn Tool>> {
    BUILTIN_TOOLS
        .iter()
        .filter(|e| e.gate.is_open_in(env))
        .map(|e| (e.build)())
        .collect()
}

/// The gate of the built-in tool `name` (`always`, `feature:NAME`, `env:VAR`), or `mcp` for
/// a tool not in the list.
pub fn gate_of(name: &str) -> String {
    BUILTIN_TOOLS
        .iter()
        .find(|e| e.name == name)
        .map_or_else(|| "mcp".to_owned(), |e| e.gate.describe())
}

/// What [`tools`] filters by.
#[derive(Debug, Clone, Copy, Default)]
pub struct ToolFilter {
    /// Claude Code's `CLAUDE_CODE_SIMPLE`: only Bash, Read and Edit.
    pub simple: bool,
}

impl ToolFilter {
    /// The filter the environment asks for (`CLAUDE_CODE_SIMPLE`).
    pub fn from_env() -> Self {
        Self {
            simple: truthy(std::env::var("CLAUDE_CODE_SIMPLE").ok()),
        }
    }

    /// Whether a tool named `name` may be offered under this filter (in simple mode only
    /// Bash, Read and Edit are). A host that adds tools of its own (the Agent tool) asks
    /// this too.
    pub fn admits(&self, name: &str) -> bool {
        !self.simple || matches!(name, "Bash" | "Read" | "Edit")
    }
}

/// The tools offered to the model (Claude Code's `getTools`): the base tools, only Bash,
/// Read and Edit in simple mode, minus those `denied` (blanket deny rules) and those not
/// enabled.
pub fn tools(filter: ToolFilter, denied: impl Fn(&dyn Tool) -> bool) -> Vec<Arc<dyn Tool>> {
    all_base_tools()
        .into_iter()
        .filter(|t| filter.admits(t.name()))
        .filter(|t| !denied(t.as_ref()) && t.is_enabled())
        .collect()
}

/// Merges built-in and MCP tools the way the model must see them: built-ins sorted by name,
/// then MCP tools sorted by name, de-duplicated by name with built-ins winning. A stable
/// order keeps the model API's prompt cache warm across turns.
pub fn assemble_tool_pool(
    builtins: Vec<Arc<dyn Tool>>,
    mcp: Vec<Arc<dyn Tool>>,
) -> Vec<Arc<dyn Tool>> {
    let mut builtins = builtins;
    let mut mcp = mcp;
    builtins.sort_by(|a, b| locale_order(a.name(), b.name()));
    mcp.sort_by(|a, b| locale_order(a.name(), b.name()));
    let mut seen = HashSet::new();
    builtins
        .into_iter()
        .chain(mcp)
        .filter(|t| seen.insert(t.name().to_owned()))
        .collect()
}

/// Names in the order of Claude Code's `localeCompare` (ICU's root collation) for the
/// characters tool names use: punctuation (`_` before `-`) before digits before letters, letters
/// by their lower case (`alpha` before `Zeta`, which a byte order puts first), and on a tie
/// lower case before upper case. Ties among ToolSearch's results keep this order, so which
/// tools `max_results` cuts is Claude Code's.
pub fn locale_order(a: &str, b: &str) -> std::cmp::Ordering {
    fn primary(c: char) -> (u8, char) {
        if c.is_alphabetic() {
            (3, c.to_lowercase().next().unwrap_or(c))
        } else if c.is_numeric() {
            (2, c)
        } else if c.is_whitespace() {
            (0, c)
        } else {
            // ICU puts the low line before the hyphen, and both before other punctuation.
            (
                1,
                match c {
                    '_' => '\u{0}',
                    '-' => '\u{1}',
                    other => other,
                },
            )
        }
    }
    let by_primary = a.chars().map(primary).cmp(b.chars().map(primary));
    by_primary
        .then_with(|| {
            // Lower case first, at the first letter that differs only in case.
            a.chars()
                .zip(b.chars())
                .find(|(x, y)| x != y)
                .map_or(std::cmp::Ordering::Equal, |(x, y)| {
                    y.is_lowercase().cmp(&x.is_lowercase())
                })
        })
        .then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_as_locale_compare_does() {
        let mut names = vec![
            "mcp__s__Zeta",
            "mcp__s__alpha",
            "mcp__s__Alpha",
            "mcp__s__a_b",
            "mcp__s__ab",
            "mcp__s__a1",
            "mcp__s__beta",
            "mcp__s__a-b",
        ];
        names.sort_by(|a, b| locale_order(a, b));
        assert_eq!(
            names,
            [
                "mcp__s__a_b",
                "mcp__s__a-b",
                "mcp__s__a1",
                "mcp__s__ab",
                "mcp__s__alpha",
                "mcp__s__Alpha",
                "mcp__s__beta",
                "mcp__s__Zeta",
            ]
        );
    }

    fn names(tools: &[Arc<dyn Tool>]) -> Vec<String> {
        tools.iter().map(|t| t.name().to_owned()).collect()
    }

    #[test]
    fn entry_names_match_their_tools() {
        for entry in BUILTIN_TOOLS {
            assert_eq!((entry.build)().name(), entry.name);
        }
    }

    #[test]
    fn deferred_tools_are_announced_and_searchable() {
        // The always-present tools (the gated families add their own deferred tools).
        let tools: Vec<Arc<dyn Tool>> = all_base_tools_in(&|_| None)
            .into_iter()
            .filter(|t| gate_of(t.name()) == "always" || t.name() == "TodoWrite")
            .collect();
        let announcement =
            tools_builtin::tool_search::deferred_tools_announcement(&tools).unwrap_or_default();
        assert_eq!(
            announcement,
            "<available-deferred-tools>\nAskUserQuestion\nEnterPlanMode\nExitPlanMode\n\
             NotebookEdit\nTaskOutput\nTaskStop\nTodoWrite\nWebFetch\nWebSearch\n</available-deferred-tools>"
        );
        let index = tools_builtin::tool_search::ToolSearchIndex::build(&tools);
        assert_eq!(
            index.search("select:TodoWrite,Read", 5),
            ["TodoWrite", "Read"]
        );
        assert_eq!(
            index.search("plan", 5)[..2],
            ["ExitPlanMode", "EnterPlanMode"]
        );
        assert_eq!(index.search("bashoutput", 5), Vec::<String>::new());
        // Claude Code's search hints, so its words find the same tools.
        assert_eq!(
            index.search("extract", 5).first().map(String::as_str),
            Some("WebFetch")
        );
        assert_eq!(
            index
                .search("multiple-choice", 5)
                .first()
                .map(String::as_str),
            Some("AskUserQuestion")
        );
        assert_eq!(index.search("select:KillShell", 5), ["TaskStop"]);
    }

    #[test]
    fn simple_mode_and_blanket_denies() {
        let simple = tools(ToolFilter { simple: true }, |_| false);
        assert_eq!(names(&simple), ["Bash", "Read", "Edit"]);
        let no_bash = tools(ToolFilter::default(), |t| t.name() == "Bash");
        assert!(!names(&no_bash).contains(&"Bash".to_owned()));
    }

    #[test]
    fn pool_is_sorted_and_builtins_win() {
        let builtins = tools(ToolFilter::default(), |_| false);
        // A second "Read" (as an MCP server might shadow it) loses to the built-in.
        let build = |name: &str| {
            let entry = BUILTIN_TOOLS.iter().find(|e| e.name == name).unwrap();
            (entry.build)()
        };
        let mcp = vec![build("Read"), build("Bash")];
        let shadows: Vec<*const ()> = mcp.iter().map(|t| Arc::as_ptr(t).cast::<()>()).collect();
        let pool = assemble_tool_pool(builtins.clone(), mcp);
        let pool_names = names(&pool);
        let mut sorted = names(&builtins);
        sorted.sort_by(|a, b| locale_order(a, b));
        assert_eq!(pool_names, sorted);
        // The instances kept are the built-ins, not the shadows.
        for tool in &pool {
            let kept = Arc::as_ptr(tool).cast::<()>();
            assert!(!shadows.contains(&kept), "{} is the shadow", tool.name());
            assert!(
                builtins.iter().any(|b| Arc::ptr_eq(b, tool)),
                "{} is not the built-in instance",
                tool.name()
            );
        }
    }
}
