//! Claude Code's hooks protocol for Toolwright.
//!
//! Configuration (the `hooks` section of settings files), matchers, and running hook
//! commands with Claude Code's stdin JSON, exit codes and JSON output. It knows `tool-core`
//! only: it never decides permissions itself and never runs a tool.
#![forbid(unsafe_code)]
