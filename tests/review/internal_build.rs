//! The root tests only the `internal` build has, beside review 30's (`review30_misc_cli`):
//! `cargo xtask ci` runs this module in that build (a guard test of xtask checks that every
//! root test naming the feature is one it runs). A unit test under `cfg(feature =
//! "internal")` in `src/` would never run there: such tests live here.
#![cfg(feature = "internal")]

use std::sync::Arc;

use tool_core::Tool;
use toolwright::agent::definitions::AgentDefinition;

/// A sub-agent never gets the worktree tools, even when its definition names them: the
/// worktree session belongs to the main thread.
#[test]
fn sub_agents_never_get_the_worktree_tools() {
    let parent: Vec<Arc<dyn Tool>> = vec![
        Arc::new(tools_builtin::Read),
        Arc::new(tools_builtin::EnterWorktree),
        Arc::new(tools_builtin::ExitWorktree),
    ];
    let mut wants = AgentDefinition::general_purpose();
    wants.tools = Some(vec![
        "Read".into(),
        "EnterWorktree".into(),
        "ExitWorktree".into(),
    ]);
    for definition in [AgentDefinition::general_purpose(), wants] {
        let names: Vec<String> = definition
            .select_tools(&parent)
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        assert_eq!(names, ["Read"]);
    }
}
