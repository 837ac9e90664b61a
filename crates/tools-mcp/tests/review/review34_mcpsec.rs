//! The 34th review's security findings on the MCP client, against real loopback HTTP
//! servers and real stdio server scripts:
//!
//! - a redirect to another origin got the configured headers (`X-Api-Key`) and a `Referer`
//!   quoting the configured URL, query token and all; it is now followed (as Claude Code's
//!   `fetch` follows it) without any configured header, a redirect that would turn the POST
//!   into a GET is refused naming its target (redacted), no request carries a `Referer`, and
//!   errors name the URL that answered;
//! - a stdio server's log (its stderr, quoted in errors the model reads) showed the values of
//!   the server's own configured `env` verbatim;
//! - with `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB` on, a stdio server inherited this process's
//!   credentials (`ANTHROPIC_API_KEY`); a key the server's own `env` gives it still reaches it.

use std::sync::Arc;
use std::time::Duration;

use crate::common::{call, python_http_server, python_server, start_python_http, tool};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tools_mcp::{Diagnostic, McpManager, McpOptions, ServerConfig, Severity, TransportConfig};

/// The query token, header value and bearer token of the configured URL and headers.
const QUERY_SECRET: &str = "rquerysecret1";
const HEADER_SECRET: &str = "hdrxapisecret";
const BEARER_SECRET: &str = "bearersecret77";

/// One request a loopback server read: its method, its path and its head, lower-cased.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    head: String,
}

/// A listener on 127.0.0.1 that answers each request with `answer(method, path)` (raw HTTP,
/// the connection closed after it) and sends what it read. Returns its port.
async fn serve(
    answer: impl Fn(&str, &str) -> String + Send + Sync + 'static,
) -> (u16, mpsc::UnboundedReceiver<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::unbounded_channel();
    let answer = Arc::new(answer);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let tx = tx.clone();
            let answer = answer.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let head_end = loop {
                    if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break pos;
                    }
                    let mut chunk = [0u8; 4096];
                    match stream.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                };
                let head = String::from_utf8_lossy(&buf[..head_end]).to_lowercase();
                let mut words = head.split_whitespace();
                let method = words.next().unwrap_or_default().to_uppercase();
                let path = words.next().unwrap_or_default().to_owned();
                let response = answer(&method, &path);
                let _ = tx.send(Seen { method, path, head });
                let _ = stream.write_all(response.as_bytes()).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    (port, rx)
}

/// A redirect with `status` to `location`.
fn redirect(status: &str, location: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
}

/// A 404 page.
fn not_found() -> String {
    let page = "<html><body><h1>Not Found</h1></body></html>";
    format!(
        "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: \
         close\r\n\r\n{page}",
        page.len()
    )
}

/// Every request `rx` holds now, waiting a moment for the last ones.
async fn drain(rx: &mut mpsc::UnboundedReceiver<Seen>) -> Vec<Seen> {
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut seen = Vec::new();
    while let Ok(s) = rx.try_recv() {
        seen.push(s);
    }
    seen
}

fn opts() -> McpOptions {
    let mut o = McpOptions::new(std::env::temp_dir());
    o.startup_timeout = Duration::from_secs(15);
    o.last_words_wait = Duration::from_secs(2);
    o
}

/// An HTTP server entry for `url` with the secret query, an `X-Api-Key` header and an
/// `Authorization` header.
fn with_secrets(url: &str) -> ServerConfig {
    let mut config = ServerConfig::http("r", format!("{url}?token={QUERY_SECRET}"));
    if let TransportConfig::Http { headers, .. } = &mut config.transport {
        headers.insert("X-Api-Key".into(), HEADER_SECRET.into());
        headers.insert("Authorization".into(), format!("Bearer {BEARER_SECRET}"));
    }
    config
}

/// Connects to `config` alone and returns its one error diagnostic, as shown.
async fn connect_error(config: ServerConfig) -> String {
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    manager.shutdown().await;
    let errors: Vec<&Diagnostic> = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    assert_eq!(errors.len(), 1, "{diags:?}");
    errors[0].to_string()
}

/// No configured secret, and no `Referer`, in a request's head.
fn carries_no_secret(seen: &Seen) {
    for secret in [QUERY_SECRET, HEADER_SECRET, BEARER_SECRET] {
        assert!(!seen.head.contains(secret), "{secret} sent:\n{}", seen.head);
    }
    assert!(
        !seen.head.contains("\r\nreferer:"),
        "a Referer:\n{}",
        seen.head
    );
}

