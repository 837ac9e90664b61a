//! `http` hooks against a tiny HTTP/1.1 server on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Env, one, runner};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tool_core::RuleSource;
use tool_hooks::{
    HookRunner, HooksConfig, MAX_STDOUT_BYTES, PermissionDecision, SettingsFile, ToolCallInfo,
};

#[derive(Debug, Clone, Default)]
struct Seen {
    head: String,
    body: String,
}

/// Serves `GET/POST /<path>` with a canned response per path; `/hang` never answers.
async fn serve() -> (String, Arc<Mutex<Vec<Seen>>>, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let log = seen.clone();
    let task = tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let log = log.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let (head, body) = loop {
                    let n = sock.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&buf).into_owned();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let head = text[..end].to_owned();
                        let len: usize = head
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse().unwrap())
                            })
                            .unwrap_or(0);
                        if buf.len() >= end + 4 + len {
                            break (
                                head,
                                String::from_utf8_lossy(&buf[end + 4..end + 4 + len]).into_owned(),
                            );
                        }
                    }
                };
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                log.lock().unwrap().push(Seen { head, body });
                let mut extra = String::new();
                let (status, body) = match path.as_str() {
                    "/deny" => (
                        "200 OK",
                        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "remote policy"}}).to_string(),
                    ),
                    "/empty" => ("200 OK", String::new()),
                    "/text" => ("200 OK", "hello".to_owned()),
                    "/broken" => ("200 OK", "{oops".to_owned()),
                    // JSON larger than the body limit.
                    "/huge" => (
                        "200 OK",
                        json!({"systemMessage": "a".repeat(MAX_STDOUT_BYTES)}).to_string(),
                    ),
                    "/redirect" => {
                        extra = "Location: /deny\r\n".to_owned();
                        ("307 Temporary Redirect", String::new())
                    }
                    "/error" => ("500 Internal Server Error", "database down".to_owned()),
                    "/hang" => {
                        tokio::time::sleep(Duration::from_secs(100)).await;
                        return;
                    }
                    _ => ("404 Not Found", String::new()),
                };
                let resp = format!(
                    "HTTP/1.1 {status}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(resp.as_bytes()).await;
            });
        }
    });
    (base, seen, task)
}

fn bash() -> ToolCallInfo {
    ToolCallInfo::new("Bash", json!({"command": "ls"}), "toolu_h")
}

#[tokio::test]
async fn http_hook_decides_and_sends_input() {
    let env = Env::new();
    let (base, seen, task) = serve().await;
    let hook = json!({"type": "http", "url": format!("{base}/deny"),
        "headers": {"Authorization": "Bearer $HOME", "X-Other": "[${PATH}]"}, "allowedEnvVars": ["HOME"]});
    let r = runner(one("PreToolUse", "Bash", vec![hook]));
    let out = r.run_pre_tool_use(&bash(), &env.ctx()).await;
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
    let d = out.decision.unwrap();
    assert_eq!(
        (d.behavior, d.message.as_str()),
        (PermissionDecision::Deny, "remote policy")
    );
    let req = seen.lock().unwrap()[0].clone();
    assert!(req.head.starts_with("POST /deny HTTP/1.1"));
    let head = req.head.to_ascii_lowercase();
    assert!(head.contains("content-type: application/json"));
    let home = std::env::var("HOME")
        .unwrap_or_default()
        .to_ascii_lowercase();
    assert!(
        head.contains(&format!("authorization: bearer {home}")),
        "{head}"
    );
    assert!(
        head.contains("x-other: []"),
        "non-allowed variables are not expanded: {head}"
    );
    let body: Value = serde_json::from_str(&req.body).unwrap();
    assert_eq!(body["hook_event_name"], "PreToolUse");
    assert_eq!(body["tool_input"], json!({"command": "ls"}));
    task.abort();
}

