//! The HTTP client's own behaviour, against a bare TCP listener in the test that records what
//! it receives and answers with canned HTTP: the `User-Agent` it sends, the headers a
//! configuration may not replace, and what its errors say when a server cannot be reached
//! or wants credentials.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tools_mcp::{Diagnostic, McpManager, McpOptions, ServerConfig, Severity, TransportConfig};

/// A listener on 127.0.0.1 that answers every request with `response` (raw HTTP, the
/// connection closed after it) and sends the head of each request it read, lower-cased.
/// Returns its endpoint URL.
async fn canned(response: &'static str) -> (String, mpsc::UnboundedReceiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let tx = tx.clone();
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
                let _ = tx.send(String::from_utf8_lossy(&buf[..head_end]).to_lowercase());
                let _ = stream.write_all(response.as_bytes()).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    (url, rx)
}

const SERVER_ERROR: &str =
    "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

fn opts() -> McpOptions {
    let mut o = McpOptions::new(std::env::temp_dir());
    o.startup_timeout = Duration::from_secs(10);
    o
}

fn with_header(mut config: ServerConfig, name: &str, value: &str) -> ServerConfig {
    if let TransportConfig::Http { headers, .. } = &mut config.transport {
        headers.insert(name.to_owned(), value.to_owned());
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

/// No Rust type names (rmcp's transport names, our own types) in what the user reads.
fn no_type_names(text: &str) {
    for leak in [
        "rmcp::",
        "tools_mcp::",
        "WorkerTransport",
        "reqwest::",
        "Client error:",
    ] {
        assert!(!text.contains(leak), "{leak} in: {text}");
    }
}

/// The first request's head (the `initialize` POST).
async fn first_head(rx: &mut mpsc::UnboundedReceiver<String>) -> String {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("no request reached the server")
        .unwrap()
}

#[tokio::test]
async fn requests_say_who_sends_them_unless_the_config_says_otherwise() {
    let (url, mut rx) = canned(SERVER_ERROR).await;
    connect_error(ServerConfig::http("remote", &url)).await;
    let head = first_head(&mut rx).await;
    let expected = format!("user-agent: toolwright/{}", env!("CARGO_PKG_VERSION"));
    assert!(
        head.lines().any(|l| l == expected),
        "{expected} not in:\n{head}"
    );

    // A `User-Agent` in the server's `headers` replaces ours (an API gateway may want its own).
    let (url, mut rx) = canned(SERVER_ERROR).await;
    let config = with_header(
        ServerConfig::http("remote", &url),
        "User-Agent",
        "acme-agent/2",
    );
    connect_error(config).await;
    let head = first_head(&mut rx).await;
    let agents: Vec<&str> = head
        .lines()
        .filter(|l| l.starts_with("user-agent:"))
        .collect();
    assert_eq!(agents, ["user-agent: acme-agent/2"], "{head}");
}

/// Headers the transport sets itself cannot be replaced from the configuration: the server
/// is not started, and the error names the header, whatever its case.
#[tokio::test]
async fn headers_the_client_sets_itself_are_refused_in_the_config() {
    for name in [
        "Content-Type",
        "content-type",
        "Host",
        "Content-Length",
        "Transfer-Encoding",
        "Connection",
        "MCP-Protocol-Version",
        "mcp-protocol-version",
        "Accept",
        "Mcp-Session-Id",
        "Last-Event-ID",
    ] {
        let (url, mut rx) = canned(SERVER_ERROR).await;
        let config = with_header(ServerConfig::http("remote", &url), name, "héllo-val");
        let text = connect_error(config).await;
        assert!(
            text.contains(&format!(
                "the header \"{name}\" in the server's \"headers\" cannot be set: the MCP client \
                 sets it itself; remove it from the configuration"
            )),
            "{name}: {text}"
        );
        no_type_names(&text);
        // Nothing was sent with it.
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(rx.try_recv().is_err(), "{name}: a request was sent");
    }
    // Other headers go through.
    let (url, mut rx) = canned(SERVER_ERROR).await;
    let config = with_header(ServerConfig::http("remote", &url), "X-Api-Key", "k1");
    connect_error(config).await;
    let head = first_head(&mut rx).await;
    assert!(head.lines().any(|l| l == "x-api-key: k1"), "{head}");
    assert!(
        head.lines().any(|l| l == "content-type: application/json"),
        "{head}"
    );
}

#[tokio::test]
async fn a_refused_connection_says_so() {
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let text = connect_error(ServerConfig::http("remote", &url)).await;
    assert!(
        text.contains(&format!("cannot connect to {url}: connection refused")),
        "{text}"
    );
    no_type_names(&text);
}

/// A url loaded with an unset variable (as Claude Code loads it) says so at connection
/// time, not the HTTP client's "builder error".
#[tokio::test]
async fn a_url_with_an_unset_variable_says_so() {
    let text = connect_error(ServerConfig::http("remote", "https://${NOPE_HOST}/mcp")).await;
    assert!(
        text.contains("its url uses ${NOPE_HOST}, which is not set"),
        "{text}"
    );
    assert!(!text.contains("builder error"), "{text}");
}

/// A 401, with a `WWW-Authenticate` challenge or without one, says credentials are needed
/// and where they go.
#[tokio::test]
async fn an_unauthorized_answer_says_credentials_are_needed() {
    const NEEDS: &str = "the server answered 401 Unauthorized: it needs credentials (headers in \
                         the server's config)";
    for response in [
        "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer realm=\"mcp\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        "HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain\r\nContent-Length: 12\r\nConnection: close\r\n\r\nno entry, no",
    ] {
        let (url, _rx) = canned(response).await;
        let text = connect_error(ServerConfig::http("remote", &url)).await;
        assert!(text.contains(NEEDS), "{text}");
        assert!(text.contains(&url), "{text}");
        no_type_names(&text);
    }
}

/// A URL that is not an MCP endpoint (a web page, a proxy's login form) answers with HTML:
/// the error names the content type in words, not as rmcp's `Some("text/html")`.
#[tokio::test]
async fn a_web_page_instead_of_an_endpoint_names_its_content_type() {
    for (response, said) in [
        (
            "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 15\r\nConnection: close\r\n\r\n<html>hi</html>",
            "answered with content type `text/html; charset=utf-8`, not JSON (`application/json`) or an event stream (`text/event-stream`)",
        ),
        (
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi",
            "answered with no content type, not JSON (`application/json`) or an event stream (`text/event-stream`)",
        ),
    ] {
        let (url, _rx) = canned(response).await;
        let text = connect_error(ServerConfig::http("remote", &url)).await;
        assert!(text.contains(said), "{text}");
        assert!(!text.contains("Some(") && !text.contains("None"), "{text}");
        no_type_names(&text);
    }
}

/// A URL that answers with an error page (a 404 with a whole HTML page) says the status in
/// words and quotes only the start of the page, not kilobytes of HTML, and not rmcp's
/// ", when send initialize request".
#[tokio::test]
async fn an_error_page_is_quoted_only_in_part() {
    let body = format!(
        "<html><head><title>404</title></head><body>{}</body></html>",
        "Nothing to see here. ".repeat(400)
    );
    let response: &'static str = Box::leak(
        format!(
            "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        )
        .into_boxed_str(),
    );
    let (url, _rx) = canned(response).await;
    let text = connect_error(ServerConfig::http("remote", &url)).await;
    assert!(
        text.contains("the server answered 404 Not Found") && text.contains("Nothing to see"),
        "{text}"
    );
    assert!(text.chars().count() < 1_000, "{} chars: {text}", text.len());
    assert!(!text.contains("when send"), "{text}");
    no_type_names(&text);
}

/// A 5xx or 429 answer to `initialize` says in words what the server answered (status and
/// reason), not rmcp's bare `HTTP 500`.
#[tokio::test]
async fn a_server_error_status_is_told_in_words() {
    for (status, said) in [
        (
            "500 Internal Server Error",
            "the server answered 500 Internal Server Error",
        ),
        ("502 Bad Gateway", "the server answered 502 Bad Gateway"),
        (
            "503 Service Unavailable",
            "the server answered 503 Service Unavailable",
        ),
        (
            "429 Too Many Requests",
            "the server answered 429 Too Many Requests",
        ),
    ] {
        let response: &'static str = Box::leak(
            format!(
                "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: 20\r\n\
                 Connection: close\r\n\r\nplain failure reason"
            )
            .into_boxed_str(),
        );
        let (url, _rx) = canned(response).await;
        let text = connect_error(ServerConfig::http("remote", &url)).await;
        assert!(text.contains(said), "{status}: {text}");
        assert!(!text.contains(": HTTP "), "{status}: {text}");
        no_type_names(&text);
    }
}