/// The repro of the review: a server that answers every POST with a 307 to another origin
/// (another host name and port), which answers 404. Before: the other origin got
/// `x-api-key: hdrxapisecret` and `referer: …?token=rquerysecret1`, and the error named only
/// the configured URL, with no word of a redirect.
#[tokio::test]
async fn a_redirect_to_another_origin_gets_no_configured_header_nor_referer() {
    let (other, mut other_rx) = serve(|_, _| not_found()).await;
    let target = format!("http://localhost:{other}/elsewhere");
    let location = target.clone();
    let (first, mut first_rx) =
        serve(move |_, _| redirect("307 Temporary Redirect", &location)).await;
    let configured = format!("http://127.0.0.1:{first}/mcp");
    let error = connect_error(with_secrets(&configured)).await;

    let reached = drain(&mut other_rx).await;
    assert!(
        !reached.is_empty(),
        "the redirect was not followed: {error}"
    );
    for seen in &reached {
        carries_no_secret(seen);
    }
    // The configured origin had the headers, as configured, but no Referer either.
    for seen in drain(&mut first_rx).await {
        assert!(seen.head.contains(HEADER_SECRET), "{}", seen.head);
        assert!(!seen.head.contains("\r\nreferer:"), "{}", seen.head);
    }
    // The error names the URL that answered, and the one it was redirected from, redacted.
    assert!(error.contains(&target), "{error}");
    assert!(error.contains(&format!("{configured}?redacted")), "{error}");
    assert!(error.contains("redirect"), "{error}");
    assert!(error.contains("404 Not Found"), "{error}");
    for secret in [QUERY_SECRET, HEADER_SECRET, BEARER_SECRET] {
        assert!(!error.contains(secret), "{secret} in: {error}");
    }
}

/// A redirect within the configured origin keeps the configured headers (it is the same
/// server) but sends no `Referer`; the error names the URL that answered.
#[tokio::test]
async fn a_redirect_within_the_origin_keeps_the_headers_and_names_where_it_went() {
    let (port, mut rx) = serve(|_, path| {
        if path.starts_with("/mcp") {
            redirect("307 Temporary Redirect", "/elsewhere")
        } else {
            not_found()
        }
    })
    .await;
    let configured = format!("http://127.0.0.1:{port}/mcp");
    let error = connect_error(with_secrets(&configured)).await;
    let seen = drain(&mut rx).await;
    let followed: Vec<&Seen> = seen.iter().filter(|s| s.path == "/elsewhere").collect();
    assert!(!followed.is_empty(), "not followed: {seen:?}");
    for s in followed {
        // A 307 keeps the method (and the message).
        assert_eq!(s.method, "POST", "{}", s.head);
        assert!(s.head.contains(HEADER_SECRET), "{}", s.head);
        assert!(!s.head.contains("\r\nreferer:"), "a Referer:\n{}", s.head);
    }
    assert!(
        error.contains(&format!("http://127.0.0.1:{port}/elsewhere")),
        "{error}"
    );
    assert!(error.contains(&format!("{configured}?redacted")), "{error}");
    assert!(!error.contains(QUERY_SECRET), "{error}");
}

/// A server that moved to another origin (every request redirected with a 307) is still
/// used there, as Claude Code uses it, but without the configured headers: a tool that
/// answers the headers it was called with shows neither the API key nor a `Referer`.
#[tokio::test]
async fn a_server_behind_a_redirect_to_another_origin_works_without_the_headers() {
    let dir = tempfile::tempdir().unwrap();
    let script = python_http_server(
        r#"        if meth == "tools/call":
            seen = {k.lower(): v for k, v in self.headers.items()}
            return self.reply({"jsonrpc": "2.0", "id": mid, "result": {
                "content": [{"type": "text", "text": json.dumps(seen)}]}})
"#,
    );
    // Another port is another origin.
    let (_server, moved) = start_python_http(dir.path(), &script, "-");
    let (first, _first_rx) = serve(move |_, _| redirect("307 Temporary Redirect", &moved)).await;
    let config = with_secrets(&format!("http://127.0.0.1:{first}/mcp"));
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    assert!(
        diags.iter().all(|d| d.severity != Severity::Error),
        "{diags:?}"
    );
    let result = call(&tool(&manager, "mcp__r__t"), json!({})).await.unwrap();
    let headers = result.data.content.joined_text();
    manager.shutdown().await;
    let headers: serde_json::Value = serde_json::from_str(&headers).unwrap();
    assert!(headers.get("mcp-session-id").is_some(), "{headers}");
    for name in ["x-api-key", "authorization", "referer"] {
        assert!(headers.get(name).is_none(), "{name} sent: {headers}");
    }
    let text = headers.to_string();
    for secret in [QUERY_SECRET, HEADER_SECRET, BEARER_SECRET] {
        assert!(!text.contains(secret), "{secret} sent: {text}");
    }
}