#[tokio::test]
async fn http_failures_are_non_blocking() {
    let env = Env::new();
    let (base, seen, task) = serve().await;
    let cases = [
        ("/empty", None),
        ("/text", Some("not a JSON object")),
        // Looks like JSON, is not: a failure, not text for the model.
        ("/broken", Some("response body is not valid JSON")),
        // Redirects are not followed: the input goes only where the settings say.
        ("/redirect", Some("HTTP status 307")),
        (
            "/error",
            Some("HTTP status 500 Internal Server Error: database down"),
        ),
        ("/missing", Some("HTTP status 404")),
    ];
    for (path, expect) in cases {
        let r = runner(one(
            "PreToolUse",
            "Bash",
            vec![json!({"type": "http", "url": format!("{base}{path}")})],
        ));
        let out = r.run_pre_tool_use(&bash(), &env.ctx()).await;
        assert!(out.decision.is_none(), "{path}");
        match expect {
            None => assert!(
                out.common.errors.is_empty(),
                "{path}: {:?}",
                out.common.errors
            ),
            Some(e) => assert!(
                out.common.errors[0].text.contains(e),
                "{path}: {:?}",
                out.common.errors
            ),
        }
    }
    assert!(
        !seen
            .lock()
            .unwrap()
            .iter()
            .any(|r| r.head.starts_with("POST /deny")),
        "the redirect was followed"
    );
    // Timeout.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![json!({"type": "http", "url": format!("{base}/hang"), "timeout": 0.5})],
    ));
    let start = Instant::now();
    let out = r.run_pre_tool_use(&bash(), &env.ctx()).await;
    // The 0.5 s timeout ended it, not the server (which holds the request for 100 s): a
    // bound, not a speed check.
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
    assert!(
        out.common.errors[0].text.contains("timed out"),
        "{:?}",
        out.common.errors
    );
    task.abort();
    // Connection refused: bind a port, then close it.
    let port = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![json!({"type": "http", "url": format!("http://127.0.0.1:{port}/x")})],
    ));
    let out = r.run_pre_tool_use(&bash(), &env.ctx()).await;
    assert!(
        out.common.errors[0].text.contains("request to"),
        "{:?}",
        out.common.errors
    );
    // onFailure: block makes a failure blocking; the reason names the URL without the
    // credentials in its query.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![
            json!({"type": "http", "url": format!("http://127.0.0.1:{port}/x?key=SECRET"), "onFailure": "block"}),
        ],
    ));
    let d = r
        .run_pre_tool_use(&bash(), &env.ctx())
        .await
        .decision
        .unwrap();
    assert_eq!(d.behavior, PermissionDecision::Deny);
    assert!(d.message.contains("/x?redacted"), "{}", d.message);
    assert!(!d.message.contains("SECRET"), "{}", d.message);
}

#[tokio::test]
async fn a_users_content_type_replaces_the_default() {
    let env = Env::new();
    let (base, seen, task) = serve().await;
    let hook = json!({"type": "http", "url": format!("{base}/empty"),
        "headers": {"content-type": "application/json; charset=utf-8"}});
    let out = runner(one("PreToolUse", "Bash", vec![hook]))
        .run_pre_tool_use(&bash(), &env.ctx())
        .await;
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
    let head = seen.lock().unwrap()[0].head.to_ascii_lowercase();
    let types: Vec<&str> = head
        .lines()
        .filter(|l| l.starts_with("content-type:"))
        .collect();
    assert_eq!(
        types,
        ["content-type: application/json; charset=utf-8"],
        "{head}"
    );
    task.abort();
}

/// A response body over the size limit is named as one: an http hook has no stdout (the
/// error spoke of a stdout capture limit). From a guard (PreToolUse) it is a decision that
/// cannot be read, which refuses the call (review 38); elsewhere a non-blocking error.
#[tokio::test]
async fn an_oversized_response_body_is_named_as_a_body() {
    let env = Env::new();
    let (base, _seen, task) = serve().await;
    let hook = json!({"type": "http", "url": format!("{base}/huge")});
    let out = runner(one("PreToolUse", "Bash", vec![hook.clone()]))
        .run_pre_tool_use(&bash(), &env.ctx())
        .await;
    let refusal = out.decision.expect("the call was not refused").message;
    assert!(
        refusal.contains(&format!(
            "response body exceeds the {MAX_STDOUT_BYTES} byte limit"
        )) && refusal.contains("refused"),
        "{refusal}"
    );
    let out = runner(one("PostToolUse", "Bash", vec![hook]))
        .run_post_tool_use(&bash(), &json!({"stdout": ""}), &env.ctx())
        .await;
    let texts: Vec<&str> = out.common.errors.iter().map(|e| e.text.as_str()).collect();
    assert_eq!(
        texts,
        [format!(
            "response body exceeds the {MAX_STDOUT_BYTES} byte limit; JSON output ignored"
        )],
    );
    assert!(out.common.system_messages.is_empty());
    task.abort();
}

#[test]
fn allowed_http_hook_urls_restrict() {
    let hooks = json!({"PreToolUse": [{"hooks": [
        {"type": "http", "url": "https://hooks.example.com/a"},
        {"type": "http", "url": "https://evil.example.net/b", "allowedEnvVars": ["TOKEN", "OTHER"], "headers": {"A": "$TOKEN"}}
    ]}]});
    let files = [
        SettingsFile {
            source: RuleSource::ProjectSettings,
            path: None,
            value: json!({"hooks": hooks}),
        },
        SettingsFile {
            source: RuleSource::PolicySettings,
            path: None,
            value: json!({"allowedHttpHookUrls": ["https://hooks.example.com/*"], "httpHookAllowedEnvVars": ["TOKEN"]}),
        },
    ];
    let (config, diags) = HooksConfig::from_settings(&files);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(diags[0].message.contains("not in allowedHttpHookUrls"));
    assert_eq!(config.matching("PreToolUse", Some("Bash")).len(), 1);
}

