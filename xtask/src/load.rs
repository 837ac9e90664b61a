//! `cargo xtask load [--calls N] [--clients N]`: the full-size load test of
//! `toolwright serve --http` (tests/load.rs), built in release: by default 10,000 tool calls
//! from 16 concurrent MCP clients, with latency percentiles and the server's memory before
//! and after. CI runs the same test in its short form as part of the suite.

use std::path::Path;

/// Runs the load test with the given size.
pub fn run(root: &Path, args: &[String]) -> super::Result {
    let mut calls = "10000".to_owned();
    let mut clients = "16".to_owned();
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let value = rest
            .next()
            .filter(|v| v.parse::<usize>().is_ok_and(|n| n > 0))
            .ok_or_else(|| format!("`{flag}` needs a positive number"))?;
        match flag.as_str() {
            "--calls" => value.clone_into(&mut calls),
            "--clients" => value.clone_into(&mut clients),
            other => {
                return Err(format!(
                    "unknown flag `{other}`; usage: cargo xtask load [--calls N] [--clients N]"
                )
                .into());
            }
        }
    }
    super::run(
        &format!("load: {calls} calls from {clients} clients (release)"),
        super::cargo()
            .current_dir(root)
            .env("TOOLWRIGHT_LOAD_CALLS", &calls)
            .env("TOOLWRIGHT_LOAD_CLIENTS", &clients)
            .args([
                "test",
                "--release",
                "-p",
                "toolwright",
                "--test",
                "load",
                "--",
                "--nocapture",
            ]),
    )
}
