//! A small, real agent loop on the Anthropic Messages API.
//!
//! Each turn streams a response (`stream: true`); every tool_use block goes to the streaming
//! executor the moment it closes, and the next request carries exactly one tool_result per
//! tool_use, in order. The loop ends when the model stops asking for tools, after
//! `max_turns`, or when the spending limit is reached. Requests are retried with backoff on
//! 429, 529 and 5xx answers and on connection failures before the first byte; an `error`
//! event or a stream cut short mid-response ends the turn with a clear message (tools already
//! started still get their results).

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use tool_core::Tool;
use tool_exec::{
    AnthropicStream, ExecutorConfig, ExecutorEvent, StreamEvent, StreamingToolExecutor, ToolUse,
};

use crate::session::Session;

/// The Messages API version header.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Where and how to call the model.
#[derive(Debug, Clone)]
pub struct ModelConfig {
    /// `ANTHROPIC_BASE_URL` (default `https://api.anthropic.com`).
    pub base_url: String,
    /// `ANTHROPIC_API_KEY`.
    pub api_key: String,
    /// The model name.
    pub model: String,
    /// `max_tokens` of each request.
    pub max_tokens: u32,
    /// How many requests at most.
    pub max_turns: usize,
    /// Stop once the estimated spend reaches this many US dollars.
    pub max_budget_usd: Option<f64>,
    /// Attempts per request (first try included) on retryable failures.
    pub attempts: u32,
    /// The first retry's delay; each retry doubles it.
    pub backoff: Duration,
}

/// Why the loop stopped early or could not run.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The HTTP request failed for good.
    #[error("the model request failed: {0}")]
    Request(String),
    /// The API answered with an error status.
    #[error("the API answered {status}: {body}")]
    Api {
        /// HTTP status.
        status: u16,
        /// Response body.
        body: String,
    },
    /// The stream was malformed, cut short, or carried an `error` event.
    #[error("{0}")]
    Stream(String),
}

/// What one run of the loop produced.
#[derive(Debug, Default)]
pub struct AgentOutcome {
    /// The conversation, in the API's message format.
    pub messages: Vec<Value>,
    /// The model's final text.
    pub final_text: String,
    /// Requests made.
    pub turns: usize,
    /// Input and output tokens used.
    pub usage: (u64, u64),
    /// Why the loop stopped.
    pub stop: String,
}

/// The API's tool definition of a tool.
pub fn tool_definition(tool: &dyn Tool) -> Value {
    json!({"name": tool.name(), "description": tool.prompt(), "input_schema": tool.input_schema()})
}

/// A rough cost estimate in US dollars (Sonnet-class list prices per million tokens: $3 in,
/// $15 out); only used for the spending limit.
fn cost_usd(usage: (u64, u64)) -> f64 {
    #[expect(clippy::cast_precision_loss, reason = "an estimate")]
    let (input, output) = (usage.0 as f64, usage.1 as f64);
    input * 3.0 / 1e6 + output * 15.0 / 1e6
}

fn retryable(status: u16) -> bool {
    status == 429 || status == 529 || (500..600).contains(&status)
}

/// Sends one request, retrying retryable failures before the first byte of a response.
async fn send(
    client: &reqwest::Client,
    config: &ModelConfig,
    body: &Value,
) -> Result<reqwest::Response, AgentError> {
    let url = format!("{}/v1/messages", config.base_url.trim_end_matches('/'));
    let mut delay = config.backoff;
    let mut last = String::new();
    for attempt in 1..=config.attempts.max(1) {
        let result = client
            .post(&url)
            .header("x-api-key", &config.api_key)
            .header("anthropic-version", ANTHROPIC_VERSION)
            .header("content-type", "application/json")
            .json(body)
            .send()
            .await;
        match result {
            Ok(response) if response.status().is_success() => return Ok(response),
            Ok(response) => {
                let status = response.status().as_u16();
                let text = response.text().await.unwrap_or_default();
                if !retryable(status) || attempt == config.attempts.max(1) {
                    return Err(AgentError::Api { status, body: text });
                }
                last = format!("{status}: {text}");
            }
            Err(e) if attempt == config.attempts.max(1) => {
                return Err(AgentError::Request(e.to_string()));
            }
            Err(e) => last = e.to_string(),
        }
        tracing::warn!(attempt, error = %last, "model request failed; retrying");
        tokio::time::sleep(delay).await;
        delay *= 2;
    }
    Err(AgentError::Request(last))
}

