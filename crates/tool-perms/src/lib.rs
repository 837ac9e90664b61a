//! Claude Code's permission model for Toolwright.
//!
//! This crate decides allow / ask / deny for every call: rule parsing, the settings files and
//! their precedence, modes, Bash command rules and path rules. It knows `tool-core` only and
//! never runs a tool, a hook or a process.
#![forbid(unsafe_code)]
