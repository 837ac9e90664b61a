//! WebFetch against a real HTTP server on 127.0.0.1 started by the test: HTML to Markdown,
//! plain text, binary, same-host and cross-host redirects, size and time limits, errors,
//! the cache, offsets, the host model hook, and URL checks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tool_core::{PermissionSubject, ProgressSender, Tool, ToolOutput, ToolUseContext, async_trait};
use tools_builtin::WebFetch;
use tools_builtin::web_fetch::{
    WebFetchLimits, WebFetchModel, WebFetchModelHook, is_permitted_redirect, prepare_url,
};

const PAGE: &str = "<!doctype html><html><head><title>T</title><style>p{}</style>\
<script>alert(1)</script></head><body><h1>Hello</h1><p>Some <strong>bold</strong> \
text and a <a href=\"https://example.com/\">link</a>.</p><ul><li>one</li><li>two</li></ul>\
</body></html>";

struct Server {
    base: String,
    hits: Arc<AtomicUsize>,
}

async fn respond(mut sock: tokio::net::TcpStream, port: u16, hits: Arc<AtomicUsize>) {
    let mut req = Vec::new();
    let mut buf = [0u8; 1024];
    while !req.windows(4).any(|w| w == b"\r\n\r\n") {
        match sock.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => req.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&req);
    let path = text.split_whitespace().nth(1).unwrap_or("/").to_owned();
    // A redirect on a connection kept open, which the server then closes when the next
    // request comes on it (as a server that times out idle connections may): a client
    // that sends the redirected request there gets no answer.
    if path == "/keepalive-redirect" {
        let _ = sock
            .write_all(b"HTTP/1.1 301 Moved Permanently\r\nLocation: /page.html\r\nContent-Length: 0\r\n\r\n")
            .await;
        let _ = tokio::time::timeout(Duration::from_secs(5), sock.read(&mut buf)).await;
        return;
    }
    let head = |status: &str, ctype: &str, len: usize, extra: &str| {
        format!(
            "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {len}\r\n{extra}Connection: close\r\n\r\n"
        )
    };
    let (h, body): (String, Vec<u8>) = match path.as_str() {
        "/page.html" => (
            head("200 OK", "text/html; charset=utf-8", PAGE.len(), ""),
            PAGE.into(),
        ),
        "/counted.html" => {
            hits.fetch_add(1, Ordering::SeqCst);
            (head("200 OK", "text/html", PAGE.len(), ""), PAGE.into())
        }
        // 150,000 nested elements (never closed, which HTML allows): the conversion must
        // not recurse once per level.
        "/deep.html" => {
            let mut page = String::from("<!doctype html><html><body><p>top</p><div>");
            page.push_str(&"<span>".repeat(150_000));
            page.push_str("deep <b>inside</b> text</div><p>after</p></body></html>");
            (head("200 OK", "text/html", page.len(), ""), page.into())
        }
        // 200,000 nested `<div>`s and `<blockquote>`s: each start tag made the parser look
        // through every open element (minutes of work, past any timeout).
        "/deep-div.html" => {
            let mut page = String::from("<!doctype html><html><body><p>top</p>");
            page.push_str(&"<div><blockquote>".repeat(200_000));
            page.push_str("deep inside</body></html><p>after</p>");
            (head("200 OK", "text/html", page.len(), ""), page.into())
        }
        // Compressed although nobody asked (no Accept-Encoding): decoded, within the limit.
        "/gzip.html" | "/gzip-bomb" | "/brotli" => {
            use std::io::Write as _;
            let plain = if path == "/gzip.html" {
                PAGE.as_bytes().to_vec()
            } else {
                vec![b' '; 8 * 1024 * 1024]
            };
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(&plain).unwrap();
            let body = gz.finish().unwrap();
            let encoding = if path == "/brotli" { "br" } else { "gzip" };
            (
                head(
                    "200 OK",
                    "text/html",
                    body.len(),
                    &format!("Content-Encoding: {encoding}\r\n"),
                ),
                body,
            )
        }
        // A gzip member followed by bytes that start no other (curl and Node ignore them),
        // and two members, one after the other.
        "/gzip-junk.html" | "/gzip-two.html" => {
            use std::io::Write as _;
            let member = |text: &[u8]| {
                let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                gz.write_all(text).unwrap();
                gz.finish().unwrap()
            };
            let (half, rest) = PAGE.as_bytes().split_at(PAGE.len() / 2);
            let mut body = member(half);
            if path == "/gzip-junk.html" {
                body = member(PAGE.as_bytes());
                body.extend_from_slice(b"GARBAGE");
            } else {
                body.extend(member(rest));
            }
            (
                head(
                    "200 OK",
                    "text/html",
                    body.len(),
                    "Content-Encoding: gzip\r\n",
                ),
                body,
            )
        }
        // No body to decode, whatever the header says.
        "/gzip-empty" => (
            head(
                "204 No Content",
                "text/html",
                0,
                "Content-Encoding: gzip\r\n",
            ),
            Vec::new(),
        ),
        // A Location in raw UTF-8, as some servers send it.
        "/utf8-location" => {
            let h = b"HTTP/1.1 302 Found\r\nLocation: /caf\xc3\xa9\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec();
            let _ = sock.write_all(&h).await;
            return;
        }
        // A Location with a raw byte that is not UTF-8 (Latin-1 `é`), as old servers send it:
        // followed percent-encoded, as browsers and curl follow it.
        "/latin1-location" => {
            let h = b"HTTP/1.1 302 Found\r\nLocation: /caf\xe9\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec();
            let _ = sock.write_all(&h).await;
            return;
        }
        // More headers than hyper reads by default (100), and more than Node reads (2,000).
        "/many-headers" | "/too-many-headers" => {
            let count = if path == "/many-headers" { 150 } else { 2_100 };
            let extra: String = (0..count).map(|i| format!("X-Header-{i}: v\r\n")).collect();
            (
                head("200 OK", "text/html; charset=utf-8", PAGE.len(), &extra),
                PAGE.into(),
            )
        }
        "/caf%C3%A9" | "/caf%E9" => (
            head("200 OK", "text/html; charset=utf-8", PAGE.len(), ""),
            PAGE.into(),
        ),
        // 50,000 nested `<b>`: every one of them asks whether it is inside a `<pre>`.
        "/deep-bold.html" => {
            let mut page = String::from("<!doctype html><html><body><p>top</p><div>");
            page.push_str(&"<b>".repeat(50_000));
            page.push_str("deep inside</div><p>after</p></body></html>");
            (head("200 OK", "text/html", page.len(), ""), page.into())
        }
        // An uncompressed PDF: ASCII bytes, but no text to show as it is.
        "/plain.pdf" => {
            let b = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n".to_vec();
            (head("200 OK", "application/pdf", b.len(), ""), b)
        }
        "/notes.txt" => {
            let t = "plain *text*, not <b>html</b>\n";
            (head("200 OK", "text/plain", t.len(), ""), t.into())
        }
        // "café" in Latin-1: é is the single byte E9.
        "/latin1.txt" => {
            let b = b"caf\xe9 au lait\n".to_vec();
            (
                head("200 OK", "text/plain; charset=iso-8859-1", b.len(), ""),
                b,
            )
        }
        "/stray-byte.log" => {
            let b = b"line one\nbad \xff byte\n".to_vec();
            (head("200 OK", "text/plain", b.len(), ""), b)
        }
        "/meta-charset.html" => {
            let b = b"<html><head><meta charset=\"windows-1252\"></head><body><p>na\xefve \x93quotes\x94</p></body></html>".to_vec();
            (head("200 OK", "text/html", b.len(), ""), b)
        }
        // The label was read as ASCII, so the page cannot be UTF-16 (browsers take UTF-8).
        "/meta-utf16.html" => {
            let b = "<meta charset=\"utf-16\"><h1>Hi café</h1>"
                .as_bytes()
                .to_vec();
            (head("200 OK", "text/html", b.len(), ""), b)
        }
        // A `<meta charset>` inside a comment, or in another tag's attribute, or in an end
        // tag, declares nothing: the page is windows-1252, as its real `<meta>` says.
        "/comment-meta.html" => {
            let b = b"<html><head><!-- <meta charset=\"koi8-r\"> --><div title='<meta charset=koi8-r>'></div></x charset=koi8-r><meta charset=\"windows-1252\"></head><body><p>caf\xe9 \x93q\x94</p></body></html>".to_vec();
            (head("200 OK", "text/html", b.len(), ""), b)
        }
        // XHTML, served as such: a self-closed `<script/>` (an empty element in XML) and a
        // Latin-1 page whose XML declaration says so.
        "/page.xhtml" => {
            let b = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Strict//EN\" \"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd\">\n<html xmlns=\"http://www.w3.org/1999/xhtml\"><head><title>X</title><script type=\"text/javascript\" src=\"a.js\"/><style/></head>\n<body><h1>XHTML heading</h1><div/><p>Body text<br/>more <![CDATA[a<b & c]]> end</p></body></html>".as_bytes().to_vec();
            (head("200 OK", "application/xhtml+xml", b.len(), ""), b)
        }
        "/latin1.xhtml" | "/latin1.xml" => {
            let b = b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><html xmlns=\"http://www.w3.org/1999/xhtml\"><body><p>caf\xe9</p></body></html>".to_vec();
            let ctype = if path == "/latin1.xml" {
                "application/xml"
            } else {
                "application/xhtml+xml"
            };
            (head("200 OK", ctype, b.len(), ""), b)
        }
        // Compressed twice, or `identity` then gzip: codings are undone in reverse order.
        "/gzip-gzip.html" | "/identity-gzip.html" => {
            use std::io::Write as _;
            let gzip = |data: &[u8]| {
                let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                gz.write_all(data).unwrap();
                gz.finish().unwrap()
            };
            let (body, encoding) = if path == "/gzip-gzip.html" {
                (gzip(&gzip(PAGE.as_bytes())), "gzip, gzip")
            } else {
                (gzip(PAGE.as_bytes()), "identity, gzip")
            };
            (
                head(
                    "200 OK",
                    "text/html",
                    body.len(),
                    &format!("Content-Encoding: {encoding}\r\n"),
                ),
                body,
            )
        }
        // A gzip file served as `text/html` without a Content-Encoding: binary, not a page.
        "/gzip-as-html" => {
            use std::io::Write as _;
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(PAGE.as_bytes()).unwrap();
            let body = gz.finish().unwrap();
            (head("200 OK", "text/html", body.len(), ""), body)
        }
        // The request's Accept-Encoding, as text.
        "/accept-encoding" => {
            let sent = text
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("accept-encoding")
                        .then(|| value.trim().to_owned())
                })
                .unwrap_or_else(|| "(none)".to_owned());
            let t = format!("accept-encoding=[{sent}]");
            (head("200 OK", "text/plain", t.len(), ""), t.into())
        }
        // A 300 is not a redirect to follow or report.
        "/choices" => {
            let t = "pick one of the formats";
            (
                head(
                    "300 Multiple Choices",
                    "text/plain",
                    t.len(),
                    "Location: /page.html\r\n",
                ),
                t.into(),
            )
        }
        "/fake.json" => {
            let b = vec![0x00, 0x01, 0x02, b'{', 0x00, 0xff];
            (head("200 OK", "application/json", b.len(), ""), b)
        }
        "/image.png" => {
            let b = vec![0x89, b'P', b'N', b'G', 0, 1, 2, 3, 0xff];
            (head("200 OK", "image/png", b.len(), ""), b)
        }
        "/long.txt" => {
            let t = "abcdefghij".repeat(15_000);
            (head("200 OK", "text/plain", t.len(), ""), t.into())
        }
        "/same-host" => (
            head(
                "301 Moved Permanently",
                "text/plain",
                0,
                "Location: /page.html\r\n",
            ),
            Vec::new(),
        ),
        "/other-host" => (
            head(
                "302 Found",
                "text/plain",
                0,
                &format!("Location: http://localhost:{port}/page.html\r\n"),
            ),
            Vec::new(),
        ),
        "/loop" => (
            head("302 Found", "text/plain", 0, "Location: /loop\r\n"),
            Vec::new(),
        ),
        "/to-www" => (
            head(
                "301 Moved Permanently",
                "text/plain",
                0,
                &format!("Location: http://www.localhost:{port}/page.html\r\n"),
            ),
            Vec::new(),
        ),
        "/big-declared" => {
            let h = head("200 OK", "text/plain", 5_000_000, "");
            let _ = sock.write_all(h.as_bytes()).await;
            return;
        }
        "/big-chunked" => {
            // No length: the limit is found while reading.
            let _ = sock
                .write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n",
                )
                .await;
            let chunk = vec![b'x'; 64 * 1024];
            for _ in 0..64 {
                if sock.write_all(&chunk).await.is_err() {
                    return;
                }
            }
            return;
        }
        "/slow" => {
            let _ = sock
                .write_all(head("200 OK", "text/plain", 10, "").as_bytes())
                .await;
            let _ = sock.write_all(b"12345").await;
            tokio::time::sleep(Duration::from_secs(100)).await;
            return;
        }
        // Each hop is under the limit; the whole chain is not.
        hop if hop.starts_with("/slow-hop/") => {
            let n: u32 = hop["/slow-hop/".len()..].parse().unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(700)).await;
            (
                head(
                    "302 Found",
                    "text/plain",
                    0,
                    &format!("Location: /slow-hop/{}\r\n", n + 1),
                ),
                Vec::new(),
            )
        }
        _ => (head("404 Not Found", "text/plain", 4, ""), b"nope".to_vec()),
    };
    let _ = sock.write_all(h.as_bytes()).await;
    let _ = sock.write_all(&body).await;
    let _ = sock.shutdown().await;
}

