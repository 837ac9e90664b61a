//! Review 38's finding on WebFetch: a same-site redirect to the `www.` host was followed
//! without an allow rule for that host under `denyInsteadOfPrompting` in a host that asks a
//! person (`avoid_prompts` off: `serve`, `agent` on a terminal), where a fetch of that host
//! is refused. It is handed back, as in dontAsk mode.
//!
//! `www.localhost` does not resolve here: the test fetches it in a child process of this
//! test binary whose `HTTP_PROXY` is the test's server, which answers a proxied request for
//! any host (reqwest reads the variable, as curl does).

use crate::common;

use std::sync::{Arc, Mutex};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tool_core::{PermissionMode, RuleSource, SourcedRule, ToolPermissionContext};
use tools_builtin::WebFetch;

/// The variable that tells a child process the port of its parent's server.
const CHILD_PORT: &str = "TOOLWRIGHT_REVIEW38_WEB_PORT";

/// The answer to a proxied request (`GET http://host:port/path`): `localhost`'s `/to-www`
/// redirects to `www.localhost`'s `/internal`, a page.
fn answer(target: &str, port: u16) -> String {
    let page = "<p>WWW INTERNAL PAGE</p>";
    if target.starts_with("http://localhost:") && target.ends_with("/to-www") {
        format!(
            "HTTP/1.1 301 Moved Permanently\r\nLocation: http://www.localhost:{port}/internal\r\n\
             Content-Length: 0\r\nConnection: close\r\n\r\n"
        )
    } else if target.starts_with("http://www.localhost:") && target.ends_with("/internal") {
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{page}",
            page.len()
        )
    } else {
        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".into()
    }
}

/// A proxy on 127.0.0.1 answering [`answer`]s: its port, and the targets it was sent.
async fn proxy() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let targets = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&targets);
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let log = Arc::clone(&log);
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&request).into_owned();
                let target = text.split_whitespace().nth(1).unwrap_or("/").to_owned();
                log.lock().unwrap().push(target.clone());
                let _ = sock.write_all(answer(&target, port).as_bytes()).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    (port, targets)
}

/// In the child process: the port of the parent's proxy. In the parent: `None`, once the
/// test `name` has passed in a child whose proxy is one started here; `www.localhost` must
/// not have been asked for.
async fn in_child(name: &str) -> Option<u16> {
    if let Ok(port) = std::env::var(CHILD_PORT) {
        return Some(port.parse().unwrap());
    }
    let (port, targets) = proxy().await;
    let path = format!("review38_prompting::{name}");
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &path, "--nocapture", "--test-threads=1"])
        .env(CHILD_PORT, port.to_string())
        .env("HTTP_PROXY", format!("http://127.0.0.1:{port}"))
        .env_remove("http_proxy")
        .env_remove("ALL_PROXY")
        .env_remove("all_proxy")
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .env_remove("REQUEST_METHOD")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The proxy runs on this runtime while the child is waited for.
    let out = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{name} failed in the child: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("1 passed"),
        "the child ran nothing: {stdout}"
    );
    let asked = targets.lock().unwrap().clone();
    assert!(
        asked.iter().any(|t| t.starts_with("http://localhost:")),
        "the child did not go through the proxy: {asked:?}"
    );
    assert!(
        !asked.iter().any(|t| t.starts_with("http://www.localhost:")),
        "www.localhost was fetched: {asked:?}"
    );
    None
}

/// The review's L2: with `denyInsteadOfPrompting` and prompts on, only
/// `WebFetch(domain:localhost)` allowed, a redirect to `www.localhost` was followed and its
/// page read, though a fetch of `www.localhost` is refused there. It is handed back to the
/// model, with and without the session's engine in the app state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_deny_instead_of_prompting_a_www_redirect_needs_an_allow_rule() {
    let Some(port) =
        in_child("under_deny_instead_of_prompting_a_www_redirect_needs_an_allow_rule").await
    else {
        return;
    };
    let asked = format!("http://localhost:{port}/to-www");
    let read = format!("http://www.localhost:{port}/internal");
    for session in [true, false] {
        let perm = ToolPermissionContext {
            mode: PermissionMode::Default,
            allow: vec![SourcedRule {
                source: RuleSource::UserSettings,
                rule: "WebFetch(domain:localhost)".into(),
            }],
            deny_instead_of_prompting: true,
            avoid_prompts: false,
            ..ToolPermissionContext::default()
        };
        let ctx = common::ctx(std::path::Path::new("/")).with_permission(perm.clone());
        if session {
            let engine =
                tool_perms::PermissionEngine::new(&perm, tool_perms::PathRoots::for_cwd("/"))
                    .unwrap();
            ctx.app_state()
                .set(tool_perms::SessionEngine(Arc::new(engine)));
        }
        let text = common::run(
            &WebFetch,
            &ctx,
            json!({"url": asked, "prompt": "what does it say?"}),
        )
        .await
        .map(|out| out.content.joined_text())
        .unwrap_or_else(|f| f.text);
        assert!(
            text.starts_with("REDIRECT DETECTED") && text.contains(&format!("- url: \"{read}\"")),
            "session engine {session}: {text}"
        );
        assert!(!text.contains("WWW INTERNAL PAGE"), "{text}");
    }
}
