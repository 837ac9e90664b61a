//! ToolSearch over 10,000 generated tools (a third MCP, hints on a fifth, six in seven
//! deferred; the same generator as `tests/tool_search.rs`): the time of one query on a
//! built [`ToolSearchIndex`], for a spread of query forms, and the time to build the index.
//! Target: every query < 1 ms.
//!
//! `cargo bench -p tools-builtin --bench search` (or `cargo xtask bench search`).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tool_core::{
    MaxResultSize, McpToolInfo, ProgressSender, Tool, ToolError, ToolResult, ToolUseContext,
    async_trait,
};
use tools_builtin::tool_search::ToolSearchIndex;

/// The number of tools searched.
const TOOLS: usize = 10_000;

/// A tool that only describes itself.
struct Fake {
    name: String,
    prompt: String,
    hint: Option<String>,
    defer: bool,
}

#[async_trait]
impl Tool for Fake {
    fn name(&self) -> &str {
        &self.name
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn description(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.prompt)
    }
    fn search_hint(&self) -> Option<&str> {
        self.hint.as_deref()
    }
    fn should_defer(&self) -> bool {
        self.defer
    }
    fn mcp_info(&self) -> Option<McpToolInfo> {
        let rest = self.name.strip_prefix("mcp__")?;
        let (server, tool) = rest.split_once("__")?;
        Some(McpToolInfo {
            server_name: server.to_owned(),
            tool_name: tool.to_owned(),
            source: None,
        })
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(1000)
    }
    async fn call(
        &self,
        _input: Value,
        _ctx: ToolUseContext,
        _p: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::text("ok"))
    }
}

/// A deterministic generator (a 64-bit LCG).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as usize
    }
    fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str {
        words[self.next() % words.len()]
    }
}

const VOCAB: &[&str] = &[
    "read", "write", "file", "issue", "create", "list", "send", "message", "channel", "slack",
    "github", "repo", "query", "database", "sql", "table", "user", "account", "deploy", "build",
    "test", "log", "metric", "alert", "page", "search", "index", "fetch", "url", "image", "note",
    "notebook", "calendar", "event", "mail", "draft", "delete", "update", "c++", "v2.0", "k8s",
    "pod",
];

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
        .unwrap_or_default()
}

fn synthetic(n: usize) -> Vec<Arc<dyn Tool>> {
    let mut rng = Lcg(7);
    (0..n)
        .map(|i| {
            let desc: Vec<&str> = (0..12).map(|_| rng.pick(VOCAB)).collect();
            let prompt = format!("Tool {i}: {}.", desc.join(" "));
            let a = rng.pick(VOCAB).replace(['+', '.'], "");
            let b = rng.pick(VOCAB).replace(['+', '.'], "");
            let name = if i % 3 == 0 {
                format!("mcp__srv{}__{a}_{b}_{i}", i % 50)
            } else {
                format!("{}{}{i}", capitalised(&a), capitalised(&b))
            };
            let hint = (i % 5 == 0).then(|| format!("{} {}", rng.pick(VOCAB), rng.pick(VOCAB)));
            Arc::new(Fake {
                name,
                prompt,
                hint,
                defer: i % 7 != 0,
            }) as Arc<dyn Tool>
        })
        .collect()
}

/// Query forms a model sends: keywords, required terms, a server prefix, a selection.
const QUERIES: &[&str] = &[
    "slack message",
    "+github issue create",
    "database query sql table",
    "notebook",
    "+k8s +pod logs",
    "mcp__srv3",
    "select:ReadWrite1,mcp__srv0__x",
    "deploy",
];

fn bench(c: &mut Criterion) {
    let tools = synthetic(TOOLS);
    let index = ToolSearchIndex::build(&tools);
    assert!(index.deferred_count() > TOOLS / 2);
    assert!(!index.search("slack message", 5).is_empty());

    let mut g = c.benchmark_group("ToolSearch 10000 tools");
    g.warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(1));
    for q in QUERIES {
        g.bench_function(format!("query {q}"), |b| {
            b.iter(|| index.search(std::hint::black_box(q), 5));
        });
    }
    g.sample_size(10).measurement_time(Duration::from_secs(3));
    g.bench_function("build index", |b| {
        b.iter(|| ToolSearchIndex::build(std::hint::black_box(&tools)));
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