/// Diagnostics about malformed or refused hooks never echo the values that hold secrets.
#[test]
fn hook_diagnostics_do_not_echo_secrets() {
    let secret = "sk-live-0123456789abcdef0123456789";
    let hooks = json!({"PreToolUse": [
        {"hooks": [
            {"type": "http", "url": format!("https://evil.example.net/b?key={secret}")},
            {"type": "http", "url": "https://hooks.example.com/a", "headers": [format!("Authorization: Bearer {secret}")]},
            [format!("echo {secret}")]
        ]},
        format!("group {secret}")
    ]});
    let files = [
        SettingsFile {
            source: RuleSource::ProjectSettings,
            path: None,
            value: json!({"hooks": hooks}),
        },
        SettingsFile {
            source: RuleSource::PolicySettings,
            path: None,
            value: json!({"allowedHttpHookUrls": ["https://hooks.example.com/*"]}),
        },
    ];
    let (_, diags) = HooksConfig::from_settings(&files);
    let text: Vec<String> = diags.iter().map(|d| d.message.clone()).collect();
    assert!(text.len() >= 4, "{text:?}");
    assert!(text.iter().all(|m| !m.contains(secret)), "{text:?}");
    assert!(
        text.iter()
            .any(|m| m.contains("https://evil.example.net/b?redacted")),
        "{text:?}"
    );
    assert!(
        text.iter()
            .any(|m| m.contains("`headers` must be an object, got an array")),
        "{text:?}"
    );
}

/// The hooks of `url` (a PreToolUse http hook for Bash) under `allowedHttpHookUrls:
/// [pattern]` in managed settings, and what loading them reported.
fn under_allow_list(pattern: &str, url: &str) -> (HooksConfig, Vec<tool_hooks::Diagnostic>) {
    let files = [
        SettingsFile {
            source: RuleSource::UserSettings,
            path: None,
            value: json!({"hooks": one("PreToolUse", "Bash", vec![json!({"type": "http", "url": url})])}),
        },
        SettingsFile {
            source: RuleSource::PolicySettings,
            path: None,
            value: json!({"allowedHttpHookUrls": [pattern]}),
        },
    ];
    HooksConfig::from_settings(&files)
}

/// `allowedHttpHookUrls` is matched on the URL as the request is sent (parsed, its path
/// normalised), part by part: a `*` in the host stays in the host, so
/// `http://*.hooks.example.com/*` does not let `http://127.0.0.1:PORT/deny?.hooks.example.com/x`
/// through (a plain glob on the text did); a path pattern is matched against the path with
/// `..` resolved, so `BASE/ok*` does not allow `BASE/ok/../deny`, which goes to `/deny`; a URL
/// with user info is never allowed. Such hooks are reported and never send anything. What
/// the pattern does allow still runs, a `*` for the port or the path included; without a
/// port, only the scheme's default one is allowed.
#[tokio::test]
async fn allowed_http_hook_urls_match_the_parsed_url_part_by_part() {
    let env = Env::new();
    let (base, seen, task) = serve().await;
    let port = base.rsplit(':').next().unwrap().to_owned();
    let refused = [
        (
            "http://*.hooks.example.com/*".to_owned(),
            format!("{base}/deny?.hooks.example.com/x"),
        ),
        (
            "http://*.hooks.example.com/*".to_owned(),
            format!("{base}/deny#.hooks.example.com/x"),
        ),
        (format!("{base}/ok*"), format!("{base}/ok/../deny")),
        (format!("{base}/ok*"), format!("{base}/ok/%2e%2e/deny")),
        (
            format!("{base}/*"),
            format!("http://u:p@127.0.0.1:{port}/deny"),
        ),
        (
            "http://127.0.0.1:*/ok*".to_owned(),
            format!("{base}/deny?x=/ok"),
        ),
        // Without a port, the scheme's own; a `*` in the host does not reach it.
        ("http://127.0.0.1/*".to_owned(), format!("{base}/deny")),
        ("http://*/*".to_owned(), format!("{base}/deny")),
    ];
    for (pattern, url) in &refused {
        let (config, diags) = under_allow_list(pattern, url);
        assert!(
            diags.len() == 1 && diags[0].message.contains("allowedHttpHookUrls"),
            "{pattern} allowed {url}: {diags:?}"
        );
        let out = HookRunner::new(config)
            .run_pre_tool_use(&bash(), &env.ctx())
            .await;
        assert!(out.decision.is_none(), "{url}: {:?}", out.decision);
    }
    assert!(seen.lock().unwrap().is_empty(), "a refused URL was called");
    let allowed = [
        (format!("{base}/*"), format!("{base}/deny")),
        (format!("{base}/de*"), format!("{base}/x/../deny")),
        ("http://127.0.0.1:*/deny".to_owned(), format!("{base}/deny")),
        ("http://127.0.0.1:*".to_owned(), format!("{base}/deny")),
        ("http://*:*/*".to_owned(), format!("{base}/deny")),
        ("HTTP://127.0.0.1:*/deny".to_owned(), format!("{base}/deny")),
    ];
    for (pattern, url) in &allowed {
        let (config, diags) = under_allow_list(pattern, url);
        assert!(diags.is_empty(), "{pattern} refused {url}: {diags:?}");
        let out = HookRunner::new(config)
            .run_pre_tool_use(&bash(), &env.ctx())
            .await;
        let d = out.decision.expect("the allowed hook decided");
        assert_eq!(d.behavior, PermissionDecision::Deny, "{url}");
    }
    assert_eq!(seen.lock().unwrap().len(), allowed.len());
    task.abort();
}
