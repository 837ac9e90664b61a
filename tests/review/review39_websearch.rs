//! WebSearch, review 39: the tool was in no build. `toolwright tools` lists it; `run`, which
//! has no model to search with, says so; and `toolwright agent` searches through the
//! Messages API's `web_search` server tool (the local stand-in, `support/model_api.rs`), as
//! Claude Code does, and hands the main model Claude Code's result text.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::binary;
use crate::model_api::*;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The binary in `cwd` with `args`, no user settings (`CLAUDE_CONFIG_DIR` an empty place).
fn toolwright(args: &[&str], cwd: &Path, stdin: Option<&str>) -> Output {
    let mut cmd = binary::toolwright_command(args, cwd);
    cmd.env("CLAUDE_CONFIG_DIR", cwd.join(".no-user-config"))
        .env_remove("CLAUDE_CODE_SIMPLE")
        .env_remove("CLAUDE_CODE_MAX_WEB_SEARCHES_PER_SESSION");
    binary::output_with_stdin(cmd, stdin)
}

/// Every WebSearch call allowed.
fn allow_web_search() -> String {
    json!({"permissions": {"allow": ["WebSearch"]}}).to_string()
}

/// Found by review: no build had WebSearch (`tools` did not list it, and a recorded call
/// got "No such tool available"). It is listed, deferred, with Claude Code's input fields.
#[test]
fn tools_lists_web_search() {
    let dir = tempfile::tempdir().unwrap();
    let out = toolwright(&["tools", "--json", "--schemas"], dir.path(), None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tools = listed
        .as_array()
        .or_else(|| listed["tools"].as_array())
        .unwrap_or_else(|| panic!("{listed}"));
    let tool = tools
        .iter()
        .find(|t| t["name"] == "WebSearch")
        .unwrap_or_else(|| {
            let names: Vec<&Value> = tools.iter().map(|t| &t["name"]).collect();
            panic!("WebSearch is not listed: {names:?}")
        });
    let schema = tool
        .get("input_schema")
        .or_else(|| tool.get("inputSchema"))
        .unwrap_or_else(|| panic!("{tool}"));
    assert_eq!(schema["required"], json!(["query"]), "{schema}");
    assert_eq!(schema["properties"]["query"]["minLength"], 2, "{schema}");
    assert_eq!(schema["additionalProperties"], false, "{schema}");
}

/// `run` replays a recorded WebSearch call; it has no model to search with, and the call's
/// result says so (and how a host gives one) instead of "No such tool available". Without
/// an allow rule the call asks, and nobody can answer in `run`.
#[test]
fn run_says_it_has_no_model_to_search_with() {
    let dir = tempfile::tempdir().unwrap();
    let call = json!({"type": "tool_use", "id": "toolu_1", "name": "WebSearch",
        "input": {"query": "rust release", "allowed_domains": ["rust-lang.org"]}});
    let input = format!("{call}\n");
    let allow = allow_web_search();
    let out = toolwright(
        &["run", "--json", "--settings", &allow, "-"],
        dir.path(),
        Some(&input),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    let result = &message["content"][0];
    assert_eq!(result["tool_use_id"], "toolu_1", "{message}");
    assert_eq!(result["is_error"], true, "{message}");
    let said = result["content"].as_str().unwrap_or_default().to_owned();
    assert!(
        said.contains("WebSearch needs a model to search the web with, and this session has none")
            && said.contains("WebSearchBackendHook"),
        "{said}"
    );
    // Without the rule it asks, and `run` cannot ask.
    let out = toolwright(&["run", "--json", "-"], dir.path(), Some(&input));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    let said = message["content"][0]["content"].to_string();
    assert!(
        !said.contains("needs a model") && !said.contains("No such tool"),
        "{said}"
    );
    // Both domain lists: Claude Code's refusal, before anything else.
    let both = json!({"type": "tool_use", "id": "toolu_2", "name": "WebSearch",
        "input": {"query": "rust", "allowed_domains": ["a.com"], "blocked_domains": ["b.com"]}});
    let out = toolwright(
        &["run", "--json", "--settings", &allow, "-"],
        dir.path(),
        Some(&format!("{both}\n")),
    );
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        message["content"][0]["content"],
        "<tool_use_error>Error: Cannot specify both allowed_domains and blocked_domains in the \
         same request</tool_use_error>",
        "{message}"
    );
}

/// The search model's answer: text, the server tool's call, its results, an error result of
/// a second search, and more text (a non-streamed message, as the search request asks).
fn search_answer() -> String {
    json!({
        "id": "msg_search", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [
            {"type": "text", "text": "I'll search for the release."},
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
                "input": {"query": "rust release"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
                {"type": "web_search_result", "title": "Announcing Rust 1.90",
                    "url": "https://blog.rust-lang.org/1.90", "encrypted_content": "abc",
                    "page_age": "1 day"},
                {"type": "web_search_result", "title": "Rust releases",
                    "url": "https://releases.rs/", "encrypted_content": "def"}]},
            {"type": "server_tool_use", "id": "srvtoolu_2", "name": "web_search",
                "input": {"query": "rust 1.90"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_2", "content":
                {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}},
            {"type": "text", "text": "Rust 1.90 is the latest release.",
                "citations": [{"type": "web_search_result_location", "url": "https://blog.rust-lang.org/1.90",
                    "title": "Announcing Rust 1.90", "cited_text": "Rust 1.90"}]}
        ],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 50, "output_tokens": 40, "server_tool_use": {"web_search_requests": 1}}
    })
    .to_string()
}

