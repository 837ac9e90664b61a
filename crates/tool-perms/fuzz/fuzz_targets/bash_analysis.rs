//! Fuzzes the tree-sitter bash analysis and the Bash decision on arbitrary command text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use tool_core::{RuleSource, SourcedRule, ToolPermissionContext, ToolUseContext};
use tool_perms::bash::commands::{candidates, effective_words, is_read_only};
use tool_perms::bash::parse::analyze;
use tool_perms::probe::ProbeTool;
use tool_perms::{PathRoots, PermissionEngine, block_on};

fuzz_target!(|data: &[u8]| {
    let cmd = String::from_utf8_lossy(data);
    let analysis = analyze(&cmd);
    for c in &analysis.commands {
        let _ = candidates(c);
        if let Some(w) = effective_words(c) {
            let _ = is_read_only(w);
        }
    }
    let rules = |r: &[&str]| {
        r.iter().map(|r| SourcedRule { source: RuleSource::ProjectSettings, rule: (*r).to_owned() }).collect()
    };
    let perm = ToolPermissionContext {
        allow: rules(&["Bash(npm test:*)", "Bash(git *)", "Edit(src/**)"]),
        deny: rules(&["Bash(rm:*)", "Read(.env)"]),
        ask: rules(&["Bash(git push:*)"]),
        ..Default::default()
    };
    let cwd = std::env::temp_dir();
    let (engine, _) = PermissionEngine::new_lenient(&perm, PathRoots::for_cwd(&cwd));
    let ctx = ToolUseContext::new(&cwd).with_permission(perm);
    let bash = ProbeTool::new("Bash", &cwd, None);
    let _ = block_on(engine.decide(&bash, &json!({ "command": cmd }), &ctx));
});
