//! WebFetch, review 33, against real HTTP servers on 127.0.0.1 started by each test: a
//! same-site `www.` redirect names the URL actually read (and in dontAsk mode is handed
//! back unless an allow rule covers the new host), an empty page is said to be empty
//! without a small-model request, and a redirect to a URL WebFetch cannot fetch (another
//! scheme, credentials) is an error that says so rather than an invitation to retry.
//!
//! `www.localhost` does not resolve here: the tests that fetch it run in a child process
//! of this test binary whose `HTTP_PROXY` is the test's server, which answers a proxied
//! request for any host (reqwest reads the variable, as curl does).

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tool_core::{
    PermissionMode, RuleSource, SourcedRule, ToolPermissionContext, ToolUseContext, async_trait,
};
use tools_builtin::WebFetch;
use tools_builtin::web_fetch::{WebFetchModel, WebFetchModelHook};

/// The variable that tells a child process the port of its parent's server.
const CHILD_PORT: &str = "TOOLWRIGHT_REVIEW33_WEB_PORT";

/// A server on 127.0.0.1: its port, and the requests it was sent (`host path`).
struct Server {
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// How many requests asked for `path` (on any host).
    fn hits(&self, path: &str) -> usize {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.ends_with(&format!(" {path}")))
            .count()
    }
}

/// A page with no text once converted to Markdown.
const BLANK: &str =
    "<html><head><title></title></head><body>\n  <script>go()</script>\n  </body></html>";

/// The answer to a request for `path` on `host` (without its port).
fn answer(host: &str, path: &str, port: u16) -> (String, Vec<u8>) {
    let head = |status: &str, ctype: &str, len: usize, extra: &str| {
        format!(
            "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {len}\r\n{extra}\
             Connection: close\r\n\r\n"
        )
    };
    let redirect = |to: &str| {
        (
            head(
                "301 Moved Permanently",
                "text/plain",
                0,
                &format!("Location: {to}\r\n"),
            ),
            Vec::new(),
        )
    };
    let html = |body: &str| (head("200 OK", "text/html", body.len(), ""), body.into());
    match (host, path) {
        ("localhost", "/to-www") => redirect(&format!("http://www.localhost:{port}/internal")),
        ("www.localhost", "/internal") => html("<p>WWW INTERNAL PAGE</p>"),
        (_, "/moved") => redirect("/page"),
        (_, "/page") => html("<p>the page</p>"),
        (_, "/no-content") => (
            "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n".into(),
            Vec::new(),
        ),
        (_, "/empty") => html(""),
        (_, "/blank") => html(BLANK),
        (_, "/spaces") => (head("200 OK", "text/plain", 5, ""), b"  \n\t\n".to_vec()),
        (_, "/to-file") => redirect("file:///etc/passwd"),
        (_, "/to-js") => redirect("javascript:alert(1)"),
        (_, "/to-data") => redirect("data:text/plain,hi"),
        (_, "/to-creds") => redirect(&format!("http://user:secret@localhost:{port}/page")),
        (_, "/to-ftp-creds") => redirect("ftp://user:secret@example.com/f"),
        (_, "/to-other") => redirect("http://example.org/x"),
        _ => (head("404 Not Found", "text/plain", 4, ""), b"nope".to_vec()),
    }
}

/// Serves [`answer`]s until the test ends, to direct requests (`GET /path`, the host from
/// `Host`) and proxied ones (`GET http://host:port/path`).
async fn serve() -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&requests);
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
                let (host, path) = match target.strip_prefix("http://") {
                    Some(rest) => {
                        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
                        (authority.to_owned(), path.to_owned())
                    }
                    None => {
                        let host = text
                            .lines()
                            .find_map(|l| {
                                l.split_once(':')
                                    .filter(|(name, _)| name.eq_ignore_ascii_case("host"))
                                    .map(|(_, value)| value.trim().to_owned())
                            })
                            .unwrap_or_default();
                        (host, target)
                    }
                };
                let host = host
                    .rsplit_once(':')
                    .map_or(host.as_str(), |(h, _)| h)
                    .to_owned();
                log.lock().unwrap().push(format!("{host} {path}"));
                let (head, body) = answer(&host, &path, port);
                let _ = sock.write_all(head.as_bytes()).await;
                let _ = sock.write_all(&body).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    Server { port, requests }
}

