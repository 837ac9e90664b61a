//! WebSearch, review 39: the tool was in no build. It searches through the host's backend
//! (a recording one here), refuses what Claude Code refuses, hands the model Claude Code's
//! text, stops at the session's cap, and says so when the session has no backend.

use crate::common;

use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tool_core::{Tool, ToolUseContext, async_trait};
use tools_builtin::WebSearch;
use tools_builtin::web_search::{
    MAX_SEARCHES_ENV, WebSearchBackend, WebSearchBackendHook, WebSearchHit, WebSearchResult,
};

/// A search the backend was asked for: query, allowed domains, blocked domains.
type Asked = (String, Vec<String>, Vec<String>);

/// A backend that records what it is asked and answers with `results`.
struct Recording {
    asked: Mutex<Vec<Asked>>,
    results: Vec<WebSearchResult>,
}

#[async_trait]
impl WebSearchBackend for Recording {
    async fn search(
        &self,
        query: &str,
        allowed_domains: &[String],
        blocked_domains: &[String],
    ) -> Result<Vec<WebSearchResult>, String> {
        self.asked.lock().unwrap().push((
            query.to_owned(),
            allowed_domains.to_vec(),
            blocked_domains.to_vec(),
        ));
        Ok(self.results.clone())
    }
}

/// A context whose app state holds a recording backend answering `results`.
fn with_backend(
    results: Vec<WebSearchResult>,
) -> (tempfile::TempDir, ToolUseContext, Arc<Recording>) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = common::ctx(dir.path());
    let backend = Arc::new(Recording {
        asked: Mutex::default(),
        results,
    });
    ctx.app_state().set(WebSearchBackendHook(
        Arc::clone(&backend) as Arc<dyn WebSearchBackend>
    ));
    (dir, ctx, backend)
}

fn hit(title: &str, url: &str) -> WebSearchHit {
    WebSearchHit {
        title: title.into(),
        url: url.into(),
    }
}

/// Its flags are Claude Code's: concurrency-safe, read-only, deferred, open-world, not
/// destructive, 100,000 characters; no rule content (bare `WebSearch` rules).
#[test]
fn flags_are_claude_codes() {
    let input = json!({"query": "rust release"});
    assert_eq!(WebSearch.name(), "WebSearch");
    assert!(WebSearch.is_concurrency_safe(&input));
    assert!(WebSearch.is_read_only(&input));
    assert!(!WebSearch.is_destructive(&input));
    assert!(WebSearch.is_open_world(&input));
    assert!(WebSearch.should_defer());
    assert_eq!(
        WebSearch.max_result_size(),
        tool_core::MaxResultSize::Chars(100_000)
    );
    assert!(WebSearch.permission_subject(&input).is_none());
}

/// A query under two characters, a key it does not know, and both domain lists are
/// refused before any search; both lists given with one of them empty are not.
#[tokio::test]
async fn bad_input_is_refused_before_any_search() {
    let (_dir, ctx, backend) = with_backend(vec![]);
    for input in [json!({"query": "a"}), json!({"query": ""}), json!({})] {
        let failure = common::fail(&WebSearch, &ctx, input.clone()).await;
        assert!(failure.text.contains("query"), "{input}: {}", failure.text);
    }
    let failure = common::fail(&WebSearch, &ctx, json!({"query": "rust", "count": 3})).await;
    assert!(
        failure
            .text
            .contains("An unexpected parameter `count` was provided"),
        "{}",
        failure.text
    );
    let both = json!({"query": "rust", "allowed_domains": ["a.com"], "blocked_domains": ["b.com"]});
    let failure = common::fail(&WebSearch, &ctx, both).await;
    assert_eq!(
        failure.text,
        "<tool_use_error>Error: Cannot specify both allowed_domains and blocked_domains in the \
         same request</tool_use_error>"
    );
    assert_eq!(failure.code, Some(2));
    assert!(backend.asked.lock().unwrap().is_empty());
    // An empty list beside the other is no conflict.
    let text = common::text(
        &WebSearch,
        &ctx,
        json!({"query": "rust", "allowed_domains": [], "blocked_domains": ["b.com"]}),
    )
    .await;
    assert!(
        text.starts_with("Web search results for query: \"rust\""),
        "{text}"
    );
    assert_eq!(
        backend.asked.lock().unwrap().as_slice(),
        [("rust".to_owned(), vec![], vec!["b.com".to_owned()])]
    );
}

