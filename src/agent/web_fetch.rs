//! WebFetch's prompt applied by a small model, as Claude Code applies it: the page's
//! Markdown and the model's question go to Haiku (or `ANTHROPIC_DEFAULT_HAIKU_MODEL`), and
//! its answer is the tool's result. Without it the tool hands back the page itself (40,000
//! characters of it), which fills the conversation with what the question did not need.
//!
//! The request goes through the run's own [`ModelClient`] (its key, base URL and retries),
//! and its tokens count in the run's [`Spend`] (`--max-budget-usd` sees them). Once that
//! spend has reached its limit ([`Spend::limit_reached`]) the model is not asked: the
//! request is refused with the reason, and the tool hands back the page.

use std::sync::Arc;

use futures::StreamExt as _;
use serde_json::json;
use tool_core::async_trait;
use tool_exec::StreamEvent;
use tools_builtin::web_fetch::WebFetchModel;

use super::client::{ModelClient, ModelRequest};
use super::{Spend, TokenUsage};

/// The most the small model may answer, in tokens.
const MAX_ANSWER_TOKENS: u32 = 4096;

/// Applies WebFetch prompts with a small model over the run's client.
pub struct PageReader {
    client: Arc<dyn ModelClient>,
    model: String,
    spend: Spend,
}

impl std::fmt::Debug for PageReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageReader")
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl PageReader {
    /// A reader asking `model` through `client`, its tokens counted in `spend`.
    pub fn new(client: Arc<dyn ModelClient>, model: impl Into<String>, spend: Spend) -> Self {
        Self {
            client,
            model: model.into(),
            spend,
        }
    }
}

/// What the small model is asked: the page, the question, and Claude Code's guidance on
/// quoting (short quotes, marked as such).
fn request_text(prompt: &str, markdown: &str) -> String {
    format!(
        "Web page content:\n---\n{markdown}\n---\n\n{prompt}\n\nProvide a concise response \
         based only on the content above. In your response:\n - Enforce a strict 125-character \
         maximum for quotes from any source document. Open Source Software is ok as long as \
         we respect the license.\n - Use quotation marks for exact language from articles; \
         any language outside of the quotation should never be word-for-word the same.\n - \
         You are not a lawyer and never comment on the legality of your own prompts and \
         responses.\n - Never produce or reproduce exact song lyrics."
    )
}

#[async_trait]
impl WebFetchModel for PageReader {
    async fn apply(&self, _url: &str, prompt: &str, markdown: &str) -> Result<String, String> {
        // Every attempt's tokens count as they are reported, whether or not it answers.
        let meter = self.spend.meter(&self.model);
        let request = ModelRequest {
            model: self.model.clone(),
            max_tokens: MAX_ANSWER_TOKENS,
            messages: vec![json!({"role": "user", "content": request_text(prompt, markdown)})],
            stop_retrying: Some(self.spend.retry_stop()),
            usage: Some(meter.clone()),
            ..ModelRequest::default()
        };
        // Over the run's budget no request is sent (WebFetch then hands back the page).
        if let Some(limit) = self.spend.limit_reached() {
            return Err(format!("the spending limit of ${limit} was reached"));
        }
        self.spend.count_request(super::RequestBy::WebFetch);
        let mut events = self
            .client
            .stream(&request)
            .await
            .map_err(|e| e.to_string())?;
        let mut answer = String::new();
        let mut outcome = Err("the model's answer was cut off".to_owned());
        while let Some(event) = events.next().await {
            match event {
                Ok(StreamEvent::Text(text)) => answer.push_str(&text),
                // The answer's text blocks apart, as the agent loop's final text joins them.
                Ok(StreamEvent::NextTextBlock) if !answer.trim().is_empty() => {
                    answer.push_str(super::TEXT_BLOCK_SEPARATOR);
                }
                // The response's usage so far: the last one reported is what it cost,
                // counted at once (a request made meanwhile sees it), whether or not the
                // model answers.
                Ok(event @ StreamEvent::Usage { .. }) => {
                    if let Some(now) = TokenUsage::reported(&event) {
                        meter.report(&now);
                    }
                }
                Ok(StreamEvent::MessageStop) => {
                    outcome = if answer.trim().is_empty() {
                        Err("the model gave no answer".to_owned())
                    } else {
                        Ok(())
                    };
                    break;
                }
                Ok(
                    StreamEvent::MessageStart { .. }
                    | StreamEvent::NextTextBlock
                    | StreamEvent::StopReason(_)
                    | StreamEvent::ToolUse(_),
                ) => {}
                Err(e) => {
                    outcome = Err(e.to_string());
                    break;
                }
            }
        }
        outcome.map(|()| answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_holds_the_page_and_the_question() {
        let text = request_text("What is the version?", "# Release 1.2");
        assert!(
            text.starts_with(
                "Web page content:\n---\n# Release 1.2\n---\n\nWhat is the version?\n"
            )
        );
        assert!(text.contains("125-character maximum"));
    }
}