/// In the child process: the port of the parent's server. In the parent: `None`, once the
/// test `name` has passed in a child whose proxy is a server started here (which logs what
/// the child asked through it).
async fn in_child(name: &str) -> Option<u16> {
    if let Ok(port) = std::env::var(CHILD_PORT) {
        return Some(port.parse().unwrap());
    }
    let server = serve().await;
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    // The test's path in the `review` binary, this file being its module `review33_web_fetch`.
    let path = format!("review33_web_fetch::{name}");
    cmd.args(["--exact", &path, "--nocapture", "--test-threads=1"])
        .env(CHILD_PORT, server.port.to_string())
        .env("HTTP_PROXY", server.base())
        .env_remove("http_proxy")
        .env_remove("ALL_PROXY")
        .env_remove("all_proxy")
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .env_remove("REQUEST_METHOD")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    // The server runs on this runtime while the child is waited for.
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
    // The child went through the proxy: the `www.` host was asked for, or not, by the test.
    let asked = server.requests.lock().unwrap().clone();
    assert!(
        asked.iter().any(|r| r.starts_with("localhost ")),
        "the child did not go through the proxy: {asked:?}"
    );
    None
}

fn rule(rule: &str) -> SourcedRule {
    SourcedRule {
        source: RuleSource::ProjectSettings,
        rule: rule.into(),
    }
}

/// A context in `mode` whose permission settings allow `allow`; with `session`, the
/// session's engine made of them is in the app state too (as the binary puts it there).
fn ctx_with(mode: PermissionMode, allow: &[&str], session: bool) -> ToolUseContext {
    let perm = ToolPermissionContext {
        mode,
        allow: allow.iter().map(|r| rule(r)).collect(),
        ..ToolPermissionContext::default()
    };
    let ctx = common::ctx(std::path::Path::new("/")).with_permission(perm.clone());
    if session {
        let engine =
            tool_perms::PermissionEngine::new(&perm, tool_perms::PathRoots::for_cwd("/")).unwrap();
        ctx.app_state()
            .set(tool_perms::SessionEngine(Arc::new(engine)));
    }
    ctx
}

/// What the model reads from a WebFetch of `url`, or the error it is given.
async fn fetched(ctx: &ToolUseContext, url: &str) -> Result<String, String> {
    common::run(
        &WebFetch,
        ctx,
        json!({"url": url, "prompt": "what does it say?"}),
    )
    .await
    .map(|out| out.content.joined_text())
    .map_err(|f| f.text)
}

/// A small model that records the URL and the Markdown it was given and answers `ANSWER`.
#[derive(Default)]
struct Recorder {
    given: Mutex<Vec<(String, String)>>,
    calls: AtomicUsize,
}

#[async_trait]
impl WebFetchModel for Recorder {
    async fn apply(&self, url: &str, _prompt: &str, markdown: &str) -> Result<String, String> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.given
            .lock()
            .unwrap()
            .push((url.to_owned(), markdown.to_owned()));
        Ok("ANSWER".into())
    }
}

fn with_model(ctx: &ToolUseContext) -> Arc<Recorder> {
    let recorder = Arc::new(Recorder::default());
    ctx.app_state().set(WebFetchModelHook(
        Arc::clone(&recorder) as Arc<dyn WebFetchModel>
    ));
    recorder
}