/// A 302 to another origin would turn the POST into a GET without its message: it is not
/// followed, and the error says so, naming the target without its query.
#[tokio::test]
async fn a_redirect_to_another_origin_that_drops_the_message_is_refused() {
    let (other, mut other_rx) = serve(|_, _| not_found()).await;
    let location = format!("http://127.0.0.1:{other}/x?sig=locationsecret9");
    let (first, _rx) = serve(move |_, _| redirect("302 Found", &location)).await;
    let error = connect_error(with_secrets(&format!("http://127.0.0.1:{first}/mcp"))).await;
    let reached = drain(&mut other_rx).await;
    assert!(reached.is_empty(), "followed: {reached:?}\n{error}");
    assert!(
        error.contains(&format!("http://127.0.0.1:{other}/x?redacted")),
        "{error}"
    );
    assert!(error.contains("302"), "{error}");
    assert!(error.contains("not followed"), "{error}");
    assert!(!error.contains("locationsecret9"), "{error}");
    assert!(!error.contains("Client error"), "{error}");
}

/// Redirects that go round between two origins end after 10, saying so.
#[tokio::test]
async fn redirects_that_go_round_end() {
    let first_port = Arc::new(std::sync::OnceLock::<u16>::new());
    let back = first_port.clone();
    let (other, _other_rx) = serve(move |_, _| {
        let first = back.get().copied().unwrap_or_default();
        redirect(
            "307 Temporary Redirect",
            &format!("http://127.0.0.1:{first}/mcp"),
        )
    })
    .await;
    let (first, _rx) = serve(move |_, _| {
        redirect(
            "307 Temporary Redirect",
            &format!("http://127.0.0.1:{other}/mcp"),
        )
    })
    .await;
    first_port.set(first).unwrap();
    let started = std::time::Instant::now();
    let error = connect_error(with_secrets(&format!("http://127.0.0.1:{first}/mcp"))).await;
    assert!(error.contains("more than 10 times"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(10), "{error}");
}

/// The values a stdio server's `env` gives it stay out of its log as errors quote it, and
/// out of `McpManager::stderr`: the long one, and the short one whose name says it is a
/// credential. Short values that are no secret (`1`, `true`) are left as they are.
#[tokio::test]
async fn a_stdio_servers_configured_env_values_stay_out_of_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let handler = r#"import os
if m == "initialize":
    answer(i, init(msg, {"tools": {}}))
elif m == "tools/list":
    answer(i, {"tools": [{"name": "crash", "inputSchema": {"type": "object"}}]})
elif m == "tools/call":
    e = os.environ
    sys.stderr.write("connecting with DB_PASSWORD=%s pin=%s debug=%s verbose=%s\n" % (
        e["DB_PASSWORD"], e["API_PIN_TOKEN"], e["DEBUG"], e["VERBOSE"]))
    sys.stderr.flush()
    sys.exit(3)"#;
    let config = python_server(dir.path(), "leaky", "leaky", handler)
        .with_env("DB_PASSWORD", "dbpass-SECRET-42")
        .with_env("API_PIN_TOKEN", "k9x2")
        .with_env("DEBUG", "1")
        .with_env("VERBOSE", "true");
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    assert!(
        diags.iter().all(|d| d.severity != Severity::Error),
        "{diags:?}"
    );
    let error = call(&tool(&manager, "mcp__leaky__crash"), json!({}))
        .await
        .unwrap_err()
        .to_string();
    let log = manager.stderr("leaky").unwrap_or_default();
    manager.shutdown().await;
    for text in [&error, &log] {
        assert!(text.contains("connecting with DB_PASSWORD="), "{text}");
        assert!(!text.contains("dbpass-SECRET-42"), "{text}");
        assert!(!text.contains("SECRET-42"), "{text}");
        assert!(!text.contains("k9x2"), "{text}");
        assert!(text.contains("[redacted]"), "{text}");
        assert!(text.contains("debug=1 verbose=true"), "{text}");
    }
}

