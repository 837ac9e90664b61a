//! MCP servers' tools as ordinary Toolwright tools, on the official Rust SDK (`rmcp`).
//!
//! This is the only crate that knows MCP. It depends on `tool-core` only.
#![forbid(unsafe_code)]
