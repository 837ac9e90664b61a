//! Guard tests for the profiles: the compiled tool list of this build is exactly the
//! checked-in list of its profile (`profiles/<profile>.txt`: one `name gate` line per entry,
//! in list order), so a profile that loses a tool, gains one or reorders them fails here.
//! `cargo xtask ci` runs the suite under `external` (default), `internal` (all features) and
//! `--no-default-features` (`bare`). Regenerate a list after a deliberate change with
//! `TOOLWRIGHT_BLESS=1 cargo test -p tool-registry [--features internal|--no-default-features] --test profiles`.
//!
//! Also: the runtime gate (`TOOLWRIGHT_ENABLE_TASKS`) swaps TodoWrite for the Task tools, and
//! expensive state is built lazily, once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;

use tool_registry::{BUILTIN_TOOLS, Gate, TASKS_ENV, all_base_tools_in};

/// The gated families of this crate's features.
const FAMILIES: &[(&str, bool)] = &[
    ("proactive", cfg!(feature = "proactive")),
    ("worktree", cfg!(feature = "worktree")),
    ("agent-triggers", cfg!(feature = "agent-triggers")),
    ("repl", cfg!(feature = "repl")),
    ("word-count", cfg!(feature = "word-count")),
];

/// The profile this build is, or `None` for a feature mix that is no profile.
fn profile() -> Option<&'static str> {
    let on = FAMILIES.iter().filter(|f| f.1).count();
    if cfg!(feature = "internal") {
        (on == FAMILIES.len()).then_some("internal")
    } else if on > 0 {
        None
    } else if cfg!(feature = "external") {
        Some("external")
    } else {
        Some("bare")
    }
}

fn listing() -> String {
    BUILTIN_TOOLS
        .iter()
        .map(|e| format!("{} {}\n", e.name, e.gate.describe()))
        .collect()
}

#[test]
fn the_tool_list_is_the_checked_in_list_of_the_profile() {
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let Some(profile) = profile() else {
        // In CI every run of this test is one of a profile (`cargo xtask ci`): one that
        // compares nothing would be a check that silently stopped checking.
        assert!(
            !in_ci,
            "this feature mix is not a profile: the tool list is compared with none"
        );
        println!("this feature mix is not a profile; nothing to compare");
        return;
    };
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("profiles")
        .join(format!("{profile}.txt"));
    let actual = listing();
    // Rewritten only when asked for (`TOOLWRIGHT_BLESS=1`), and never in CI, where a
    // variable left exported would turn the check into a copy.
    let bless = std::env::var("TOOLWRIGHT_BLESS").is_ok_and(|v| tool_core::env_truthy(&v));
    if bless && !in_ci {
        std::fs::write(&path, &actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    assert_eq!(
        actual,
        expected,
        "the {profile} profile's tools differ from {}; if the change is deliberate, run with \
         TOOLWRIGHT_BLESS=1 to rewrite the list",
        path.display()
    );
}

#[test]
fn every_gated_family_of_the_build_is_listed_and_no_other() {
    for (family, on) in FAMILIES {
        let listed = BUILTIN_TOOLS
            .iter()
            .any(|e| e.gate == Gate::Feature(family));
        assert_eq!(listed, *on, "family `{family}`: feature on = {on}");
    }
}

fn names_with(env: &[(&str, &str)]) -> Vec<String> {
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    all_base_tools_in(&|var| env.iter().find(|(k, _)| k == var).map(|(_, v)| v.clone()))
        .iter()
        .map(|t| t.name().to_owned())
        .collect()
}

#[test]
fn the_tasks_gate_swaps_todo_write_for_the_task_tools() {
    let tasks = ["TaskCreate", "TaskGet", "TaskUpdate", "TaskList"];
    for off in [vec![], vec![(TASKS_ENV, "0")], vec![(TASKS_ENV, "false")]] {
        let names = names_with(&off);
        assert!(names.contains(&"TodoWrite".to_owned()), "{off:?}");
        assert!(tasks.iter().all(|t| !names.contains(&(*t).to_owned())));
    }
    for on in ["1", "true", "yes"] {
        // Ours, or Claude Code's name for the same switch.
        for var in [TASKS_ENV, "CLAUDE_CODE_ENABLE_TASKS"] {
            let names = names_with(&[(var, on)]);
            assert!(!names.contains(&"TodoWrite".to_owned()), "{var}={on}");
            assert!(tasks.iter().all(|t| names.contains(&(*t).to_owned())));
        }
    }
    // Ours, when set, wins over Claude Code's (left on in a shell profile, say).
    let names = names_with(&[(TASKS_ENV, "0"), ("CLAUDE_CODE_ENABLE_TASKS", "1")]);
    assert!(names.contains(&"TodoWrite".to_owned()), "{names:?}");
    assert_eq!(
        tool_registry::gate_of("TaskCreate"),
        "env:TOOLWRIGHT_ENABLE_TASKS"
    );
    assert_eq!(
        tool_registry::gate_of("TodoWrite"),
        "env:!TOOLWRIGHT_ENABLE_TASKS"
    );
}

#[test]
fn the_tool_search_index_is_built_on_first_use_and_once() {
    use tools_builtin::tool_search::index_for;
    let tools: Vec<Arc<dyn tool_core::Tool>> = tool_registry::all_base_tools();
    let dir = tempfile::tempdir().unwrap();
    let ctx = tool_core::ToolUseContext::new(dir.path()).with_tools(tools);
    let first = index_for(&ctx);
    let again = index_for(&ctx.child());
    assert!(Arc::ptr_eq(&first, &again), "the index was built twice");
    // A different tool list is a different index.
    let fewer = ctx.clone().with_tools(tool_registry::tools(
        tool_registry::ToolFilter { simple: true },
        |_| false,
    ));
    assert!(!Arc::ptr_eq(&first, &index_for(&fewer)));
}
