//! The one place that names Toolwright's concrete tools.
//!
//! The registry assembles the tool crates into the list the model sees: one ordered list of
//! built-in tools behind Cargo features, runtime gates from the environment, and
//! [`assemble_tool_pool`], which merges built-in and MCP tools in a stable order. It never
//! runs a tool.
#![forbid(unsafe_code)]

use std::collections::HashSet;
use std::sync::Arc;

use tool_core::Tool;

/// Merges built-in and MCP tools the way the model must see them: built-ins sorted by name,
/// then MCP tools sorted by name, de-duplicated by name with built-ins winning. A stable
/// order keeps the model API's prompt cache warm across turns.
pub fn assemble_tool_pool(
    builtins: Vec<Arc<dyn Tool>>,
    mcp: Vec<Arc<dyn Tool>>,
) -> Vec<Arc<dyn Tool>> {
    let mut builtins = builtins;
    let mut mcp = mcp;
    builtins.sort_by(|a, b| a.name().cmp(b.name()));
    mcp.sort_by(|a, b| a.name().cmp(b.name()));
    let mut seen = HashSet::new();
    builtins
        .into_iter()
        .chain(mcp)
        .filter(|t| seen.insert(t.name().to_owned()))
        .collect()
}