async fn server() -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            tokio::spawn(respond(sock, port, h.clone()));
        }
    });
    Server {
        base: format!("http://127.0.0.1:{port}"),
        hits,
    }
}

fn ctx() -> ToolUseContext {
    let ctx = common::ctx(std::path::Path::new("/"));
    ctx.app_state().set(WebFetchLimits {
        timeout: Duration::from_millis(1500),
        max_bytes: 1024 * 1024,
    });
    ctx
}

async fn fetch(ctx: &ToolUseContext, input: Value) -> Result<ToolOutput, String> {
    let input = WebFetch.parse_input(input).map_err(|e| e.to_model_text())?;
    WebFetch
        .validate_input(&input, ctx)
        .await
        .map_err(|e| e.message)?;
    WebFetch
        .call(input, ctx.clone(), ProgressSender::none())
        .await
        .map(|r| r.data)
        .map_err(|e| e.to_model_text())
}

/// A page nested 150,000 levels deep overflowed the stack in the HTML conversion, which
/// aborted the whole process. Its text is kept, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deeply_nested_page_is_converted_without_overflowing_the_stack() {
    let s = server().await;
    // Time for a loaded machine to convert the pages (a debug build).
    let ctx = || {
        let ctx = ctx();
        ctx.app_state().set(WebFetchLimits {
            timeout: Duration::from_secs(60),
            max_bytes: 4 * 1024 * 1024,
        });
        ctx
    };
    let out = fetch(
        &ctx(),
        json!({"url": format!("{}/deep.html", s.base), "prompt": "p"}),
    )
    .await
    .unwrap();
    let text = out.content.joined_text();
    let (_, page) = text.split_once("as Markdown.]").expect("the notice");
    let at = |part: &str| {
        page.find(part)
            .unwrap_or_else(|| panic!("{part:?} missing: {page}"))
    };
    assert!(at("top") < at("deep") && at("deep") < at("inside") && at("inside") < at("after"));
    // Nested elements that look at their parents (a `<b>` asks whether it is in a `<pre>`)
    // look through the flattened tree, not the page's 50,000 levels (quadratic before).
    let out = fetch(
        &ctx(),
        json!({"url": format!("{}/deep-bold.html", s.base), "prompt": "p"}),
    )
    .await
    .unwrap();
    assert!(out.content.joined_text().contains("deep inside"));
    let out = fetch(
        &ctx(),
        json!({"url": format!("{}/deep-div.html", s.base), "prompt": "p"}),
    )
    .await
    .unwrap();
    let text = out.content.joined_text();
    let at = |part: &str| {
        text.find(part)
            .unwrap_or_else(|| panic!("{part:?} missing"))
    };
    assert!(at("top") < at("deep inside") && at("deep inside") < at("after"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn html_becomes_markdown_and_other_types_are_handled() {
    let s = server().await;
    let ctx = ctx();
    let out = fetch(
        &ctx,
        json!({"url": format!("{}/page.html", s.base), "prompt": "summarise"}),
    )
    .await
    .unwrap();
    let text = out.content.joined_text();
    assert!(
        text.starts_with(
            "[No model is available to apply the prompt; the content of http://127.0.0.1:"
        ),
        "{text}"
    );
    assert!(text.contains("# Hello"), "{text}");
    assert!(text.contains("**bold**"), "{text}");
    assert!(text.contains("[link](https://example.com/)"), "{text}");
    assert!(
        !text.contains("alert(1)") && !text.contains("p{}"),
        "{text}"
    );
    assert_eq!(out.structured["code"], 200);
    assert_eq!(out.structured["codeText"], "OK");
    assert_eq!(out.structured["bytes"], PAGE.len());

    // Compressed without being asked: the page, not its gzip bytes; a body that inflates
    // past the limit, and an encoding not decoded here, are refused and say why.
    let out = fetch(
        &ctx,
        json!({"url": format!("{}/gzip.html", s.base), "prompt": "p"}),
    )
    .await
    .unwrap();
    let text = out.content.joined_text();
    assert!(
        text.contains("# Hello") && text.contains("**bold**"),
        "{text}"
    );
    for path in ["/gzip-junk.html", "/gzip-two.html"] {
        let out = fetch(
            &ctx,
            json!({"url": format!("{}{path}", s.base), "prompt": "p"}),
        )
        .await
        .unwrap();
        let text = out.content.joined_text();
        assert!(
            text.contains("# Hello") && text.contains("**bold**"),
            "{path}: {text}"
        );
    }
    let out = fetch(
        &ctx,
        json!({"url": format!("{}/gzip-empty", s.base), "prompt": "p"}),
    )
    .await
    .unwrap();
    assert_eq!(out.structured["code"], 204);
    let err = fetch(
        &ctx,
        json!({"url": format!("{}/gzip-bomb", s.base), "prompt": "p"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("larger than the limit of 1048576 bytes once decompressed"),
        "{err}"
    );
    let err = fetch(
        &ctx,
        json!({"url": format!("{}/brotli", s.base), "prompt": "p"}),
    )
    .await
    .unwrap_err();
    assert!(err.contains("compressed with `br`"), "{err}");

    let out = fetch(
        &ctx,
        json!({"url": format!("{}/notes.txt", s.base), "prompt": "p"}),
    )
    .await
    .unwrap();
    assert!(
        out.content
            .joined_text()
            .ends_with("plain *text*, not <b>html</b>\n")
    );

    let out = fetch(
        &ctx,
        json!({"url": format!("{}/image.png", s.base), "prompt": "p"}),
    )
    .await
    .unwrap();
    assert!(
        out.content
            .joined_text()
            .ends_with("[Binary content (image/png, 9 bytes) is not shown]")
    );
    let out = fetch(
        &ctx,
        json!({"url": format!("{}/plain.pdf", s.base), "prompt": "p"}),
    )
    .await
    .unwrap();
    let text = out.content.joined_text();
    assert!(
        text.ends_with("[Binary content (application/pdf, 77 bytes) is not shown]"),
        "{text}"
    );

    let err = fetch(
        &ctx,
        json!({"url": format!("{}/missing", s.base), "prompt": "p"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("Request failed with status code 404 (Not Found)"),
        "{err}"
    );
    // Only 301, 302, 307 and 308 are redirects; a 300 with a Location is a failed request.
    let err = fetch(
        &ctx,
        json!({"url": format!("{}/choices", s.base), "prompt": "p"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("Request failed with status code 300 (Multiple Choices)"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_within_the_host_are_followed_and_others_reported() {
    let s = server().await;
    let ctx = ctx();
    let out = fetch(
        &ctx,
        json!({"url": format!("{}/same-host", s.base), "prompt": "p"}),
    )
    .await
    .unwrap();
    assert!(out.content.joined_text().contains("# Hello"));
    // A Location in raw UTF-8 is followed, percent-encoded.
    let out = fetch(
        &ctx,
        json!({"url": format!("{}/utf8-location", s.base), "prompt": "p"}),
    )
    .await
    .unwrap();
    assert!(out.content.joined_text().contains("# Hello"));
    // One with a raw byte that is not UTF-8 is followed with the byte percent-encoded.
    let out = fetch(
        &ctx,
        json!({"url": format!("{}/latin1-location", s.base), "prompt": "p"}),
    )
    .await
    .unwrap();
    assert!(out.content.joined_text().contains("# Hello"));
    // Each hop on a connection of its own: the redirect's, which the server closed, is
    // not used again.
    let out = fetch(
        &ctx,
        json!({"url": format!("{}/keepalive-redirect", s.base), "prompt": "p"}),
    )
    .await
    .unwrap();
    assert!(out.content.joined_text().contains("# Hello"));

    let url = format!("{}/other-host", s.base);
    let out = fetch(&ctx, json!({"url": url, "prompt": "get it"}))
        .await
        .unwrap();
    let port = s.base.rsplit(':').next().unwrap();
    assert_eq!(
        out.content.joined_text(),
        format!(
            "REDIRECT DETECTED: The URL redirects to a different host.\n\n\
             Original URL: {url}\nRedirect URL: http://localhost:{port}/page.html\n\
             Status: 302 Found\n\n\
             To complete your request, I need to fetch content from the redirected URL. \
             Please use WebFetch again with these parameters:\n\
             - url: \"http://localhost:{port}/page.html\"\n- prompt: \"get it\""
        )
    );
    assert_eq!(out.structured["code"], 302);

    let err = fetch(
        &ctx,
        json!({"url": format!("{}/loop", s.base), "prompt": "p"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.starts_with("Too many redirects (more than 10)"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn size_and_time_limits() {
    let s = server().await;
    let ctx = ctx();
    let err = fetch(
        &ctx,
        json!({"url": format!("{}/big-declared", s.base), "prompt": "p"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("is 5000000 bytes; the limit is 1048576 bytes"),
        "{err}"
    );
    let err = fetch(
        &ctx,
        json!({"url": format!("{}/big-chunked", s.base), "prompt": "p"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("is larger than the limit of 1048576 bytes"),
        "{err}"
    );
    let started = Instant::now();
    let err = fetch(
        &ctx,
        json!({"url": format!("{}/slow", s.base), "prompt": "p"}),
    )
    .await
    .unwrap_err();
    assert!(err.contains("timed out after 1500 ms"), "{err}");
    // The 1.5 s limit ended it, not the server (which stalls for 100 s): a bound well under
    // the stall, not a speed check.
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    // The limit is for the whole fetch: ten slow redirect hops do not each get it.
    let err = fetch(
        &ctx,
        json!({"url": format!("{}/slow-hop/0", s.base), "prompt": "p"}),
    )
    .await
    .unwrap_err();
    assert!(err.contains("timed out after 1500 ms"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_are_cached_and_long_ones_read_by_offset() {
    let s = server().await;
    let ctx = ctx();
    let url = format!("{}/counted.html", s.base);
    for _ in 0..3 {
        fetch(&ctx, json!({"url": url, "prompt": "p"}))
            .await
            .unwrap();
    }
    assert_eq!(s.hits.load(Ordering::SeqCst), 1, "served from the cache");

    let url = format!("{}/long.txt", s.base);
    let out = fetch(&ctx, json!({"url": url, "prompt": "p"}))
        .await
        .unwrap();
    let text = out.content.joined_text();
    // Without a model, a window the model reads inline (under the persistence threshold).
    assert!(text.ends_with(
        "[Content truncated: characters 0-40000 of 150000 shown. Call WebFetch again with offset 40000 to read more.]"
    ), "{}", &text[text.len() - 200..]);
    let out = fetch(&ctx, json!({"url": url, "prompt": "p", "offset": 110_000}))
        .await
        .unwrap();
    let text = out.content.joined_text();
    assert!(text.ends_with("abcdefghij") && !text.contains("truncated"));
    assert_eq!(text.split("\n\n").nth(1).unwrap().len(), 40_000);
    // Any number, as Claude Code's schema takes it and `slice` reads it: its whole part. A
    // negative one is refused.
    let out = fetch(
        &ctx,
        json!({"url": url, "prompt": "p", "offset": 110_003.9}),
    )
    .await
    .unwrap();
    let text = out.content.joined_text();
    assert!(text.ends_with("abcdefghij") && !text.contains("truncated"));
    assert_eq!(text.split("\n\n").nth(1).unwrap().len(), 39_997);
    assert!(text.contains("]\n\ndefghij"), "{}", &text[..200]);
    let err = fetch(&ctx, json!({"url": url, "prompt": "p", "offset": -1}))
        .await
        .unwrap_err();
    assert!(
        err.contains("The parameter `offset` must be at least 0, but is -1"),
        "{err}"
    );
}

/// A response of more headers than hyper reads by default (100) is read, as Node reads up to
/// 2,000; past that the error says what was wrong, not hyper's "message head is too large".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_response_with_many_headers_is_read() {
    let s = server().await;
    let ctx = ctx();
    let out = fetch(
        &ctx,
        json!({"url": format!("{}/many-headers", s.base), "prompt": "p"}),
    )
    .await
    .unwrap();
    assert!(out.content.joined_text().contains("# Hello"));
    let err = fetch(
        &ctx,
        json!({"url": format!("{}/too-many-headers", s.base), "prompt": "p"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("more than 2000 headers") && !err.contains("message head is too large"),
        "{err}"
    );
}

struct Echo;

#[async_trait]
impl WebFetchModel for Echo {
    async fn apply(&self, url: &str, prompt: &str, markdown: &str) -> Result<String, String> {
        Ok(format!(
            "{prompt} @ {url}: {}",
            markdown.lines().next().unwrap_or("")
        ))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_model_applies_the_prompt() {
    let s = server().await;
    let ctx = ctx();
    ctx.app_state().set(WebFetchModelHook(Arc::new(Echo)));
    let url = format!("{}/page.html", s.base);
    let out = fetch(&ctx, json!({"url": url, "prompt": "title?"}))
        .await
        .unwrap();
    assert_eq!(out.content.joined_text(), format!("title? @ {url}: T"));

    // A model that cannot be reached still leaves the page, said so.
    struct Unreachable;
    #[async_trait]
    impl WebFetchModel for Unreachable {
        async fn apply(&self, _: &str, _: &str, _: &str) -> Result<String, String> {
            Err("the API answered 404: no such model".into())
        }
    }
    let ctx = self::ctx();
    ctx.app_state()
        .set(WebFetchModelHook(Arc::new(Unreachable)));
    let out = fetch(&ctx, json!({"url": url, "prompt": "title?"}))
        .await
        .unwrap();
    let text = out.content.joined_text();
    assert!(
        text.starts_with(&format!(
            "[The prompt could not be applied (the API answered 404: no such model); the content of {url} follows as Markdown.]"
        )),
        "{text}"
    );
}

#[tokio::test]
async fn urls_are_checked_and_upgraded() {
    let ctx = ctx();
    for (url, want) in [
        (
            "not a url",
            "Invalid URL \"not a url\": relative URL without a base",
        ),
        (
            "ftp://example.com/x",
            "Invalid URL \"ftp://example.com/x\": only http and https URLs can be fetched",
        ),
        (
            "https://user:pw@example.com/",
            "Invalid URL \"https://user:pw@example.com/\": URLs with a user name or password are not fetched",
        ),
        (
            "http://intranet/",
            "Invalid URL \"http://intranet/\": the host name must be a public domain name",
        ),
    ] {
        assert_eq!(
            fetch(&ctx, json!({"url": url, "prompt": "p"}))
                .await
                .unwrap_err(),
            want
        );
    }
    let long = format!("https://example.com/{}", "a".repeat(2000));
    assert!(
        fetch(&ctx, json!({"url": long, "prompt": "p"}))
            .await
            .unwrap_err()
            .contains("the limit is 2000")
    );
    assert_eq!(
        prepare_url("http://example.com/a?b").unwrap().as_str(),
        "https://example.com/a?b"
    );
    assert_eq!(
        prepare_url("http://localhost:8080/").unwrap().as_str(),
        "http://localhost:8080/"
    );
    // The limit counts characters as Claude Code does (UTF-16 units), not bytes.
    let accented = format!("https://example.com/{}", "\u{e9}".repeat(1000));
    assert!(prepare_url(&accented).is_ok());
    let long = format!("https://example.com/{}", "\u{e9}".repeat(1981));
    assert_eq!(
        prepare_url(&long).unwrap_err(),
        "The URL is 2001 characters long; the limit is 2000"
    );
    // A fully qualified `localhost.` is loopback too (the rules read it as `localhost`).
    assert_eq!(
        prepare_url("http://localhost.:8080/x").unwrap().as_str(),
        "http://localhost.:8080/x"
    );
    assert_eq!(
        prepare_url("http://127.0.0.5/").unwrap().as_str(),
        "http://127.0.0.5/"
    );
    assert_eq!(
        prepare_url("http://[::1]:9/").unwrap().as_str(),
        "http://[::1]:9/"
    );
    // The model is told so: loopback URLs stay on http.
    let prompt = WebFetch.prompt();
    assert!(
        prompt.contains(
            "HTTP URLs are automatically upgraded to HTTPS (except loopback addresses such as \
             localhost, 127.0.0.1 and [::1])"
        ),
        "{prompt}"
    );
    let u = |s: &str| reqwest_url(s);
    assert!(is_permitted_redirect(
        &u("https://example.com/a"),
        &u("https://www.example.com/b")
    ));
    assert!(!is_permitted_redirect(
        &u("https://example.com/a"),
        &u("https://evil.com/b")
    ));
    // One `www.` is the same site; two is another host.
    assert!(!is_permitted_redirect(
        &u("https://example.com/a"),
        &u("https://www.www.example.com/b")
    ));
    assert!(!is_permitted_redirect(
        &u("https://example.com/a"),
        &u("http://example.com/b")
    ));
    assert!(!is_permitted_redirect(
        &u("https://example.com/a"),
        &u("https://example.com:8443/b")
    ));
    let tool: &dyn Tool = &WebFetch;
    assert_eq!(
        tool.permission_subject(&json!({"url": "https://docs.rs/x", "prompt": "p"})),
        Some(PermissionSubject::Url("https://docs.rs/x".into()))
    );
}

fn reqwest_url(s: &str) -> tools_builtin::web_fetch::Url {
    tools_builtin::web_fetch::Url::parse(s).unwrap()
}

/// A same-site redirect (`localhost` to `www.localhost`) is followed only when the
/// permission rules let WebFetch reach the new URL too: a deny rule on the `www.` host is
/// not stepped around; the redirect goes back to the model instead.
#[tokio::test]
async fn a_same_site_redirect_to_a_denied_host_is_handed_back() {
    let s = server().await;
    let port = s.base.rsplit(':').next().unwrap().to_owned();
    let ctx = ctx();
    let perm = tool_core::ToolPermissionContext {
        deny: vec![tool_core::SourcedRule {
            source: tool_core::RuleSource::ProjectSettings,
            rule: "WebFetch(domain:www.localhost)".into(),
        }],
        ..tool_core::ToolPermissionContext::default()
    };
    let engine =
        tool_perms::PermissionEngine::new(&perm, tool_perms::PathRoots::for_cwd("/")).unwrap();
    let ctx = ctx.with_permission(perm);
    ctx.app_state()
        .set(tool_perms::SessionEngine(Arc::new(engine)));
    let out = fetch(
        &ctx,
        json!({"url": format!("http://localhost:{port}/to-www"), "prompt": "p"}),
    )
    .await
    .unwrap();
    let text = out.content.joined_text();
    assert!(text.starts_with("REDIRECT DETECTED"), "{text}");
    assert!(
        text.contains(&format!("http://www.localhost:{port}/page.html")),
        "{text}"
    );
}

/// The same, for a library host that keeps its rules only in the context's permission
/// settings (no [`tool_perms::SessionEngine`] in the app state): the deny rule on the `www.`
/// host still holds.
#[tokio::test]
async fn a_same_site_redirect_to_a_host_denied_in_the_context_rules_is_handed_back() {
    let s = server().await;
    let port = s.base.rsplit(':').next().unwrap().to_owned();
    let ctx = ctx().with_permission(tool_core::ToolPermissionContext {
        deny: vec![tool_core::SourcedRule {
            source: tool_core::RuleSource::ProjectSettings,
            rule: "WebFetch(domain:www.localhost)".into(),
        }],
        ..tool_core::ToolPermissionContext::default()
    });
    assert!(ctx.app_state().get::<tool_perms::SessionEngine>().is_none());
    let out = fetch(
        &ctx,
        json!({"url": format!("http://localhost:{port}/to-www"), "prompt": "p"}),
    )
    .await
    .unwrap();
    let text = out.content.joined_text();
    assert!(text.starts_with("REDIRECT DETECTED"), "{text}");
    assert!(
        text.contains(&format!("http://www.localhost:{port}/page.html")),
        "{text}"
    );
}

/// An ask rule in the context's permission settings holds too: the model fetches the `www.`
/// URL itself, and is asked.
#[tokio::test]
async fn a_same_site_redirect_to_a_host_with_an_ask_rule_in_the_context_is_handed_back() {
    let s = server().await;
    let port = s.base.rsplit(':').next().unwrap().to_owned();
    let ctx = ctx().with_permission(tool_core::ToolPermissionContext {
        ask: vec![tool_core::SourcedRule {
            source: tool_core::RuleSource::UserSettings,
            rule: "WebFetch(domain:www.localhost)".into(),
        }],
        ..tool_core::ToolPermissionContext::default()
    });
    let out = fetch(
        &ctx,
        json!({"url": format!("http://localhost:{port}/to-www"), "prompt": "p"}),
    )
    .await
    .unwrap();
    let text = out.content.joined_text();
    assert!(text.starts_with("REDIRECT DETECTED"), "{text}");
}

/// Set in a child process of this test (the cache time is read from the process
/// environment): the hit counts expected after two quick fetches, and after one more past a
/// second.
const TTL_CHILD: &str = "TOOLWRIGHT_WEBFETCH_TTL_CHILD";

/// `CLAUDE_CODE_WEBFETCH_CACHE_TTL_MS` sets how long a page stays cached, in milliseconds:
/// `0` fetches every time; unset, empty or unreadable keeps the 15 minutes. Each case runs in
/// a child process with its own environment (and its own process-wide cache), so no other
/// test sees the variable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_time_comes_from_the_environment() {
    const NAME: &str = "the_cache_time_comes_from_the_environment";
    const VAR: &str = tools_builtin::web_fetch::CACHE_TTL_ENV;
    if let Ok(expected) = std::env::var(TTL_CHILD) {
        let s = server().await;
        let ctx = ctx();
        let url = format!("{}/counted.html", s.base);
        for _ in 0..2 {
            fetch(&ctx, json!({"url": url, "prompt": "p"}))
                .await
                .unwrap();
        }
        let quick = s.hits.load(Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(1100)).await;
        fetch(&ctx, json!({"url": url, "prompt": "p"}))
            .await
            .unwrap();
        let later = s.hits.load(Ordering::SeqCst);
        assert_eq!(
            format!("{quick},{later}"),
            expected,
            "{VAR}={:?}",
            std::env::var(VAR)
        );
        return;
    }
    let cases: [(Option<&str>, &str); 5] = [
        (Some("0"), "2,3"),
        (None, "1,1"),
        (Some(""), "1,1"),
        (Some("soon"), "1,1"),
        (Some("1000"), "1,2"),
    ];
    let children: Vec<_> = cases
        .iter()
        .map(|(value, expected)| {
            let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
            cmd.args(["--exact", NAME, "--nocapture"])
                .env(TTL_CHILD, expected)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            match value {
                Some(v) => cmd.env(VAR, v),
                None => cmd.env_remove(VAR),
            };
            cmd.spawn().unwrap()
        })
        .collect();
    for ((value, _), child) in cases.iter().zip(children) {
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{VAR}={value:?}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.contains("1 passed"),
            "{VAR}={value:?}: the child ran nothing: {text}"
        );
    }
}

/// What the model reads from a WebFetch of `path` on `server`, prompt `read`.
async fn fetched_text(ctx: &ToolUseContext, server: &Server, path: &str) -> String {
    fetch(
        ctx,
        json!({"url": format!("{}{path}", server.base), "prompt": "read"}),
    )
    .await
    .unwrap()
    .content
    .joined_text()
}

/// Text in another character set, or with one stray byte, is decoded as text (by the
/// header's charset, else the page's `<meta>`, else UTF-8 with U+FFFD), not called binary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_is_decoded_by_its_character_set() {
    let s = server().await;
    let ctx = ctx();
    let latin1 = fetched_text(&ctx, &s, "/latin1.txt").await;
    assert!(latin1.contains("café au lait"), "{latin1}");
    let stray = fetched_text(&ctx, &s, "/stray-byte.log").await;
    assert!(stray.contains("bad \u{fffd} byte"), "{stray}");
    let meta = fetched_text(&ctx, &s, "/meta-charset.html").await;
    assert!(meta.contains("naïve \u{201c}quotes\u{201d}"), "{meta}");
    let utf16 = fetched_text(&ctx, &s, "/meta-utf16.html").await;
    assert!(utf16.contains("# Hi café"), "{utf16}");
    // Binary under a textual label (NUL bytes, no charset) is still described, not dumped.
    let fake = fetched_text(&ctx, &s, "/fake.json").await;
    assert!(
        fake.contains("[Binary content (application/json, 6 bytes)"),
        "{fake}"
    );
}

/// The page's encoding is read as the HTML standard's prescan reads it: a `<meta charset>`
/// inside a comment, inside another tag's attribute value, or in an end tag declares
/// nothing (a commented-out KOI8-R `<meta>` made a windows-1252 page read `cafИ ⌠q■`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_charset_in_a_comment_or_another_tag_declares_nothing() {
    let s = server().await;
    let out = fetch(
        &ctx(),
        json!({"url": format!("{}/comment-meta.html", s.base), "prompt": "p"}),
    )
    .await
    .unwrap();
    let text = out.content.joined_text();
    assert!(text.contains("caf\u{e9} \u{201c}q\u{201d}"), "{text}");
}

/// An `application/xhtml+xml` page is read as XML would read it: a self-closed `<script/>`
/// or `<style/>` is an empty element, not the start of text that swallows the rest of the
/// page (only the title was shown), a CDATA section is text, and the XML declaration's
/// `encoding` decides the character set (of an XML document shown as text too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_xhtml_page_is_read_as_xml() {
    let s = server().await;
    let ctx = ctx();
    let page = fetched_text(&ctx, &s, "/page.xhtml").await;
    assert!(page.contains("# XHTML heading"), "{page}");
    assert!(page.contains("Body text"), "{page}");
    // The CDATA section's text (`<` escaped in the Markdown).
    assert!(page.contains("more a\\<b & c end"), "{page}");
    let latin1 = fetched_text(&ctx, &s, "/latin1.xhtml").await;
    assert!(latin1.contains("caf\u{e9}"), "{latin1}");
    let xml = fetched_text(&ctx, &s, "/latin1.xml").await;
    assert!(xml.contains("<p>caf\u{e9}</p>"), "{xml}");
}

/// Never answers, after cancelling the call it serves (as SIGTERM or a second Ctrl-C
/// cancels the call while the small model's request stalls).
struct Stalled(tool_core::CancellationToken);

#[async_trait]
impl WebFetchModel for Stalled {
    async fn apply(&self, _: &str, _: &str, _: &str) -> Result<String, String> {
        self.0.cancel();
        std::future::pending().await
    }
}

/// The small model's step is raced against the call's cancellation: a model request that
/// never answers no longer holds a cancelled call (the pipeline waited its 5 s grace, then
/// gave up on it). The call ends as cancelled, at once; the bound here is only "it ends".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_model_step_ends_when_the_call_is_cancelled() {
    let s = server().await;
    let ctx = ctx();
    ctx.app_state().set(WebFetchModelHook(Arc::new(Stalled(
        ctx.cancellation().clone(),
    ))));
    let url = format!("{}/page.html", s.base);
    let input = WebFetch
        .parse_input(json!({"url": url, "prompt": "title?"}))
        .unwrap();
    let ended = tokio::time::timeout(
        Duration::from_secs(60),
        WebFetch.call(input, ctx.clone(), ProgressSender::none()),
    )
    .await;
    let result = ended.expect("the cancelled call never ended: the model step was not raced");
    assert!(
        matches!(result, Err(tool_core::ToolError::Cancelled(_))),
        "{:?}",
        result.map(|r| r.data.content.joined_text())
    );
}

/// Serves TLS on 127.0.0.1 with the certificate and key in `pem` (a fixture, made for these
/// tests only), for one connection at a time, until the test ends. Its port.
fn tls_server(pem: &'static [u8]) -> u16 {
    use rustls::pki_types::pem::PemObject as _;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<_, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_slice(pem).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .unwrap();
    let config = Arc::new(config);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for sock in listener.incoming() {
            let Ok(sock) = sock else { return };
            let _ = sock.set_read_timeout(Some(Duration::from_secs(10)));
            let conn = rustls::ServerConnection::new(config.clone()).unwrap();
            let mut tls = rustls::StreamOwned::new(conn, sock);
            // The handshake (where a client that refuses the certificate closes), then the
            // request's head, answered with a page.
            let mut request = Vec::new();
            let mut buf = [0u8; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match std::io::Read::read(&mut tls, &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let _ = std::io::Write::write_all(
                &mut tls,
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 13\r\nConnection: close\r\n\r\n<p>secure</p>",
            );
            tls.conn.send_close_notify();
            let _ = std::io::Write::flush(&mut tls);
        }
    });
    port
}

/// Set in a child process of [`an_untrusted_certificate_is_explained`], whose
/// `SSL_CERT_FILE` names the server's certificate.
const TLS_CHILD: &str = "TOOLWRIGHT_WEBFETCH_TLS_CHILD";

/// A certificate the machine does not trust is explained in words (not rustls's
/// `invalid peer certificate: UnknownIssuer` or `Other(OtherError(CaUsedAsEndEntity))`),
/// with how to trust a private certificate authority, and the original error kept after
/// it. Both a self-signed authority used as the server's certificate and a self-signed
/// server certificate. And the advice works: with `SSL_CERT_FILE` naming the server's
/// certificate (in a child process: the variable is read from the process environment),
/// the page is fetched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_certificate_is_explained() {
    const NAME: &str = "an_untrusted_certificate_is_explained";
    const LEAF: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/web_fetch/self-signed-leaf.pem"
    );
    let leaf = &include_bytes!("fixtures/web_fetch/self-signed-leaf.pem")[..];
    if std::env::var_os(TLS_CHILD).is_some() {
        let port = tls_server(leaf);
        let out = fetch(
            &ctx(),
            json!({"url": format!("https://127.0.0.1:{port}/"), "prompt": "p"}),
        )
        .await
        .unwrap();
        assert!(out.content.joined_text().ends_with("secure"));
        return;
    }
    for (pem, original) in [
        (
            &include_bytes!("fixtures/web_fetch/self-signed-ca.pem")[..],
            "CaUsedAsEndEntity",
        ),
        (leaf, "UnknownIssuer"),
    ] {
        let port = tls_server(pem);
        let err = fetch(
            &ctx(),
            json!({"url": format!("https://127.0.0.1:{port}/"), "prompt": "p"}),
        )
        .await
        .unwrap_err();
        assert!(
            err.contains("the server's certificate is not trusted: it is self-signed, or issued by a certificate authority this machine does not trust"),
            "{err}"
        );
        assert!(err.contains(&format!("{original})")), "{err}");
    }
    // macOS and Windows verify with the system's trust store, which these do not read.
    if cfg!(any(target_vendor = "apple", windows)) {
        return;
    }
    let err = fetch(
        &ctx(),
        json!({"url": format!("https://127.0.0.1:{}/", tls_server(leaf)), "prompt": "p"}),
    )
    .await
    .unwrap_err();
    assert!(err.contains("set SSL_CERT_FILE"), "{err}");
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", NAME, "--nocapture"])
        .env(TLS_CHILD, "1")
        .env("SSL_CERT_FILE", LEAF)
        .env_remove("SSL_CERT_DIR")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("1 passed"),
        "with SSL_CERT_FILE={LEAF}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A list of content codings is undone in reverse order, `identity` skipped (`identity,
/// gzip` and `gzip, gzip` were refused); the request names exactly the codings WebFetch
/// decodes (with none named a server could pick brotli, which it refuses); and a binary
/// body served as `text/html` (a gzip file without a Content-Encoding) is described as
/// binary, as under any other textual type, not shown as mojibake.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_codings_are_undone_in_order_and_asked_for() {
    let s = server().await;
    let ctx = ctx();
    for path in ["/gzip-gzip.html", "/identity-gzip.html"] {
        let out = fetch(
            &ctx,
            json!({"url": format!("{}{path}", s.base), "prompt": "p"}),
        )
        .await
        .unwrap();
        let text = out.content.joined_text();
        assert!(
            text.contains("# Hello") && text.contains("**bold**"),
            "{path}: {text}"
        );
    }
    let out = fetch(
        &ctx,
        json!({"url": format!("{}/accept-encoding", s.base), "prompt": "p"}),
    )
    .await
    .unwrap();
    let text = out.content.joined_text();
    assert!(text.ends_with("accept-encoding=[gzip, deflate]"), "{text}");
    let out = fetch(
        &ctx,
        json!({"url": format!("{}/gzip-as-html", s.base), "prompt": "p"}),
    )
    .await
    .unwrap();
    let text = out.content.joined_text();
    assert!(
        text.contains("[Binary content (text/html, ") && text.ends_with("bytes) is not shown]"),
        "{text}"
    );
}
