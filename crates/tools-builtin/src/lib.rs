//! Toolwright's built-in tools, with Claude Code's names and input fields.
//!
//! Each tool is a [`tool_core::TypedTool`]; this crate knows `tool-core` and `tool-perms`'
//! matching helpers, never the executor, the registry or another tool crate.
#![forbid(unsafe_code)]