/// Finding 1a: a same-site redirect to the `www.` host is followed (Claude Code follows it
/// unchecked too), and the result names the URL the content came from, with the one asked
/// for: it named `localhost` for `www.localhost`'s page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_followed_www_redirect_names_the_url_read() {
    let Some(port) = in_child("a_followed_www_redirect_names_the_url_read").await else {
        return;
    };
    let asked = format!("http://localhost:{port}/to-www");
    let read = format!("http://www.localhost:{port}/internal");
    let ctx = ctx_with(
        PermissionMode::Default,
        &["WebFetch(domain:localhost)"],
        true,
    );
    let text = fetched(&ctx, &asked).await.unwrap();
    assert!(
        text.starts_with(&format!(
            "[No model is available to apply the prompt; the content of {read} (redirected \
             from {asked}) follows as Markdown.]\n\n"
        )),
        "{text}"
    );
    assert!(text.contains("WWW INTERNAL PAGE"), "{text}");

    // With a model: it is told the URL read, and the answer is followed by a line naming
    // it (the text after the answer is ours).
    let ctx = ctx_with(
        PermissionMode::Default,
        &["WebFetch(domain:localhost)"],
        true,
    );
    let recorder = with_model(&ctx);
    let text = fetched(&ctx, &asked).await.unwrap();
    assert_eq!(
        text,
        format!("ANSWER\n\n[The content came from {read} (redirected from {asked}).]")
    );
    let given = recorder.given.lock().unwrap().clone();
    assert_eq!(given.len(), 1);
    assert_eq!(given[0].0, read);
    assert!(given[0].1.contains("WWW INTERNAL PAGE"), "{given:?}");
}

/// A redirect within the host names the URL read too; a page fetched without a redirect
/// is named as before, and the model's answer has nothing after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_same_host_redirect_names_the_url_read() {
    let s = serve().await;
    let base = s.base();
    let ctx = ctx_with(PermissionMode::Default, &[], false);
    let text = fetched(&ctx, &format!("{base}/moved")).await.unwrap();
    assert!(
        text.starts_with(&format!(
            "[No model is available to apply the prompt; the content of {base}/page \
             (redirected from {base}/moved) follows as Markdown.]\n\n"
        )),
        "{text}"
    );
    let text = fetched(&ctx, &format!("{base}/page")).await.unwrap();
    assert!(
        text.starts_with(&format!(
            "[No model is available to apply the prompt; the content of {base}/page follows \
             as Markdown.]\n\n"
        )),
        "{text}"
    );
    let recorder = with_model(&ctx);
    assert_eq!(
        fetched(&ctx, &format!("{base}/page")).await.unwrap(),
        "ANSWER"
    );
    assert_eq!(recorder.given.lock().unwrap()[0].0, format!("{base}/page"));
}

/// Finding 1, dontAsk: with only `WebFetch(domain:localhost)` allowed, a redirect to
/// `www.localhost` (which a direct fetch could not reach in this mode) is handed back to
/// the model, and `www.localhost` is not asked for; with an allow rule covering it, it is
/// followed. It read `www.localhost`'s page where a direct fetch is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_dont_ask_mode_a_www_redirect_needs_an_allow_rule() {
    let Some(port) = in_child("in_dont_ask_mode_a_www_redirect_needs_an_allow_rule").await else {
        return;
    };
    let asked = format!("http://localhost:{port}/to-www");
    let read = format!("http://www.localhost:{port}/internal");
    for session in [true, false] {
        let ctx = ctx_with(
            PermissionMode::DontAsk,
            &["WebFetch(domain:localhost)"],
            session,
        );
        let text = fetched(&ctx, &asked).await.unwrap();
        assert!(
            text.starts_with("REDIRECT DETECTED") && text.contains(&format!("- url: \"{read}\"")),
            "session engine {session}: {text}"
        );
        assert!(!text.contains("WWW INTERNAL PAGE"), "{text}");
    }
    // A session that cannot prompt (a background agent) likewise.
    let ctx = ctx_with(
        PermissionMode::Default,
        &["WebFetch(domain:localhost)"],
        true,
    );
    let mut perm = ctx.permission().clone();
    perm.avoid_prompts = true;
    let ctx = ctx.with_permission(perm);
    let text = fetched(&ctx, &asked).await.unwrap();
    assert!(text.starts_with("REDIRECT DETECTED"), "{text}");

    for session in [true, false] {
        let ctx = ctx_with(
            PermissionMode::DontAsk,
            &[
                "WebFetch(domain:localhost)",
                "WebFetch(domain:www.localhost)",
            ],
            session,
        );
        let text = fetched(&ctx, &asked).await.unwrap();
        assert!(
            text.contains(&format!("the content of {read} (redirected from {asked})"))
                && text.contains("WWW INTERNAL PAGE"),
            "session engine {session}: {text}"
        );
    }
}

