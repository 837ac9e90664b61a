//! Review 38's finding on the decision source of served calls: `serve` refuses some asks
//! without a person's answer (an input too long to show, an elicitation the client answered
//! with an error, a 2026-07-28 call ended to ask the client, an answer whose request state
//! was used already), and each was reported as a user's rejection (`user_reject`). They are
//! the configuration's (`config`); a client's decline stays `user_reject`.
//!
//! The server is the library's [`ToolServer`] with tool-perms' engine and the built-in
//! Bash, served over an in-memory pipe by the stdio transport, driven with raw JSON-RPC
//! lines; the decisions are the pipeline's `toolwright::tool_decision` events (what
//! telemetry exports), read by a subscriber of this test's thread, on which the server runs
//! (a current-thread runtime).

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use toolwright::core::{Tool, ToolPermissionContext, ToolUseContext};
use toolwright::perms::{PathRoots, PermissionEngine};
use toolwright::serve::ToolServer;
use toolwright::serve::stdio::LineTransport;

/// The `tool_decision` events seen: (`decision`, `source`).
#[derive(Clone, Default)]
struct Decisions(Arc<Mutex<Vec<(String, String)>>>);

impl Decisions {
    fn take(&self) -> Vec<(String, String)> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// The fields of one event.
#[derive(Default)]
struct Fields(Vec<(String, String)>);

impl tracing::field::Visit for Fields {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
}

impl tracing::Subscriber for Decisions {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        metadata.target() == "toolwright::tool_decision"
    }
    fn new_span(&self, _span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _span: &tracing::span::Id, _values: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _span: &tracing::span::Id, _follows: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let get = |name: &str| {
            fields
                .0
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        self.0
            .lock()
            .unwrap()
            .push((get("decision"), get("source")));
    }
    fn enter(&self, _span: &tracing::span::Id) {}
    fn exit(&self, _span: &tracing::span::Id) {}
}

/// The client's end of a served connection.
struct Client {
    read: BufReader<ReadHalf<DuplexStream>>,
    write: WriteHalf<DuplexStream>,
}

impl Client {
    /// A [`ToolServer`] in `cwd` serving the built-in Bash, every call of it asking (no rule
    /// allows it), over a pipe whose other end this is.
    fn serve(cwd: &std::path::Path) -> Self {
        let perm = ToolPermissionContext::default();
        let engine = PermissionEngine::new(&perm, PathRoots::for_cwd(cwd)).unwrap();
        let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(toolwright::builtin::Bash::default())];
        let ctx = ToolUseContext::new(cwd)
            .with_tools(tools)
            .with_permission(perm);
        let server = ToolServer::new(ctx, Arc::new(engine), Arc::new(toolwright::exec::NoHooks));
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let (read, write) = tokio::io::split(theirs);
        let transport = LineTransport::new(read, write);
        tokio::spawn(async move {
            if let Ok(running) = rmcp::ServiceExt::serve(server, transport).await {
                let _ = running.waiting().await;
            }
        });
        let (read, write) = tokio::io::split(ours);
        Self {
            read: BufReader::new(read),
            write,
        }
    }

    async fn send(&mut self, message: &Value) {
        let line = format!("{message}\n");
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.flush().await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let mut line = String::new();
        let n = tokio::time::timeout(
            std::time::Duration::from_secs(60),
            self.read.read_line(&mut line),
        )
        .await
        .expect("the server did not answer")
        .unwrap();
        assert!(n > 0, "the server closed the connection");
        serde_json::from_str(&line).unwrap()
    }

    /// `initialize` on 2025-06-18, as a client that answers form elicitations.
    async fn initialize(&mut self) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "review38", "version": "1"}}}),
        )
        .await;
        let init = self.next().await;
        assert!(init.get("result").is_some(), "{init}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }

    /// A `tools/call` of Bash with `command` (and `more` params), as request `id`.
    async fn call(&mut self, id: u64, command: &str, more: Value) {
        let mut params = json!({"name": "Bash", "arguments": {"command": command}});
        if let (Some(params), Value::Object(more)) = (params.as_object_mut(), more) {
            params.extend(more);
        }
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
            .await;
    }
}

