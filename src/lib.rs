//! Toolwright: the tool layer of an AI agent.
//!
//! This facade re-exports the workspace's crates under one name, so an application can
//! depend on `toolwright` alone:
//!
//! - [`core`]: the `Tool` contract (`tool-core`);
//! - [`perms`]: Claude Code's permission model (`tool-perms`);
//! - [`hooks`]: Claude Code's hooks protocol (`tool-hooks`);
//! - [`exec`]: the per-call pipeline and the streaming executor (`tool-exec`);
//! - [`builtin`]: the built-in tools (`tools-builtin`);
//! - [`mcp`]: MCP servers' tools (`tools-mcp`);
//! - [`registry`]: the tool list, its gates and profiles (`tool-registry`).
//!
//! # Crate features
//!
//! - `external` (default): the tools a public build ships.
//! - `internal`: everything, including internal-only tools.

#![forbid(unsafe_code)]

pub use tool_core as core;
pub use tool_exec as exec;
pub use tool_hooks as hooks;
pub use tool_perms as perms;
pub use tool_registry as registry;
pub use tools_builtin as builtin;
pub use tools_mcp as mcp;