/// Runs the loop for `prompt` in `session`. `on_text` receives the model's text as it
/// streams; `on_result` each tool result as it is handed out.
pub async fn run(
    session: &Session,
    config: &ModelConfig,
    prompt: &str,
    mut on_text: impl FnMut(&str),
    mut on_result: impl FnMut(&ToolUse, &tool_exec::CallOutcome),
) -> Result<AgentOutcome, AgentError> {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| AgentError::Request(e.to_string()))?;
    let tools: Vec<Value> = session
        .ctx
        .tools()
        .iter()
        .map(|t| tool_definition(t.as_ref()))
        .collect();
    let mut outcome = AgentOutcome {
        messages: vec![json!({"role": "user", "content": prompt})],
        ..Default::default()
    };
    let mut ctx = session.ctx.clone();
    loop {
        if outcome.turns >= config.max_turns {
            outcome.stop = format!("stopped after {} requests (max_turns)", config.max_turns);
            return Ok(outcome);
        }
        if let Some(limit) = config.max_budget_usd
            && cost_usd(outcome.usage) >= limit
        {
            outcome.stop = format!("stopped: the spending limit of ${limit:.2} was reached");
            return Ok(outcome);
        }
        let body = json!({
            "model": config.model,
            "max_tokens": config.max_tokens,
            "stream": true,
            "tools": tools,
            "messages": outcome.messages,
        });
        outcome.turns += 1;
        let response = send(&client, config, &body).await?;
        let mut executor = StreamingToolExecutor::new(
            session.pipeline.clone(),
            ctx.clone(),
            ExecutorConfig::from_env(),
        );
        let mut parser = AnthropicStream::new();
        let mut assistant: Vec<Value> = Vec::new();
        let mut text = String::new();
        let mut tool_uses = Vec::new();
        let mut stream_error = None;
        let mut bytes = response.bytes_stream();
        'read: while let Some(chunk) = bytes.next().await {
            let chunk = match chunk {
                Ok(c) => c,
                Err(e) => {
                    stream_error = Some(format!("the response stream broke: {e}"));
                    break;
                }
            };
            let events = match parser.feed(&String::from_utf8_lossy(&chunk)) {
                Ok(events) => events,
                Err(e) => {
                    stream_error = Some(e.to_string());
                    break 'read;
                }
            };
            for event in events {
                match event {
                    StreamEvent::Text(t) => {
                        on_text(&t);
                        text.push_str(&t);
                    }
                    StreamEvent::ToolUse(tool_use) => {
                        if !text.is_empty() {
                            assistant
                                .push(json!({"type": "text", "text": std::mem::take(&mut text)}));
                        }
                        assistant.push(json!({"type": "tool_use", "id": tool_use.id, "name": tool_use.name, "input": tool_use.input}));
                        executor.add_tool(tool_use.clone());
                        tool_uses.push(tool_use);
                    }
                    StreamEvent::Usage {
                        input_tokens,
                        output_tokens,
                    } => {
                        outcome.usage.0 += input_tokens;
                        outcome.usage.1 += output_tokens;
                    }
                    StreamEvent::MessageStart { .. }
                    | StreamEvent::StopReason(_)
                    | StreamEvent::MessageStop => {}
                }
            }
        }
        if stream_error.is_none()
            && let Err(e) = parser.finish()
        {
            stream_error = Some(e.to_string());
        }
        if !text.is_empty() {
            outcome.final_text.clone_from(&text);
            assistant.push(json!({"type": "text", "text": text}));
        }
        executor.finish();
        let mut results = Vec::new();
        while let Some(event) = executor.next().await {
            if let ExecutorEvent::Result(r) = event {
                on_result(&r.tool_use, &r.outcome);
                results.push(r.outcome.result.to_api_json());
                ctx = r.context;
            }
        }
        if let Some(e) = stream_error {
            // Every tool_use that arrived got its result; the turn still ends here.
            return Err(AgentError::Stream(e));
        }
        outcome
            .messages
            .push(json!({"role": "assistant", "content": assistant}));
        if tool_uses.is_empty() {
            outcome.stop = "the model finished".to_owned();
            return Ok(outcome);
        }
        outcome
            .messages
            .push(json!({"role": "user", "content": results}));
    }
}
