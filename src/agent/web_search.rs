//! WebSearch's backend, as Claude Code searches: the run's model is asked, with the system
//! prompt [`SYSTEM_PROMPT`] and `Perform a web search for the query: …`, to use the
//! Messages API's `web_search` server tool (`web_search_20250305`, at most
//! [`MAX_SEARCHES_PER_CALL`] searches, the call's domain lists passed on); its answer's
//! blocks become the tool's results ([`results_from`]): its text, the links each search
//! found, and `Web search error: CODE` for a search that failed.
//!
//! The request is not streamed: the run's streaming client reads text and tool calls only,
//! and the search results are whole blocks the answer holds. It goes to the run's API (its
//! base URL, key or token, `ANTHROPIC_CUSTOM_HEADERS` and retries, [`ClientConfig`]), and
//! its tokens and its searches (each billed [`WEB_SEARCH_USD`](super::WEB_SEARCH_USD)) count
//! in the run's [`Spend`] (`--max-budget-usd` sees them). Once that spend has reached its
//! limit no search is made: the call fails with the reason.

use std::time::Duration;

use futures::StreamExt as _;
use serde_json::{Value, json};
use tool_core::async_trait;
use tools_builtin::web_search::{WebSearchBackend, WebSearchHit, WebSearchResult};

use super::client::{
    AgentError, ClientConfig, SilenceLimit, http_client, read_timeout, retry_after, retry_delay,
    retryable,
};
use super::{RequestBy, Spend, TokenUsage};

/// The search model's system prompt (Claude Code's).
pub const SYSTEM_PROMPT: &str = "You are an assistant for performing a web search tool use";

/// The most searches the server tool makes for one call (Claude Code's `max_uses`).
pub const MAX_SEARCHES_PER_CALL: u32 = 8;

/// The most the search model may answer, in tokens (a request that is not streamed must
/// stay well within the API's time for one).
const MAX_ANSWER_TOKENS: u32 = 8192;

/// The largest answer read: the search results' blocks carry their pages' encrypted
/// content, a few kilobytes each.
const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;

/// The most of an error answer said.
const MAX_ERROR_CHARS: usize = 2000;

/// Searches the web with the run's model and the API's `web_search` server tool.
pub struct WebSearcher {
    http: reqwest::Client,
    silence: SilenceLimit,
    config: ClientConfig,
    model: String,
    spend: Spend,
}

impl std::fmt::Debug for WebSearcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSearcher")
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl WebSearcher {
    /// A searcher asking `model` through the API `config` reaches, its tokens counted in
    /// `spend`.
    pub fn new(
        config: ClientConfig,
        model: impl Into<String>,
        spend: Spend,
    ) -> Result<Self, AgentError> {
        // The search runs on the server before any byte of the answer comes: the silence
        // allowed is the client's (`API_TIMEOUT_MS`, else ten minutes).
        let silence = read_timeout();
        Ok(Self {
            http: http_client(silence)?,
            silence,
            config,
            model: model.into(),
            spend,
        })
    }

    /// One attempt: the answer's body, or the failure and whether to retry it (with the
    /// wait the server asked for).
    async fn attempt(&self, body: &Value) -> Result<Value, (String, bool, Option<Duration>)> {
        // The custom headers last, each replacing the one of its name set before.
        let builder = self
            .config
            .messages_request(&self.http, "application/json", body)
            .headers(self.config.headers.clone());
        // A request never sent (a bad header) fails the same way again.
        let response = builder
            .send()
            .await
            .map_err(|e| (self.silence.describe(&e), !e.is_builder(), None))?;
        let status = response.status();
        let wait = retry_after(response.headers());
        let should_retry = response
            .headers()
            .get("x-should-retry")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        // An answer too large is no failure of the line: asked again, the searches would
        // be made (and billed) again for the same answer.
        let bytes = read_capped(response).await.map_err(|e| match e {
            ReadError::TooLarge => (
                format!(
                    "the API's answer is larger than {} MiB, more than a search's answer is read",
                    MAX_RESPONSE_BYTES / (1024 * 1024)
                ),
                false,
                None,
            ),
            ReadError::BrokeOff(e) => (
                format!("the answer broke off: {}", self.silence.describe(&e)),
                true,
                None,
            ),
        })?;
        if !status.is_success() {
            let code = status.as_u16();
            let retried = retryable(code, should_retry.as_deref());
            let text: String = String::from_utf8_lossy(&bytes)
                .chars()
                .take(MAX_ERROR_CHARS)
                .collect();
            return Err((format!("the API answered {code}: {text}"), retried, wait));
        }
        serde_json::from_slice(&bytes).map_err(|e| {
            let text: String = String::from_utf8_lossy(&bytes).chars().take(200).collect();
            (
                format!("the API's answer is not a message ({e}): {text}"),
                false,
                None,
            )
        })
    }
}