/// A stdio server that prints its secret and dies while starting: the connection error
/// (what `toolwright tools --mcp` prints) quotes its log without the secret.
#[tokio::test]
async fn a_failed_start_quotes_the_log_without_the_configured_env_values() {
    let dir = tempfile::tempdir().unwrap();
    let handler = r#"import os
sys.stderr.write("fatal: cannot log in with " + os.environ["SERVICE_KEY"] + "\n")
sys.stderr.flush()
sys.exit(4)"#;
    let config = python_server(dir.path(), "dies", "dies", handler)
        .with_env("SERVICE_KEY", "sk-live-0123456789abcdef");
    let error = connect_error(config).await;
    assert!(error.contains("fatal: cannot log in with"), "{error}");
    assert!(!error.contains("0123456789abcdef"), "{error}");
    assert!(error.contains("[redacted]"), "{error}");
}

/// Set in the second run of [`the_credential_scrub_reaches_stdio_servers`].
const CHILD: &str = "TOOLWRIGHT_REVIEW34_MCPSEC_CHILD";

/// With `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB=1`, a stdio server does not inherit
/// `ANTHROPIC_API_KEY`; one whose `env` names the key gets the configured value. Off, both
/// see it (the first the inherited value). The test runs itself again with the variables set
/// in its environment, which is what the servers inherit.
#[tokio::test]
async fn the_credential_scrub_reaches_stdio_servers() {
    let Ok(mode) = std::env::var(CHILD) else {
        for (switch, mode) in [(Some("1"), "scrubbed"), (None, "kept")] {
            let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
            cmd.args([
                "--exact",
                // Its path in the `review` binary (this file is its module `review34_mcpsec`).
                "review34_mcpsec::the_credential_scrub_reaches_stdio_servers",
                "--nocapture",
            ])
            .env(CHILD, mode)
            .env("ANTHROPIC_API_KEY", "inherited-anthropic-key")
            .env("TW_REVIEW34_OWN", "the user's own");
            match switch {
                Some(v) => cmd.env("CLAUDE_CODE_SUBPROCESS_ENV_SCRUB", v),
                None => cmd.env_remove("CLAUDE_CODE_SUBPROCESS_ENV_SCRUB"),
            };
            let out = cmd.output().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && stdout.contains("1 passed"),
                "{mode}:\n{stdout}{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let handler = r#"import os
if m == "initialize":
    answer(i, init(msg, {"tools": {}}))
elif m == "tools/list":
    answer(i, {"tools": [{"name": "env", "inputSchema": {"type": "object"}}]})
elif m == "tools/call":
    e = os.environ
    seen = {k: e.get(k, "<unset>") for k in ("ANTHROPIC_API_KEY", "TW_REVIEW34_OWN", "GIVEN")}
    answer(i, {"content": [{"type": "text", "text": json.dumps(seen)}]})"#;
    let plain = python_server(dir.path(), "plain", "plain", handler);
    let given = python_server(dir.path(), "given", "given", handler)
        .with_env("ANTHROPIC_API_KEY", "configured-key")
        .with_env("GIVEN", "yes");
    let (manager, diags) = McpManager::connect(vec![plain, given], opts()).await;
    assert!(
        diags.iter().all(|d| d.severity != Severity::Error),
        "{diags:?}"
    );
    let seen = |name: &'static str| {
        let manager = &manager;
        async move {
            let text = call(&tool(manager, &format!("mcp__{name}__env")), json!({}))
                .await
                .unwrap()
                .data
                .content
                .joined_text();
            serde_json::from_str::<serde_json::Value>(&text).unwrap()
        }
    };
    let plain = seen("plain").await;
    let given = seen("given").await;
    manager.shutdown().await;
    let expected_plain = if mode == "scrubbed" {
        "<unset>"
    } else {
        "inherited-anthropic-key"
    };
    assert_eq!(
        plain["ANTHROPIC_API_KEY"], expected_plain,
        "{mode}: {plain}"
    );
    assert_eq!(
        plain["TW_REVIEW34_OWN"], "the user's own",
        "{mode}: {plain}"
    );
    // The key the configuration gives the server explicitly reaches it either way.
    assert_eq!(
        given["ANTHROPIC_API_KEY"], "configured-key",
        "{mode}: {given}"
    );
    assert_eq!(given["GIVEN"], "yes", "{mode}: {given}");
}