/// Runs `test` on a current-thread runtime with `decisions` as this thread's subscriber.
fn with_decisions<F: std::future::Future<Output = ()>>(decisions: &Decisions, test: F) {
    let _seen = tracing::subscriber::set_default(decisions.clone());
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(test);
}

fn pair(decision: &str, source: &str) -> Vec<(String, String)> {
    vec![(decision.to_owned(), source.to_owned())]
}

/// On 2025-06-18 (`elicitation/create`): an input too long to show is refused without
/// asking the client, and an elicitation the client answers with an error is no answer:
/// both are `config`. A decline is the user's no (`user_reject`).
#[test]
fn a_refusal_serve_made_without_a_persons_answer_is_the_configurations() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let decisions = Decisions::default();
    with_decisions(&decisions, async {
        let mut client = Client::serve(&cwd);
        client.initialize().await;

        let long = format!("true {}", "x".repeat(11_000));
        client.call(1, &long, json!({})).await;
        let answer = client.next().await;
        assert_eq!(answer["id"], 1, "the client was asked: {answer}");
        assert!(
            answer.to_string().contains("The MCP client was not asked."),
            "{answer}"
        );
        assert_eq!(decisions.take(), pair("reject", "config"), "too long");

        client.call(2, "touch made", json!({})).await;
        let ask = client.next().await;
        assert_eq!(ask["method"], "elicitation/create", "{ask}");
        client
            .send(&json!({"jsonrpc": "2.0", "id": ask["id"],
                "error": {"code": -32603, "message": "the client's form broke"}}))
            .await;
        let answer = client.next().await;
        assert_eq!(answer["id"], 2, "{answer}");
        assert!(
            answer.to_string().contains("asking the MCP client failed"),
            "{answer}"
        );
        assert_eq!(decisions.take(), pair("reject", "config"), "failed");

        client.call(3, "touch made", json!({})).await;
        let ask = client.next().await;
        assert_eq!(ask["method"], "elicitation/create", "{ask}");
        client
            .send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "decline"}}))
            .await;
        let answer = client.next().await;
        assert_eq!(answer["id"], 3, "{answer}");
        assert_eq!(decisions.take(), pair("reject", "user_reject"), "declined");
    });
    assert!(!cwd.join("made").exists());
}

/// A 2026-07-28 request's `_meta` (no `initialize` on that version), for a client that can
/// answer form elicitations.
fn stateless_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "review38", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    })
}

/// On 2026-07-28 (input-required results): the call that ends to ask the client was
/// rejected by no one, nor was the retry whose request state was used already: both
/// `config`. The retry with the user's allow is the user's (`user_temporary`).
#[test]
fn a_2026_07_28_call_ended_to_ask_or_replayed_is_no_users_rejection() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let decisions = Decisions::default();
    with_decisions(&decisions, async {
        let mut client = Client::serve(&cwd);
        let command = "echo run >> count.txt";
        client
            .call(1, command, json!({"_meta": stateless_meta()}))
            .await;
        let asked = client.next().await;
        assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
        assert_eq!(decisions.take(), pair("reject", "config"), "asking");
        let state = asked["result"]["requestState"].clone();

        let retry = json!({"_meta": stateless_meta(), "requestState": state,
            "inputResponses": {"permission": {"action": "accept", "content": {"allow": true}}}});
        client.call(2, command, retry.clone()).await;
        let ran = client.next().await;
        assert_eq!(ran["id"], 2, "{ran}");
        assert_eq!(
            decisions.take(),
            pair("accept", "user_temporary"),
            "allowed"
        );

        client.call(3, command, retry).await;
        let replayed = client.next().await;
        assert!(
            replayed
                .to_string()
                .contains("its request state was already used"),
            "{replayed}"
        );
        assert_eq!(decisions.take(), pair("reject", "config"), "replayed");
    });
    let runs = std::fs::read_to_string(cwd.join("count.txt")).unwrap();
    assert_eq!(runs.lines().count(), 1);
}
