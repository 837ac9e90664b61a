//! The MCP conformance suite's non-auth client scenarios, run against
//! `examples/conformance_client.rs` (built on this crate's public API).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Command;

const SCENARIOS: &[&str] = &[
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
];

#[test]
fn client_scenarios_pass() {
    let Some(conformance) = common::peer("MCP_CONFORMANCE") else {
        return;
    };
    let client = common::example("conformance_client");
    let out_dir = tempfile::tempdir().unwrap();
    // The scenarios are independent: run them side by side to keep the wall time small.
    let children: Vec<_> = SCENARIOS
        .iter()
        .map(|scenario| {
            let child = Command::new(&conformance)
                .args(["client", "--command", &client, "--scenario", scenario, "-o"])
                .arg(out_dir.path().join(scenario))
                .current_dir(out_dir.path())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            (scenario, child)
        })
        .collect();
    let mut failures = Vec::new();
    for (scenario, child) in children {
        let out = child.wait_with_output().unwrap();
        if !out.status.success() {
            failures.push(format!(
                "{scenario}: {}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .filter(|l| l.contains("Passed") || l.contains("Error") || l.contains("FAIL"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
