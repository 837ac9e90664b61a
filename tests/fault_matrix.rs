//! The fault matrix: each fault injected for real into a session built the way the binary
//! builds one (`src/session.rs`: settings files, hooks, `.mcp.json` servers, the permission
//! engine, the streaming executor), and each checked for the same things: the executor
//! survives (a later call still works), every tool_use gets exactly one result with a clear
//! error text, no process is left (checked through `/proc`, by process group and by a
//! marker in the command line), and no temporary file is left. docs/reliability.md lists
//! what the user sees for each.
//!
//! | Fault | Test |
//! |---|---|
//! | hook hangs (timeout) | [`hooks::hook_hangs_until_its_timeout`] |
//! | hook crashes | [`hooks::hook_crashes`] |
//! | hook prints garbage | [`hooks::hook_prints_garbage`] |
//! | hook prints 100 MB | [`hooks::hook_prints_100_mb`] |
//! | hook forks a daemon | [`hooks::hook_forks_a_daemon`] |
//! | hook never reads stdin | [`hooks::hook_never_reads_stdin`] |
//! | MCP server crashes mid-call | [`mcp::mcp_server_crashes_mid_call`] |
//! | MCP server hangs on initialize | [`mcp::mcp_server_hangs_on_initialize`] |
//! | MCP server hangs on a call | [`mcp::mcp_server_hangs_on_a_call`] |
//! | MCP server sends malformed JSON-RPC | [`mcp::mcp_server_sends_malformed_json_rpc`] |
//! | MCP server lists an invalid tool | [`mcp::mcp_server_lists_an_invalid_tool`] |
//! | MCP server sends a 50 MB result | [`mcp::mcp_server_sends_a_50_mb_result`] |
//! | MCP server closes stdout, keeps running | [`mcp::mcp_server_closes_stdout_but_keeps_running`] |
//! | the same against the real rmcp server | [`mcp::tiny_rmcp_server_crash_and_hang`], [`mcp::tiny_rmcp_server_sends_50_mb`] |
//! | tool panics | [`tools::tool_panics`] |
//! | context modifier panics | [`tools::context_modifier_panics`] |
//! | cancel during validation | [`cancel::cancel_during_validation`] |
//! | cancel during a PreToolUse hook | [`cancel::cancel_during_a_pre_tool_use_hook`] |
//! | cancel during a permission ask | [`cancel::cancel_during_a_permission_ask`] |
//! | cancel during the call | [`cancel::cancel_during_the_call`] |
//! | cancel during persistence | [`cancel::cancel_during_persistence`] |
//! | cancel during a PostToolUse hook | [`cancel::cancel_during_a_post_tool_use_hook`] |
//! | user interrupt, executor dropped mid-call | [`cancel::user_interrupt_and_dropped_executor_mid_call`] |
//! | results directory not writable | [`persist::results_directory_not_writable`] |
//! | results directory full | [`persist::results_directory_full`] |
//! | file edited by another process between Read and Edit | [`files::file_edited_by_another_process_between_read_and_edit`] |
//! | symlink swapped after the permission check | [`files::symlink_swapped_after_the_permission_check`] |
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "fault_matrix/cancel.rs"]
mod cancel;
#[path = "fault_matrix/files.rs"]
mod files;
#[path = "fault_matrix/hooks.rs"]
mod hooks;
#[path = "fault_matrix/mcp.rs"]
mod mcp;
#[path = "fault_matrix/persist.rs"]
mod persist;
#[path = "fault_matrix/rig.rs"]
mod rig;
#[path = "support/serve.rs"]
mod serve_support;
#[path = "fault_matrix/tools.rs"]
mod tools;