/// Finding 2: an empty page (204, a 200 with no body, a body with no text once converted)
/// is said to be empty, and no small model is asked about it; the note is cached as any
/// result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_page_is_said_to_be_empty_without_a_model_request() {
    let s = serve().await;
    let base = s.base();
    let ctx = ctx_with(PermissionMode::Default, &[], false);
    let recorder = with_model(&ctx);
    let cases = [
        ("/no-content", "is empty (204 No Content)".to_owned()),
        ("/empty", "is empty (200 OK, no content)".to_owned()),
        (
            "/blank",
            format!(
                "is empty (200 OK: its {} bytes hold no text once converted to Markdown)",
                BLANK.len()
            ),
        ),
        (
            "/spaces",
            "is empty (200 OK: its 5 bytes hold no text once converted to Markdown)".to_owned(),
        ),
    ];
    for (path, said) in cases {
        let url = format!("{base}{path}");
        let text = fetched(&ctx, &url).await.unwrap();
        assert_eq!(text, format!("[The page at {url} {said}.]"));
    }
    assert_eq!(
        recorder.calls.load(Ordering::SeqCst),
        0,
        "{:?}",
        recorder.given.lock().unwrap()
    );
    // Without a model, the same note (from the cache: no second request).
    let ctx = ctx_with(PermissionMode::Default, &[], false);
    let url = format!("{base}/no-content");
    assert_eq!(
        fetched(&ctx, &url).await.unwrap(),
        format!("[The page at {url} is empty (204 No Content).]")
    );
    assert_eq!(s.hits("/no-content"), 1);
}

/// Finding 3: a redirect to a URL WebFetch will never fetch is an error saying so, not
/// Claude Code's invitation to call WebFetch again with it; a URL with credentials is shown
/// with them masked. A fetchable redirect to another host keeps Claude Code's text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_a_url_webfetch_cannot_fetch_is_an_error() {
    let s = serve().await;
    let base = s.base();
    let ctx = ctx_with(PermissionMode::Default, &[], false);
    for (path, to) in [
        ("/to-file", "file:///etc/passwd"),
        ("/to-js", "javascript:alert(1)"),
        ("/to-data", "data:text/plain,hi"),
    ] {
        let err = fetched(&ctx, &format!("{base}{path}")).await.unwrap_err();
        assert!(
            err.contains(&format!(
                "{base}{path} redirects to {to}, which WebFetch cannot fetch (only http and \
                 https URLs)"
            )) && !err.contains("REDIRECT DETECTED"),
            "{err}"
        );
    }
    let err = fetched(&ctx, &format!("{base}/to-creds"))
        .await
        .unwrap_err();
    assert!(
        err.contains(&format!(
            "{base}/to-creds redirects to a URL with credentials (a user name or password), \
             which WebFetch does not fetch: http://***:***@localhost:{}/page",
            s.port
        )) && !err.contains("secret")
            && !err.contains("REDIRECT DETECTED"),
        "{err}"
    );
    // Another refusal of a URL with credentials never shows them either.
    let err = fetched(&ctx, &format!("{base}/to-ftp-creds"))
        .await
        .unwrap_err();
    assert!(
        err.contains("redirects to ftp://***:***@example.com/f, which WebFetch cannot fetch")
            && !err.contains("secret"),
        "{err}"
    );
    let text = fetched(&ctx, &format!("{base}/to-other")).await.unwrap();
    assert!(
        text.starts_with("REDIRECT DETECTED") && text.contains("- url: \"http://example.org/x\""),
        "{text}"
    );
}
