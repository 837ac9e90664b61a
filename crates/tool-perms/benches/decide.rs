//! Decision time: a 5-subcommand Bash command against 1,000 rules, a path against 1,000 path
//! rules, and the tree-sitter parse alone; a Bash command of 16,000 `ls` (48,000 characters),
//! whose analysis stops at `MAX_LISTED_COMMANDS`, and one of 3,000 under 10,000 characters,
//! analysed in full.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tool_core::{RuleSource, SourcedRule, ToolPermissionContext, ToolUseContext};
use tool_perms::bash::parse::analyze;
use tool_perms::probe::ProbeTool;
use tool_perms::{PathRoots, PermissionEngine, block_on};

const CMD: &str = "git status && npm test -- --watch | grep PASS; cargo build --release > /dev/null 2>&1 && ls -la src";

fn rules(n: usize, f: impl Fn(usize) -> String) -> Vec<SourcedRule> {
    (0..n)
        .map(|i| SourcedRule {
            source: RuleSource::ProjectSettings,
            rule: f(i),
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let proj = std::fs::canonicalize(tmp.path()).unwrap();
    std::fs::create_dir_all(proj.join("src")).unwrap();
    std::fs::write(proj.join("src/main.rs"), "fn main() {}").unwrap();

    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .unwrap();
    c.bench_function("tree-sitter parse only (5 subcommands)", |b| {
        b.iter(|| parser.parse(std::hint::black_box(CMD), None).unwrap())
    });
    c.bench_function("tree-sitter parse + split (5 subcommands)", |b| {
        b.iter(|| analyze(std::hint::black_box(CMD)))
    });

    let mut bash_ctx = ToolPermissionContext {
        allow: rules(900, |i| format!("Bash(tool{i} sub{i}:*)")),
        deny: rules(50, |i| format!("Bash(danger{i}:*)")),
        ask: rules(50, |i| format!("Bash(careful{i} *)")),
        ..Default::default()
    };
    bash_ctx.allow.push(SourcedRule {
        source: RuleSource::ProjectSettings,
        rule: "Bash(npm test:*)".into(),
    });
    bash_ctx.allow.push(SourcedRule {
        source: RuleSource::ProjectSettings,
        rule: "Bash(cargo build:*)".into(),
    });
    let engine = PermissionEngine::new(&bash_ctx, PathRoots::for_cwd(&proj)).unwrap();
    let ctx = ToolUseContext::new(&proj).with_permission(bash_ctx.clone());
    let bash = ProbeTool::new("Bash", &proj, None);
    let input = json!({"command": CMD});
    assert_eq!(
        block_on(engine.decide(&bash, &input, &ctx)).behavior(),
        "allow"
    );
    c.bench_function("decide Bash, 5 subcommands, 1002 rules", |b| {
        b.iter(|| block_on(engine.decide(&bash, std::hint::black_box(&input), &ctx)))
    });

    // Long commands: the work is bounded by the commands listed (few samples: each takes
    // long enough).
    let no_rules = ToolPermissionContext::default();
    let engine = PermissionEngine::new(&no_rules, PathRoots::for_cwd(&proj)).unwrap();
    let ctx = ToolUseContext::new(&proj).with_permission(no_rules.clone());
    let mut long = c.benchmark_group("long Bash commands");
    long.sample_size(10);
    for (n, expected) in [(16_000, "ask"), (3_000, "allow")] {
        let command = vec!["ls"; n].join(";");
        long.bench_function(format!("analyze, {n} x ls"), |b| {
            b.iter(|| analyze(std::hint::black_box(&command)))
        });
        let input = json!({"command": command});
        assert_eq!(
            block_on(engine.decide(&bash, &input, &ctx)).behavior(),
            expected
        );
        long.bench_function(format!("decide, {n} x ls"), |b| {
            b.iter(|| block_on(engine.decide(&bash, std::hint::black_box(&input), &ctx)))
        });
    }
    long.finish();

    let path_ctx = ToolPermissionContext {
        allow: rules(700, |i| format!("Edit(src/module{i}/**)")),
        deny: rules(200, |i| format!("Read(**/secret{i}.*)")),
        ask: rules(100, |i| format!("Edit(//etc/app{i}/**)")),
        ..Default::default()
    };
    let engine = PermissionEngine::new(&path_ctx, PathRoots::for_cwd(&proj)).unwrap();
    let ctx = ToolUseContext::new(&proj).with_permission(path_ctx.clone());
    let edit = ProbeTool::new("Edit", &proj, None);
    let input = json!({"file_path": proj.join("src/module500/lib.rs")});
    assert_eq!(
        block_on(engine.decide(&edit, &input, &ctx)).behavior(),
        "allow"
    );
    c.bench_function("decide Edit path, 1000 path rules", |b| {
        b.iter(|| block_on(engine.decide(&edit, std::hint::black_box(&input), &ctx)))
    });
    c.bench_function("build engine, 1000 path rules", |b| {
        b.iter(|| PermissionEngine::new(&path_ctx, PathRoots::for_cwd(&proj)).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
