//! Toolwright's per-call pipeline and streaming executor.
//!
//! `run_tool_use` takes one tool_use through validation, hooks, permission, the call and
//! result handling; the streaming executor schedules many of them while a model response is
//! still streaming. It is the only crate that spawns tasks for tool calls.
#![forbid(unsafe_code)]
