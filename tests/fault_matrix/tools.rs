//! Tools that break: a panic in `call`, and a context modifier that panics.

use serde_json::json;
use tool_exec::Ending;

use crate::rig::{Faulty, call, rig, text};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_panics() {
    let (tool, _) = Faulty::new();
    let rig = rig()
        .tool(tool)
        .settings(json!({"permissions": {"allow": ["Faulty"]}}))
        .build()
        .await;
    let results = rig
        .run(&[
            call("toolu_1", "Faulty", json!({"fault": "panic"})),
            call("toolu_2", "Faulty", json!({"fault": "ok"})),
        ])
        .await;
    assert!(results[0].outcome.result.is_error);
    assert_eq!(
        text(&results[0]),
        "<tool_use_error>Error calling tool (Faulty): the tool panicked: the tool broke on purpose</tool_use_error>"
    );
    assert_eq!(
        results[0].outcome.ending,
        Ending::Failed {
            class: "Panic".into()
        }
    );
    // The next call of the same turn runs normally.
    assert_eq!(text(&results[1]), "ok");
    rig.assert_survives().await;
    rig.assert_no_temp_files();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_modifier_panics() {
    let (tool, _) = Faulty::new();
    let rig = rig()
        .tool(tool)
        .settings(json!({"permissions": {"allow": ["Faulty"]}}))
        .build()
        .await;
    let results = rig
        .run(&[
            call("toolu_1", "Faulty", json!({"fault": "panic-modifier"})),
            call("toolu_2", "Faulty", json!({"fault": "cwd"})),
        ])
        .await;
    // The call's own result stands; the broken modifier is dropped, the context unchanged.
    assert!(!results[0].outcome.result.is_error);
    assert_eq!(text(&results[0]), "the call itself worked");
    assert_eq!(text(&results[1]), rig.root.display().to_string());
    // Modifiers still apply afterwards.
    let results = rig
        .run(&[
            call("toolu_3", "Faulty", json!({"fault": "modifier"})),
            call("toolu_4", "Faulty", json!({"fault": "cwd"})),
        ])
        .await;
    assert_eq!(
        text(&results[1]),
        rig.root.join("moved").display().to_string()
    );
    rig.assert_survives().await;
    rig.assert_no_temp_files();
}