/// Why an answer's body was not read whole.
enum ReadError {
    /// It is larger than [`MAX_RESPONSE_BYTES`].
    TooLarge,
    /// Reading it failed (the connection broke, or went silent).
    BrokeOff(reqwest::Error),
}

/// The body of `response`, up to [`MAX_RESPONSE_BYTES`] (more is an error).
async fn read_capped(response: reqwest::Response) -> Result<Vec<u8>, ReadError> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(ReadError::BrokeOff)?;
        if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
            return Err(ReadError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The request for a search of `query` with `model` (Claude Code's).
pub fn request_body(
    model: &str,
    query: &str,
    allowed_domains: &[String],
    blocked_domains: &[String],
) -> Value {
    let mut tool = json!({
        "type": "web_search_20250305",
        "name": "web_search",
        "max_uses": MAX_SEARCHES_PER_CALL,
    });
    if !allowed_domains.is_empty() {
        tool["allowed_domains"] = json!(allowed_domains);
    }
    if !blocked_domains.is_empty() {
        tool["blocked_domains"] = json!(blocked_domains);
    }
    json!({
        "model": model,
        "max_tokens": MAX_ANSWER_TOKENS,
        "system": SYSTEM_PROMPT,
        "messages": [{
            "role": "user",
            "content": format!("Perform a web search for the query: {query}"),
        }],
        "tools": [tool],
    })
}

/// The results of an answer's content blocks, in order, as Claude Code reads them: the text
/// blocks between two searches joined (and trimmed; nothing for white space only), each
/// `web_search_tool_result` the links it found (`{tool_use_id, content: [{title, url}]}`),
/// or `Web search error: CODE` when its content is an error. The server tool's calls
/// (`server_tool_use`) and other blocks are not results.
pub fn results_from(blocks: &[Value]) -> Vec<WebSearchResult> {
    fn flush(text: &mut String, results: &mut Vec<WebSearchResult>) {
        let trimmed = text.trim();
        if !trimmed.is_empty() {
            results.push(WebSearchResult::Text(trimmed.to_owned()));
        }
        text.clear();
    }
    let field = |value: &Value, key: &str| value[key].as_str().unwrap_or_default().to_owned();
    let mut results = Vec::new();
    let mut text = String::new();
    for block in blocks {
        if block["type"] == "text" {
            text.push_str(block["text"].as_str().unwrap_or_default());
            continue;
        }
        flush(&mut text, &mut results);
        if block["type"] != "web_search_tool_result" {
            continue;
        }
        let content = &block["content"];
        match content.as_array() {
            Some(hits) => results.push(WebSearchResult::Links {
                tool_use_id: field(block, "tool_use_id"),
                content: hits
                    .iter()
                    .map(|hit| WebSearchHit {
                        title: field(hit, "title"),
                        url: field(hit, "url"),
                    })
                    .collect(),
            }),
            None => {
                let code = content["error_code"].as_str().unwrap_or("unknown");
                results.push(WebSearchResult::Text(format!("Web search error: {code}")));
            }
        }
    }
    flush(&mut text, &mut results);
    results
}

/// The usage an answer reports: its tokens, and how many searches the server tool made
/// (`usage.server_tool_use.web_search_requests`, billed besides the tokens).
fn usage_of(answer: &Value) -> (TokenUsage, u64) {
    let usage = &answer["usage"];
    let n = |key: &str| usage[key].as_u64().unwrap_or_default();
    let tokens = TokenUsage {
        input_tokens: n("input_tokens"),
        output_tokens: n("output_tokens"),
        cache_creation_input_tokens: n("cache_creation_input_tokens"),
        cache_read_input_tokens: n("cache_read_input_tokens"),
    };
    let searches = usage["server_tool_use"]["web_search_requests"]
        .as_u64()
        .unwrap_or_default();
    (tokens, searches)
}

#[async_trait]
impl WebSearchBackend for WebSearcher {
    async fn search(
        &self,
        query: &str,
        allowed_domains: &[String],
        blocked_domains: &[String],
    ) -> Result<Vec<WebSearchResult>, String> {
        let body = request_body(&self.model, query, allowed_domains, blocked_domains);
        let attempts = self.config.attempts.max(1);
        let mut attempt = 1;
        loop {
            // Over the run's budget no request is sent, nor retried.
            if let Some(limit) = self.spend.limit_reached() {
                return Err(format!("the spending limit of ${limit} was reached"));
            }
            self.spend.count_request(RequestBy::WebSearch);
            match self.attempt(&body).await {
                Ok(answer) => {
                    let (tokens, searches) = usage_of(&answer);
                    self.spend.add(&self.model, &tokens);
                    self.spend.add_web_searches(searches);
                    let blocks = answer["content"].as_array().cloned().unwrap_or_default();
                    return Ok(results_from(&blocks));
                }
                Err((why, retried, asked)) if retried && attempt < attempts => {
                    // The client's wait: doubled per attempt, with its jitter.
                    let delay = retry_delay(self.config.backoff, attempt, asked);
                    tracing::warn!(
                        "web search: {why}; retrying in {:.1} s (attempt {} of {attempts})",
                        delay.as_secs_f64(),
                        attempt + 1
                    );
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
                Err((why, _, _)) => return Err(why),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_is_claude_codes() {
        let body = request_body("m", "rust release", &["rust-lang.org".into()], &[]);
        assert_eq!(body["system"], SYSTEM_PROMPT);
        assert_eq!(
            body["messages"],
            json!([{"role": "user", "content": "Perform a web search for the query: rust release"}])
        );
        assert_eq!(
            body["tools"],
            json!([{"type": "web_search_20250305", "name": "web_search", "max_uses": 8,
                "allowed_domains": ["rust-lang.org"]}])
        );
        assert!(body.get("stream").is_none());
    }

    #[test]
    fn blocks_become_results_in_order() {
        let blocks = [
            json!({"type": "text", "text": "I'll search "}),
            json!({"type": "text", "text": "for that."}),
            json!({"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}}),
            json!({"type": "web_search_tool_result", "tool_use_id": "s1", "content": [
                {"type": "web_search_result", "title": "T", "url": "https://t.example/", "encrypted_content": "x"}]}),
            json!({"type": "server_tool_use", "id": "s2", "name": "web_search", "input": {"query": "q"}}),
            json!({"type": "web_search_tool_result", "tool_use_id": "s2",
                "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}}),
            json!({"type": "text", "text": "  \n"}),
            json!({"type": "text", "text": "Done.", "citations": []}),
        ];
        assert_eq!(
            results_from(&blocks),
            [
                WebSearchResult::Text("I'll search for that.".into()),
                WebSearchResult::Links {
                    tool_use_id: "s1".into(),
                    content: vec![WebSearchHit {
                        title: "T".into(),
                        url: "https://t.example/".into()
                    }]
                },
                WebSearchResult::Text("Web search error: max_uses_exceeded".into()),
                WebSearchResult::Text("Done.".into()),
            ]
        );
    }
}