/// The system prompt of the search request (Claude Code's).
const SEARCH_SYSTEM: &str = "You are an assistant for performing a web search tool use";

/// Whether `request` is WebSearch's search request.
fn is_search(request: &Request) -> bool {
    request.body["system"] == SEARCH_SYSTEM
}

/// `agent --json` asked "go" in `dir`, every WebSearch allowed: the model calls WebSearch with
/// `input`, then answers `last`; the search request is answered by `search`. What the run
/// printed and the requests the stand-in saw.
fn agent_searching(
    dir: &Path,
    input: Value,
    last: &'static str,
    search: impl Fn(&Request) -> Reply + Send + Sync + 'static,
) -> (Output, Seen) {
    let call = turn(None, &[("toolu_s", "WebSearch", input)]);
    let (api, seen) = serve(move |_, request| {
        if is_search(request) {
            search(request)
        } else if request.messages().len() == 1 {
            full(call.clone())
        } else {
            full(turn(Some(last), &[]))
        }
    });
    let allow = allow_web_search();
    let out = agent_command(&api, dir, &["--json", "--settings", &allow], "go")
        .env_remove("CLAUDE_CODE_MAX_WEB_SEARCHES_PER_SESSION")
        .output()
        .unwrap();
    (out, seen)
}

/// Found by review: the agent had no WebSearch. The model's call is searched as Claude Code
/// searches: the main model is asked, with Claude Code's system prompt and message, to use
/// the `web_search` server tool (the call's domain list passed on, at most 8 searches), and
/// its answer's blocks become the tool result the main model gets, exactly.
#[test]
fn agent_searches_with_the_web_search_server_tool() {
    let dir = tempfile::tempdir().unwrap();
    let (out, seen) = agent_searching(
        dir.path(),
        json!({"query": "rust release", "allowed_domains": ["rust-lang.org", "releases.rs"]}),
        "Rust 1.90 ([blog](https://blog.rust-lang.org/1.90))",
        |_| Reply::Status(200, search_answer()),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = seen.lock().unwrap();
    let systems: Vec<&Value> = seen.iter().map(|r| &r.body["system"]).collect();
    assert_eq!(seen.len(), 3, "{}", stderr(&out));
    assert_eq!(systems[1], SEARCH_SYSTEM, "{systems:?}");
    // The main loop offers WebSearch (deferred or not, by name).
    let main = &seen[0];
    assert!(
        main.tool_names().iter().any(|n| n == "WebSearch")
            || main.body.to_string().contains("WebSearch"),
        "{}",
        main.body
    );
    let search = &seen[1];
    let model = main.body["model"].clone();
    assert_eq!(
        search.body["model"], model,
        "the main loop's model searches"
    );
    assert!(
        search.body.get("stream").is_none_or(|s| s == false),
        "{}",
        search.body
    );
    assert_eq!(
        search.body["messages"],
        json!([{"role": "user", "content": "Perform a web search for the query: rust release"}])
    );
    assert_eq!(
        search.body["tools"],
        json!([{"type": "web_search_20250305", "name": "web_search", "max_uses": 8,
            "allowed_domains": ["rust-lang.org", "releases.rs"]}])
    );
    assert_eq!(search.header("x-api-key"), Some("test-key"));
    let last = &seen[2];
    let result = &results(&last.messages()[2])[0].1;
    assert_eq!(result["tool_use_id"], "toolu_s");
    assert!(
        result.get("is_error").is_none_or(|e| e == false),
        "{result}"
    );
    let links = json!([
        {"title": "Announcing Rust 1.90", "url": "https://blog.rust-lang.org/1.90"},
        {"title": "Rust releases", "url": "https://releases.rs/"}
    ]);
    assert_eq!(
        result["content"]
            .as_str()
            .unwrap_or_else(|| panic!("{result}")),
        format!(
            "Web search results for query: \"rust release\"\n\n\
             I'll search for the release.\n\n\
             Links: {links}\n\n\
             Web search error: max_uses_exceeded\n\n\
             Rust 1.90 is the latest release.\n\n\
             \nREMINDER: You MUST include the sources above in your response to the user \
             using markdown hyperlinks."
        )
    );
    // The search's tokens count in the run, and so does its search: the API bills each
    // (`usage.server_tool_use.web_search_requests`) at $10 per 1,000, as Claude Code counts
    // it (found by code review 39: the fee was missing from `cost_usd` and the budget).
    let summary = json_out(&out);
    let cost = summary["cost_usd"].as_f64().unwrap();
    let usage = &summary["usage"];
    #[expect(clippy::cast_precision_loss, reason = "small counts")]
    let own = (usage["input_tokens"].as_u64().unwrap() as f64 * 3.0
        + usage["output_tokens"].as_u64().unwrap() as f64 * 15.0)
        / 1e6;
    let search_tokens = (50.0 * 3.0 + 40.0 * 15.0) / 1e6;
    assert_eq!(model, "claude-sonnet-4-5", "the prices above are Sonnet's");
    assert!(
        (cost - (own + search_tokens + 0.01)).abs() < 1e-9,
        "{cost} is not {own} + {search_tokens} + the search's $0.01: {usage}"
    );
}

/// `serve` has no model to search with: its clients are not offered a WebSearch whose every
/// call would fail (it was listed once the tool was built). Its other tools are.
#[test]
fn serve_does_not_offer_web_search() {
    let dir = tempfile::tempdir().unwrap();
    let input = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    ]
    .iter()
    .map(|m| format!("{m}\n"))
    .collect::<String>();
    let out = toolwright(&["serve"], dir.path(), Some(&input));
    let listed: Value = text(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|answer| answer["id"] == 1)
        .unwrap_or_else(|| panic!("no tools/list answer: {}", text(&out.stderr)));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"WebFetch"), "{names:?}");
    assert!(!names.contains(&"WebSearch"), "{names:?}");
}

