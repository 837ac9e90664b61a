//! The MCP conformance suite's server scenarios (`MCP_CONFORMANCE`, from
//! `../shared/mcp-peers`), over Streamable HTTP:
//!
//! - against `examples/conformance_server.rs` (the suite's scenario tools, resources and
//!   prompts on the same serve code as `toolwright serve --http`): every scenario of the
//!   `active` suite, and the pending `json-schema-2020-12`;
//! - against `toolwright serve --http` itself: the scenarios that need nothing but a tool
//!   server (`server-initialize`, `ping`, `tools-list`, `server-sse-multiple-streams`,
//!   `dns-rebinding-protection`).
//!
//! Not run:
//! - `server-sse-polling` (pending in the suite): it needs a `test_reconnection` tool that
//!   closes its POST's event stream mid-call and finishes on the client's resumed stream;
//!   the example has no handle on rmcp's session manager to close a stream, so it fails.
//! - the other scenarios against the real binary: they call the suite's own fixtures
//!   (`test_simple_text`, `test://static-text`, prompts, logging, completions), which the
//!   product does not ship (some would pass vacuously: any unknown tool is an error result).
//! - the client scenarios (`initialize`, `tools_call`, `sse-retry`,
//!   `elicitation-sep1034-client-defaults`, and every `auth/*` OAuth scenario): they test an
//!   MCP client; `crates/tools-mcp/tests/conformance.rs` runs the non-auth ones against ours.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

#[path = "support/serve.rs"]
mod support;
use support::{UrlServer as Server, peer};

/// The example binary (`cargo test` builds examples; `cargo build --examples` does too).
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/debug/deps/<test> -> target/debug/examples/<name>
    let path = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(|dir| dir.join("examples").join(name))
        .unwrap();
    assert!(
        path.exists(),
        "{} is missing: run `cargo build --examples` (or the whole `cargo test`) first",
        path.display()
    );
    path
}

/// Runs the suite with `selection` (`--suite X` or `--scenario X`) and fails with the
/// failing checks.
fn run_suite(conformance: &str, url: &str, selection: &[&str], out: &Path) {
    let result: Output = Command::new(conformance)
        .args(["server", "--url", url])
        .args(selection)
        .arg("-o")
        .arg(out)
        .current_dir(out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&result.stdout);
    // A suite ends with `=== SUMMARY ===` and `Total: N passed, M failed`; one scenario with
    // `Passed: N/N, M failed, W warnings`.
    let summary = stdout
        .rsplit("=== SUMMARY ===")
        .next()
        .unwrap_or(&stdout)
        .rsplit("Checks:")
        .next()
        .unwrap_or(&stdout)
        .trim()
        .to_owned();
    let failing = summary.lines().any(|l| l.starts_with('✗'))
        || !summary.contains(", 0 failed")
        || (summary.contains("warnings") && !summary.contains(", 0 warnings"));
    assert!(
        result.status.success() && !failing,
        "conformance {selection:?} against {url} failed:\n{summary}\n{}",
        String::from_utf8_lossy(&result.stderr)
    );
}

#[test]
fn the_example_server_passes_every_active_server_scenario() {
    let Some(conformance) = peer("MCP_CONFORMANCE") else {
        return;
    };
    let mut command = Command::new(example("conformance_server"));
    command.arg("127.0.0.1:0").stderr(Stdio::inherit());
    let server = Server::start(command);
    let out = tempfile::tempdir().unwrap();
    run_suite(
        &conformance,
        &server.url,
        &["--suite", "active"],
        out.path(),
    );
    run_suite(
        &conformance,
        &server.url,
        &["--scenario", "json-schema-2020-12"],
        out.path(),
    );
}

#[test]
fn toolwright_serve_passes_the_scenarios_of_a_plain_tool_server() {
    let Some(conformance) = peer("MCP_CONFORMANCE") else {
        return;
    };
    let project = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(project.path()).unwrap();
    let server = Server::toolwright_http(&root, &[]);
    let out = tempfile::tempdir().unwrap();
    for scenario in [
        "server-initialize",
        "ping",
        "tools-list",
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
    ] {
        run_suite(
            &conformance,
            &server.url,
            &["--scenario", scenario],
            out.path(),
        );
    }
}
