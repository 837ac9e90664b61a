//! Fuzzes rule parsing and compilation: any string as a rule of every kind and source.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tool_core::{RuleSource, SourcedRule, ToolPermissionContext};
use tool_perms::bash::pattern::ShellPattern;
use tool_perms::domain::DomainPattern;
use tool_perms::rule::{parse_rule, parse_rule_lenient};
use tool_perms::{PathRoots, PermissionEngine};

fuzz_target!(|data: &[u8]| {
    let s = String::from_utf8_lossy(data);
    let _ = parse_rule(&s);
    let parsed = parse_rule_lenient(&s);
    if let Some(c) = &parsed.content {
        let p = ShellPattern::parse(c);
        let _ = p.matches(c);
        let _ = p.matches("git status");
        let _ = p.first_word();
        if let Ok(d) = DomainPattern::parse(c) {
            let _ = d.matches("a.example.com");
        }
    }
    let rule = |source| vec![SourcedRule { source, rule: s.to_string() }];
    let perm = ToolPermissionContext {
        allow: rule(RuleSource::UserSettings),
        deny: rule(RuleSource::ProjectSettings),
        ask: rule(RuleSource::FlagSettings),
        ..Default::default()
    };
    let _ = PermissionEngine::new_lenient(&perm, PathRoots::for_cwd("/tmp/fuzz-proj"));
});
