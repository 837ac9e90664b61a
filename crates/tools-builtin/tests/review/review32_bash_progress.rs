//! Review 32 (`toolwright serve`): Bash reported its progress only when output came, at
//! most every 500 ms, so output just before a quiet stretch (`echo step-2; sleep 5`) was
//! not reported until the command ended: an MCP client's last line stayed on the line
//! before for the whole build step. Now the report follows within 500 ms whatever comes
//! next, and a report is only sent when there is more output than the last one said.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tool_core::{ProgressSender, Tool, ToolUseContext};
use tools_builtin::Bash;

/// Runs `command` with Bash, keeping every progress report it sent.
async fn reports_of(command: &str) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolUseContext::new(dir.path());
    let reports = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let reports = Arc::clone(&reports);
        Arc::new(move |p: tool_core::ToolProgress| reports.lock().unwrap().push(p.data))
    };
    let tool = Bash::default();
    let input = tool.parse_input(json!({ "command": command })).unwrap();
    tool.call(input, ctx, ProgressSender::new("toolu_1", sink))
        .await
        .unwrap();
    reports.lock().unwrap().clone()
}

#[tokio::test]
async fn output_before_a_quiet_stretch_is_reported_before_the_command_ends() {
    let reports =
        reports_of("sleep 0.7; echo first; sleep 0.2; echo building-step-2; sleep 3; echo done")
            .await;
    let before_the_end: Vec<&Value> = reports
        .iter()
        .filter(|r| !r["output"].as_str().unwrap_or_default().contains("done"))
        .collect();
    assert!(
        before_the_end.iter().any(|r| r["output"]
            .as_str()
            .unwrap_or_default()
            .contains("building-step-2")),
        "the second line was reported only with the end: {reports:?}"
    );
    // Each report says more than the one before it.
    let totals: Vec<u64> = reports
        .iter()
        .map(|r| r["totalBytes"].as_u64().unwrap())
        .collect();
    assert!(
        totals.windows(2).all(|w| w[0] < w[1]),
        "reports without new output: {totals:?}"
    );
}

/// A command that prints nothing sends no report (there is nothing to say, and a report
/// must say more than the last one).
#[tokio::test]
async fn a_silent_command_sends_no_report() {
    let reports = reports_of("sleep 1.2").await;
    assert_eq!(reports, Vec::<Value>::new());
}
