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
//! [`serve`] serves a tool list over MCP (stdio or Streamable HTTP), each call through the
//! pipeline, as `toolwright serve` does it.
//!
//! [`agent`] is an agent loop on the Anthropic Messages API and the Agent (sub-agent) tool,
//! as `toolwright agent` runs them (see `docs/agent.md`).
//!
//! # Crate features
//!
//! - `external` (default): the tools a public build ships.
//! - `internal`: everything, including internal-only tools.

#![forbid(unsafe_code)]

pub mod agent;

pub use tool_core as core;
pub use tool_exec as exec;
pub use tool_hooks as hooks;
pub use tool_perms as perms;
pub use tool_registry as registry;
pub use tools_builtin as builtin;
pub use tools_mcp as mcp;

pub mod serve;
