//! WebSearch: searches the web through a host-supplied backend and hands the model the
//! results as text with their links (Claude Code's `WebSearchTool`).
//!
//! - The search itself is the host's ([`WebSearchBackend`] in the app state, as
//!   [`WebSearchBackendHook`]): Claude Code asks its model to run Anthropic's `web_search`
//!   server tool, which `toolwright agent` does too. Without one the call fails with an
//!   error that says so (`toolwright run`, `serve`, a library host that set none): there is
//!   nothing here that could search.
//! - `allowed_domains` and `blocked_domains` are handed to the backend; both given (and not
//!   empty) is refused, as Claude Code refuses it.
//! - At most [`MAX_SEARCHES_PER_SESSION`] calls per session (the app state's count), or what
//!   [`MAX_SEARCHES_ENV`] says; past it a call is an error that names the variable.
//! - The result text is Claude Code's: `Web search results for query: "…"`, each result
//!   (the backend's text, or `Links: […]` with the links as JSON), and a reminder to cite
//!   the sources.
//! - Permission rules are bare (`WebSearch`); without one the call asks.
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_core::{
    MaxResultSize, ProgressSender, ToolError, ToolResult, ToolResultContent, ToolUseContext,
    TypedTool, ValidationError, async_trait,
};

/// Web search calls a session may make, unless [`MAX_SEARCHES_ENV`] says otherwise.
pub const MAX_SEARCHES_PER_SESSION: usize = 200;
/// The environment variable that sets how many web search calls a session may make.
pub const MAX_SEARCHES_ENV: &str = "CLAUDE_CODE_MAX_WEB_SEARCHES_PER_SESSION";

/// Searches the web for the WebSearch tool. Put one in the app state as
/// [`WebSearchBackendHook`].
#[async_trait]
pub trait WebSearchBackend: Send + Sync {
    /// Searches for `query`, within `allowed_domains` only when that is not empty, and
    /// never in `blocked_domains`. The results in the order found, or what went wrong.
    async fn search(
        &self,
        query: &str,
        allowed_domains: &[String],
        blocked_domains: &[String],
    ) -> Result<Vec<WebSearchResult>, String>;
}

/// The app-state slot for the host's [`WebSearchBackend`].
#[derive(Clone)]
pub struct WebSearchBackendHook(pub Arc<dyn WebSearchBackend>);

impl std::fmt::Debug for WebSearchBackendHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebSearchBackendHook")
    }
}

/// One result of a search (Claude Code's shape): text the search model wrote (or an error
/// it met), or the links one search found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum WebSearchResult {
    /// Text.
    Text(String),
    /// The links of one search.
    Links {
        /// The id of the search that found them (the server tool's call).
        tool_use_id: String,
        /// The links.
        content: Vec<WebSearchHit>,
    },
}

/// One link a search found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebSearchHit {
    /// The page's title.
    pub title: String,
    /// The page's URL.
    pub url: String,
}

/// Input of the WebSearch tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WebSearchInput {
    /// The search query to use
    #[schemars(length(min = 2))]
    pub query: String,
    /// Only include search results from these domains
    pub allowed_domains: Option<Vec<String>>,
    /// Never include search results from these domains
    pub blocked_domains: Option<Vec<String>>,
}

/// Output of the WebSearch tool (Claude Code's shape).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebSearchOutput {
    /// The query searched for.
    pub query: String,
    /// The results, in order.
    pub results: Vec<WebSearchResult>,
    /// Time taken, in seconds.
    pub duration_seconds: f64,
}

/// The WebSearch tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct WebSearch;

/// The app state's count of the session's web search calls.
#[derive(Debug, Default)]
struct SearchesMade(usize);

/// The session's cap: [`MAX_SEARCHES_ENV`] when it is a whole number, else
/// [`MAX_SEARCHES_PER_SESSION`].
fn session_cap() -> usize {
    std::env::var(MAX_SEARCHES_ENV)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(MAX_SEARCHES_PER_SESSION)
}

/// What the model reads (Claude Code's `mapToolResultToToolResultBlockParam`).
fn result_text(output: &WebSearchOutput) -> String {
    let mut text = format!("Web search results for query: \"{}\"\n\n", output.query);
    for result in &output.results {
        match result {
            WebSearchResult::Text(t) => {
                text.push_str(t);
                text.push_str("\n\n");
            }
            WebSearchResult::Links { content, .. } if !content.is_empty() => {
                let links = serde_json::to_string(content).unwrap_or_default();
                text.push_str(&format!("Links: {links}\n\n"));
            }
            WebSearchResult::Links { .. } => text.push_str("No links found.\n\n"),
        }
    }
    text.push_str(
        "\nREMINDER: You MUST include the sources above in your response to the user using \
         markdown hyperlinks.",
    );
    text
}