/// The model reads Claude Code's text: the query, each text result, each search's links as
/// JSON (or "No links found."), and the reminder to cite them; the structured output is
/// `{query, results, durationSeconds}`.
#[tokio::test]
async fn the_result_text_is_claude_codes() {
    let results = vec![
        WebSearchResult::Text("Rust 1.90 is out.".into()),
        WebSearchResult::Links {
            tool_use_id: "srvtoolu_1".into(),
            content: vec![
                hit("Announcing Rust 1.90", "https://blog.rust-lang.org/1.90"),
                hit("Say \"hi\"", "https://example.com/q?a=1&b=2"),
            ],
        },
        WebSearchResult::Links {
            tool_use_id: "srvtoolu_2".into(),
            content: vec![],
        },
        WebSearchResult::Text("Web search error: max_uses_exceeded".into()),
    ];
    let (_dir, ctx, backend) = with_backend(results.clone());
    let input = json!({"query": "rust release", "allowed_domains": ["rust-lang.org"]});
    let out = common::run(&WebSearch, &ctx, input).await.unwrap();
    assert_eq!(
        out.content.joined_text(),
        "Web search results for query: \"rust release\"\n\n\
         Rust 1.90 is out.\n\n\
         Links: [{\"title\":\"Announcing Rust 1.90\",\"url\":\"https://blog.rust-lang.org/1.90\"},\
         {\"title\":\"Say \\\"hi\\\"\",\"url\":\"https://example.com/q?a=1&b=2\"}]\n\n\
         No links found.\n\n\
         Web search error: max_uses_exceeded\n\n\
         \nREMINDER: You MUST include the sources above in your response to the user using \
         markdown hyperlinks."
    );
    assert_eq!(
        backend.asked.lock().unwrap().as_slice(),
        [(
            "rust release".to_owned(),
            vec!["rust-lang.org".to_owned()],
            vec![]
        )]
    );
    let structured = &out.structured;
    assert_eq!(structured["query"], "rust release");
    assert_eq!(
        structured["results"],
        serde_json::to_value(&results).unwrap()
    );
    assert_eq!(
        structured["results"][1],
        json!({"tool_use_id": "srvtoolu_1", "content": [
            {"title": "Announcing Rust 1.90", "url": "https://blog.rust-lang.org/1.90"},
            {"title": "Say \"hi\"", "url": "https://example.com/q?a=1&b=2"}]})
    );
    assert!(structured["durationSeconds"].is_f64(), "{structured}");
    let mut keys: Vec<&String> = structured.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["durationSeconds", "query", "results"]);
}

/// Without a backend (`run`, `serve`, a host that set none) the call fails with an error
/// that says what is missing and how a host gives it.
#[tokio::test]
async fn without_a_backend_the_call_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = common::ctx(dir.path());
    let failure = common::fail(&WebSearch, &ctx, json!({"query": "rust release"})).await;
    assert_eq!(
        failure.text,
        "WebSearch needs a model to search the web with, and this session has none \
         (`toolwright agent` provides one; a host provides one by putting a \
         WebSearchBackendHook in the app state)"
    );
}

/// A session makes at most 200 calls (its app state counts them); the next is an error
/// that names the variable, and the backend is not asked. A new session starts again.
#[tokio::test]
async fn a_session_stops_at_its_cap() {
    if std::env::var_os(MAX_SEARCHES_ENV).is_some() {
        return;
    }
    let (_dir, ctx, backend) = with_backend(vec![WebSearchResult::Text("found".into())]);
    for _ in 0..200 {
        common::text(&WebSearch, &ctx, json!({"query": "rust"})).await;
    }
    let failure = common::fail(&WebSearch, &ctx, json!({"query": "rust"})).await;
    assert_eq!(
        failure.text,
        "This session has made the 200 web searches it may make \
         (CLAUDE_CODE_MAX_WEB_SEARCHES_PER_SESSION sets another number); no more are made"
    );
    assert_eq!(backend.asked.lock().unwrap().len(), 200);
    let (_dir, fresh, _) = with_backend(vec![]);
    common::text(&WebSearch, &fresh, json!({"query": "rust"})).await;
}

/// `CLAUDE_CODE_MAX_WEB_SEARCHES_PER_SESSION` sets another cap (run in a child process of
/// this binary, which sets it there only).
#[test]
fn the_cap_is_set_by_its_variable() {
    const CHILD: &str = "TOOLWRIGHT_REVIEW39_WEB_SEARCH_CHILD";
    if std::env::var_os(CHILD).is_some() {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async {
            let (_dir, ctx, backend) = with_backend(vec![]);
            common::text(&WebSearch, &ctx, json!({"query": "one"})).await;
            let failure = common::fail(&WebSearch, &ctx, json!({"query": "two"})).await;
            assert!(
                failure
                    .text
                    .starts_with("This session has made the 1 web searches"),
                "{}",
                failure.text
            );
            assert_eq!(backend.asked.lock().unwrap().len(), 1);
        });
        return;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "review39_web_search::the_cap_is_set_by_its_variable",
        ])
        .env(CHILD, "1")
        .env(MAX_SEARCHES_ENV, "1")
        .output()
        .unwrap();
    common::assert_rerun_passed(&out);
}