/// Found by code review 39: a search answer over 16 MiB was taken for one that broke off
/// (`the answer broke off: the answer is larger than 16777216 bytes`) and asked for again,
/// each time making (and paying for) the searches again. It is refused once, saying what it
/// is.
#[test]
fn a_search_answer_too_large_is_not_asked_for_again() {
    let dir = tempfile::tempdir().unwrap();
    let huge = format!("{{\"pad\": \"{}\"}}", "x".repeat(17 * 1024 * 1024));
    let (out, seen) = agent_searching(
        dir.path(),
        json!({"query": "rust release"}),
        "done",
        move |_| Reply::Status(200, huge.clone()),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = seen.lock().unwrap();
    let searches = seen.iter().filter(|r| is_search(r)).count();
    assert_eq!(
        searches,
        1,
        "the searches were made again: {}",
        stderr(&out)
    );
    let last = seen.last().unwrap();
    let result = &results(&last.messages()[2])[0].1;
    assert_eq!(result["is_error"], true, "{result}");
    let said = result["content"].to_string();
    assert!(
        said.contains("larger than 16 MiB") && !said.contains("broke off"),
        "{said}"
    );
}

/// WebSearch retries as the run's client does (code review 39 found a copy of the client's
/// retry code without its jitter; the client's own is called now): an overloaded answer is
/// asked again and the search goes on, a bad request is not asked again.
#[test]
fn a_search_is_retried_as_the_client_retries() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    for (first, searches, ok) in [(529, 2, true), (400, 1, false)] {
        let dir = tempfile::tempdir().unwrap();
        let made = AtomicUsize::new(0);
        let (out, seen) = agent_searching(
            dir.path(),
            json!({"query": "rust release"}),
            "done",
            move |_| {
                if made.fetch_add(1, Ordering::SeqCst) == 0 {
                    let error = json!({"type": "error", "error":
                        {"type": "overloaded_error", "message": "busy"}});
                    Reply::Status(first, error.to_string())
                } else {
                    Reply::Status(200, search_answer())
                }
            },
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let seen = seen.lock().unwrap();
        let made = seen.iter().filter(|r| is_search(r)).count();
        assert_eq!(made, searches, "{first}: {}", stderr(&out));
        let result = &results(&seen.last().unwrap().messages()[2])[0].1;
        let said = result["content"].to_string();
        if ok {
            assert!(said.contains("Announcing Rust 1.90"), "{said}");
        } else {
            assert_eq!(result["is_error"], true, "{result}");
            assert!(said.contains("the API answered 400"), "{said}");
        }
    }
}