#[async_trait]
impl TypedTool for WebSearch {
    type Input = WebSearchInput;
    type Output = WebSearchOutput;
    const NAME: &'static str = "WebSearch";

    fn description(&self) -> Cow<'_, str> {
        "Searches the web and returns results with links, for information beyond the model's \
         knowledge cutoff"
            .into()
    }

    fn prompt(&self) -> Cow<'_, str> {
        "- Allows Claude to search the web and use the results to inform responses\n\
- Provides up-to-date information for current events and recent data\n\
- Returns search result information formatted as search result blocks, including links as markdown hyperlinks\n\
- Use this tool for accessing information beyond Claude's knowledge cutoff\n\
- Searches are performed automatically within a single API call\n\n\
CRITICAL REQUIREMENT - You MUST follow this:\n  \
- After answering the user's question, you MUST include a \"Sources:\" section at the end of your response\n  \
- In the Sources section, list all relevant URLs from the search results as markdown hyperlinks: [Title](URL)\n  \
- This is MANDATORY - never skip including sources in your response\n  \
- Example format:\n\n    \
[Your answer here]\n\n    \
Sources:\n    \
- [Source Title 1](https://example.com/1)\n    \
- [Source Title 2](https://example.com/2)\n\n\
Usage notes:\n  \
- Domain filtering is supported to include or block specific websites\n  \
- Use the current year from the environment's date when searching for recent information, documentation, or current events"
            .into()
    }

    fn search_hint(&self) -> Option<&str> {
        Some("search the web for current information")
    }

    fn should_defer(&self) -> bool {
        true
    }

    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }

    fn is_concurrency_safe(&self, _input: &WebSearchInput) -> bool {
        true
    }

    fn is_read_only(&self, _input: &WebSearchInput) -> bool {
        true
    }

    fn is_open_world(&self, _input: &WebSearchInput) -> bool {
        true
    }

    async fn validate_input(
        &self,
        input: &WebSearchInput,
        _ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        if input.query.is_empty() {
            return Err(ValidationError::with_code("Error: Missing query", 1));
        }
        let given = |list: &Option<Vec<String>>| list.as_ref().is_some_and(|l| !l.is_empty());
        if given(&input.allowed_domains) && given(&input.blocked_domains) {
            return Err(ValidationError::with_code(
                "Error: Cannot specify both allowed_domains and blocked_domains in the same request",
                2,
            ));
        }
        Ok(())
    }

    async fn call(
        &self,
        input: WebSearchInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<WebSearchOutput>, ToolError> {
        let started = Instant::now();
        let Some(WebSearchBackendHook(backend)) = ctx.app_state().get::<WebSearchBackendHook>()
        else {
            return Err(ToolError::msg(
                "WebSearch needs a model to search the web with, and this session has none \
                 (`toolwright agent` provides one; a host provides one by putting a \
                 WebSearchBackendHook in the app state)",
            ));
        };
        // Counted before the search, so that calls running side by side cannot together
        // pass the cap.
        let cap = session_cap();
        let within = ctx.app_state().update(|made: &mut SearchesMade| {
            let within = made.0 < cap;
            if within {
                made.0 += 1;
            }
            within
        });
        if !within {
            return Err(ToolError::msg(format!(
                "This session has made the {cap} web searches it may make \
                 ({MAX_SEARCHES_ENV} sets another number); no more are made"
            )));
        }
        let allowed = input.allowed_domains.unwrap_or_default();
        let blocked = input.blocked_domains.unwrap_or_default();
        // A search that stalls does not hold a cancelled call.
        let found = tokio::select! {
            found = backend.search(&input.query, &allowed, &blocked) => found,
            () = ctx.cancellation().cancelled() => return Err(ToolError::Cancelled(None)),
        };
        let results = found.map_err(|e| ToolError::msg(format!("Web search failed: {e}")))?;
        Ok(ToolResult::new(WebSearchOutput {
            query: input.query,
            results,
            duration_seconds: started.elapsed().as_secs_f64(),
        }))
    }

    fn to_content(&self, output: &WebSearchOutput) -> ToolResultContent {
        ToolResultContent::Text(result_text(output))
    }
}
