//! WebFetch, review 28, against a real HTTP server on 127.0.0.1 started by each test: code in
//! a `<pre>` without a `<code>` is a fenced block, every table is a GFM table (a `|` in it
//! escaped as GFM escapes it), a declared charset makes any type not known to be binary
//! text in that charset, and notes meant for the main model are not sent to the small
//! model as page content.

use crate::common;

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tool_core::{ToolUseContext, async_trait};
use tools_builtin::WebFetch;
use tools_builtin::web_fetch::{WebFetchModel, WebFetchModelHook};

/// One page the server answers with: its path, its `Content-Type` and its body.
type Route = (&'static str, &'static str, Vec<u8>);

/// Serves `routes` on 127.0.0.1 until the test ends (404 for any other path). Its base URL.
async fn serve(routes: Vec<Route>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let routes = Arc::new(routes);
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let routes = Arc::clone(&routes);
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&request);
                let path = text.split_whitespace().nth(1).unwrap_or("/");
                let (status, ctype, body) = routes.iter().find(|(p, _, _)| *p == path).map_or(
                    ("404 Not Found", "text/plain", &b"nope"[..]),
                    |(_, c, b)| ("200 OK", *c, b.as_slice()),
                );
                let head = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n",
                    body.len()
                );
                let _ = sock.write_all(head.as_bytes()).await;
                let _ = sock.write_all(body).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    format!("http://127.0.0.1:{port}")
}

fn ctx() -> ToolUseContext {
    common::ctx(std::path::Path::new("/"))
}

/// What the model reads from a WebFetch of `url` with `extra` input fields.
async fn fetched(ctx: &ToolUseContext, url: &str, extra: Value) -> String {
    let mut input = json!({"url": url, "prompt": "read"});
    if let (Some(input), Some(extra)) = (input.as_object_mut(), extra.as_object()) {
        input.extend(extra.clone());
    }
    common::text(&WebFetch, ctx, input).await
}

/// The page's Markdown, without the note before it (no model applies the prompt here).
async fn markdown(base: &str, path: &str) -> String {
    let text = fetched(&ctx(), &format!("{base}{path}"), json!({})).await;
    let (_, page) = text.split_once("as Markdown.]\n\n").expect("the notice");
    page.to_owned()
}

/// The lines of `markdown` that are table rows, each with its runs of spaces made one and
/// the delimiter row's runs of dashes `---` (the cells are padded to their column's width).
fn table_lines(markdown: &str) -> Vec<String> {
    markdown
        .lines()
        .filter(|l| l.starts_with('|'))
        .map(|l| {
            let words = l.split_whitespace();
            if l.chars().all(|c| matches!(c, '|' | '-' | ' ')) {
                words
                    .map(|w| if w == "|" { w } else { "---" })
                    .collect::<Vec<_>>()
                    .join(" ")
            } else {
                words.collect::<Vec<_>>().join(" ")
            }
        })
        .collect()
}

/// A Sphinx/Pygments block (`<div class="highlight"><pre><span>…`) and a GitHub-style one,
/// as the reviewer's page had them.
const HIGHLIGHTED: &str = r#"<html><body><p>Example:</p>
<div class="highlight-python3 notranslate"><div class="highlight"><pre><span></span><span class="gp">&gt;&gt;&gt; </span><span class="k">def</span> <span class="nf">f</span><span class="p">(</span><span class="o">*</span><span class="n">args</span><span class="p">,</span> <span class="o">**</span><span class="n">kw</span><span class="p">):</span>
<span class="gp">... </span>    <span class="c1"># Sum the arguments</span>
<span class="gp">... </span>    <span class="k">return</span> <span class="nb">sum</span><span class="p">(</span><span class="n">args</span><span class="p">)</span>
<span class="gp">...</span>
<span class="gp">&gt;&gt;&gt; </span><span class="n">f</span><span class="p">(</span><span class="mi">1</span><span class="p">,</span> <span class="mi">2</span><span class="p">)</span>
<span class="go">3</span>
</pre></div></div>
<div class="highlight highlight-source-shell"><pre># Install
npm install --save-dev my_package
<span class="pl-c"># 1. configure</span>
- item</pre></div>
<pre>run ```inner``` then<br>````x````</pre>
<pre><code>plain code</code></pre>
<p>after</p>
</body></html>"#;

/// Code in a `<pre>` without a `<code>` inside (Sphinx's and GitHub's highlighted blocks) is
/// a fenced code block with its text as written, spans' text kept: not Markdown read from it
/// (`>>>` was a nested quote, `# Install` a heading, `- item` a list item, `*args` emphasis).
/// A fence is longer than any run of backticks inside, and `<pre><code>` is fenced as
/// before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_in_a_pre_without_code_is_fenced() {
    let base = serve(vec![("/doc.html", "text/html", HIGHLIGHTED.into())]).await;
    let page = markdown(&base, "/doc.html").await;
    assert!(
        page.contains(
            "```\n>>> def f(*args, **kw):\n...     # Sum the arguments\n...     return sum(args)\n\
             ...\n>>> f(1, 2)\n3\n```"
        ),
        "{page}"
    );
    assert!(
        page.contains(
            "```\n# Install\nnpm install --save-dev my_package\n# 1. configure\n- item\n```"
        ),
        "{page}"
    );
    // Four backticks inside: a fence of five.
    assert!(
        page.contains("`````\nrun ```inner``` then\n````x````\n`````"),
        "{page}"
    );
    assert!(page.contains("```\nplain code\n```"), "{page}");
    assert!(page.starts_with("Example:") && page.trim_end().ends_with("after"));
}

/// The reviewer's tables: one without `<th>`, one with, one row, cells holding a paragraph
/// and a line break, a nested table, a caption and an empty cell.
const TABLES: &str = "<html><body>\
<p>T1</p><table><tr><td>a1</td><td>b1</td></tr><tr><td>c1</td><td>d1</td></tr></table>\
<p>T2</p><table><tr><th>H1</th><th>H2</th></tr><tr><td>x2</td><td>y2</td></tr></table>\
<p>T4</p><table><tr><td>only</td><td>row</td></tr></table>\
<p>T5</p><table><tr><td><p>para</p></td><td>multi<br>line</td></tr></table>\
<p>T6</p><table><tr><td><table><tr><td>inner</td><td>two</td></tr></table></td><td>outer2</td></tr></table>\
<p>T7</p><table><caption>Cap</caption><tr><td>1</td><td></td></tr></table>\
</body></html>";

/// Every table of rows and cells is a GFM table whose first row is its header: one without
/// `<th>` (its rows and columns were lost, four paragraphs), one of a single row too; a
/// cell's blocks and lines are one line of it; a table nested in a cell is that cell's
/// text, not lost; an empty column still has a valid delimiter row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_table_is_a_gfm_table() {
    let base = serve(vec![("/tables.html", "text/html", TABLES.into())]).await;
    let page = markdown(&base, "/tables.html").await;
    let section = |name: &str, next: &str| -> Vec<String> {
        let start = page
            .find(&format!("{name}\n"))
            .unwrap_or_else(|| panic!("{name}: {page}"));
        let end = page[start..]
            .find(&format!("{next}\n"))
            .map_or(page.len(), |e| start + e);
        table_lines(&page[start..end])
    };
    assert_eq!(
        section("T1", "T2"),
        ["| a1 | b1 |", "| --- | --- |", "| c1 | d1 |"],
        "{page}"
    );
    assert_eq!(
        section("T2", "T4"),
        ["| H1 | H2 |", "| --- | --- |", "| x2 | y2 |"],
        "{page}"
    );
    assert_eq!(
        section("T4", "T5"),
        ["| only | row |", "| --- | --- |"],
        "{page}"
    );
    assert_eq!(
        section("T5", "T6"),
        ["| para | multi line |", "| --- | --- |"],
        "{page}"
    );
    assert_eq!(
        section("T6", "T7"),
        ["| inner two | outer2 |", "| --- | --- |"],
        "{page}"
    );
    assert_eq!(
        section("T7", "\u{0}"),
        ["| 1 | |", "| --- | --- |"],
        "{page}"
    );
    assert!(page.contains("Cap\n| 1"), "{page}");
}

/// A `|` in a table cell is GFM's `\|`, in a code span and in a header too: `&#124;` stayed
/// literal in both (`` `a&#124;b` ``, `B&#124;pipe`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pipe_in_a_cell_is_escaped_as_gfm_escapes_it() {
    let table = "<table><thead><tr><th>K</th><th>B|pipe</th></tr></thead>\
                 <tr><td>x | y</td><td><code>a|b</code></td></tr></table>";
    let base = serve(vec![("/pipe.html", "text/html", table.into())]).await;
    let page = markdown(&base, "/pipe.html").await;
    assert_eq!(
        table_lines(&page),
        ["| K | B\\|pipe |", "| --- | --- |", "| x \\| y | `a\\|b` |"],
        "{page}"
    );
    assert!(!page.contains("&#124;"), "{page}");
}

/// A declared charset on a type outside the known text types (YAML, a shell script, TOML)
/// makes the body text in that charset: a Latin-1 `é` was "binary", and a UTF-8 body under a
/// Latin-1 label was read as UTF-8. A type that is never text, and `application/octet-stream`,
/// stay described, whatever charset they declare.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_charset_makes_any_type_text_in_it() {
    let base = serve(vec![
        (
            "/conf.yaml",
            "application/yaml; charset=iso-8859-1",
            b"caf\xe9: 1".to_vec(),
        ),
        (
            "/run.sh",
            "application/x-sh; charset=iso-8859-1",
            "echo café".into(),
        ),
        (
            "/conf.toml",
            "application/toml; charset=windows-1252",
            b"name = \"\x93q\x94\"".to_vec(),
        ),
        (
            "/blob",
            "application/octet-stream; charset=iso-8859-1",
            b"\xff\xfe\x00\x01".to_vec(),
        ),
        (
            "/pic.png",
            "image/png; charset=utf-8",
            b"\x89PNG\r\n".to_vec(),
        ),
    ])
    .await;
    let ctx = ctx();
    let yaml = fetched(&ctx, &format!("{base}/conf.yaml"), json!({})).await;
    assert!(yaml.ends_with("\n\ncafé: 1"), "{yaml}");
    // UTF-8 bytes read as the Latin-1 they are said to be.
    let sh = fetched(&ctx, &format!("{base}/run.sh"), json!({})).await;
    assert!(sh.ends_with("\n\necho cafÃ©"), "{sh}");
    let toml = fetched(&ctx, &format!("{base}/conf.toml"), json!({})).await;
    assert!(toml.ends_with("name = \"\u{201c}q\u{201d}\""), "{toml}");
    let blob = fetched(&ctx, &format!("{base}/blob"), json!({})).await;
    assert!(
        blob.ends_with("[Binary content (application/octet-stream, 4 bytes) is not shown]"),
        "{blob}"
    );
    let png = fetched(&ctx, &format!("{base}/pic.png"), json!({})).await;
    assert!(
        png.ends_with("[Binary content (image/png, 6 bytes) is not shown]"),
        "{png}"
    );
}

/// A small model that records what it was given and answers `ANSWER`.
#[derive(Default)]
struct Recorder {
    given: Mutex<Vec<String>>,
}

#[async_trait]
impl WebFetchModel for Recorder {
    async fn apply(&self, _url: &str, _prompt: &str, markdown: &str) -> Result<String, String> {
        self.given.lock().unwrap().push(markdown.to_owned());
        Ok("ANSWER".into())
    }
}

/// Notes meant for the main model are not page content for the small one: a call whose
/// content is only a note (binary content described, an offset past the end) returns the
/// note itself and asks no model (a paid request whose rewording was all the main model
/// got); a page longer than the model reads is given to it without the truncation note,
/// which follows the answer, so the main model learns of `offset`. An offset too large for
/// any page is reported as given, not as 18446744073709551615.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notes_for_the_main_model_are_not_sent_to_the_small_one() {
    let base = serve(vec![
        ("/pic.png", "image/png", b"\x89PNG\r\n\x1a\n\0\0".to_vec()),
        (
            "/long.txt",
            "text/plain",
            "abcdefghij".repeat(12_000).into(),
        ),
    ])
    .await;
    let recorder = Arc::new(Recorder::default());
    let ctx = ctx();
    ctx.app_state().set(WebFetchModelHook(
        Arc::clone(&recorder) as Arc<dyn WebFetchModel>
    ));
    let png = fetched(&ctx, &format!("{base}/pic.png"), json!({})).await;
    assert_eq!(png, "[Binary content (image/png, 10 bytes) is not shown]");
    let long = format!("{base}/long.txt");
    let past = fetched(&ctx, &long, json!({"offset": 999_999})).await;
    assert_eq!(
        past,
        "[offset 999999 is past the end of the content (120000 characters)]"
    );
    let huge = fetched(&ctx, &long, json!({"offset": 1e30})).await;
    assert_eq!(
        huge,
        "[offset 1000000000000000000000000000000 is past the end of the content (120000 characters)]"
    );
    assert!(
        recorder.given.lock().unwrap().is_empty(),
        "a model was asked"
    );

    let answer = fetched(&ctx, &long, json!({})).await;
    let given = recorder.given.lock().unwrap().clone();
    assert_eq!(given.len(), 1);
    assert_eq!(given[0], "abcdefghij".repeat(10_000));
    assert_eq!(
        answer,
        "ANSWER\n\n[The prompt was applied to characters 0-100000 of 120000. Call WebFetch \
         again with offset 100000 to read more.]"
    );
    // The last part: nothing more to read, nothing said.
    let last = fetched(&ctx, &long, json!({"offset": 100_000})).await;
    assert_eq!(last, "ANSWER");

    // Without a model, the offset is reported as given too.
    let ctx = self::ctx();
    let raw = fetched(&ctx, &long, json!({"offset": 1e30})).await;
    assert!(
        raw.ends_with(
            "[offset 1000000000000000000000000000000 is past the end of the content (120000 characters)]"
        ),
        "{raw}"
    );
}

/// The whole of the page's content, read window by window (`offset`) as a model would, and
/// how many characters its Markdown has (the `of N` of the first window's note).
async fn whole_page(ctx: &ToolUseContext, url: &str) -> (String, usize) {
    let mut page = String::new();
    let mut total = None;
    loop {
        let text = fetched(ctx, url, json!({"offset": page.chars().count()})).await;
        let (_, part) = text.split_once("as Markdown.]\n\n").expect("the notice");
        let Some((part, note)) = part.rsplit_once("\n\n[Content truncated: characters ") else {
            page.push_str(part);
            return (page.clone(), total.unwrap_or(page.chars().count()));
        };
        let of: usize = note
            .split(" of ")
            .nth(1)
            .and_then(|n| n.split(' ').next())
            .and_then(|n| n.parse().ok())
            .expect("the note's total");
        total.get_or_insert(of);
        page.push_str(part);
    }
}

/// The reviewer's page: `tables` copies of a table whose first cell is a thousand `<b>|</b>`
/// (a thousand characters of text, twice as many written: `**\|\|…**`) over a thousand rows
/// of `x`.
fn many_padded_tables(tables: usize) -> String {
    let table = format!(
        "<table><tr><td>{}</td></tr>{}</table>",
        "<b>|</b>".repeat(1000),
        "<tr><td>x</td></tr>".repeat(1000)
    );
    format!("<html><body>{}</body></html>", table.repeat(tables))
}

/// A page of many tables, each padded far past its text, stays within a small multiple of
/// its HTML: the allowance for padding is the page's, shared by its tables (it was each
/// table's, and ten tables of 27 KB made 20 million characters), and a cell's width is what
/// is written of it (an escaped `\|`, emphasis markers), not its text. Past the allowance a
/// table is its rows as lines, every cell kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_padded_tables_stay_within_a_small_multiple_of_the_html() {
    let html = many_padded_tables(10);
    let base = serve(vec![("/tables.html", "text/html", html.clone().into())]).await;
    let ctx = ctx();
    let (page, total) = whole_page(&ctx, &format!("{base}/tables.html")).await;
    assert!(
        total < 10 * html.len(),
        "{total} characters of Markdown from {} bytes of HTML",
        html.len()
    );
    assert_eq!(page.chars().count(), total);
    // Every cell is there, one row a line.
    assert_eq!(page.lines().filter(|l| l.trim_end() == "x").count(), 10_000);
    let pipes = format!("**{}**", "\\|".repeat(1000));
    assert_eq!(
        page.lines().filter(|l| l.trim_end() == pipes).count(),
        10,
        "{}",
        &page[..page.len().min(3000)]
    );
}

/// The charset is the `Content-Type`'s parameter of that name, not `charset=` found inside
/// another parameter (`xcharset=utf-16`, a quoted `profile="charset=utf-16"`: both decoded
/// the page as UTF-16, `敨汬…`); its name is read in any case, its value unquoted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_charset_is_the_parameter_of_that_name() {
    let base = serve(vec![
        (
            "/prefixed.txt",
            "text/plain; xcharset=utf-16; charset=utf-8",
            "hello world".into(),
        ),
        (
            "/quoted.txt",
            "text/plain; profile=\"charset=utf-16\"; charset=utf-8",
            "hello world".into(),
        ),
        (
            "/semicolon.txt",
            "text/plain; profile=\"a;charset=utf-16\"; Charset=\"ISO-8859-1\"",
            b"caf\xe9".to_vec(),
        ),
        (
            "/only-prefixed.txt",
            "text/plain; xcharset=iso-8859-1",
            "café".into(),
        ),
    ])
    .await;
    let ctx = ctx();
    for (path, expected) in [
        ("/prefixed.txt", "hello world"),
        ("/quoted.txt", "hello world"),
        ("/semicolon.txt", "café"),
        ("/only-prefixed.txt", "café"),
    ] {
        let text = fetched(&ctx, &format!("{base}{path}"), json!({})).await;
        assert!(text.ends_with(&format!("\n\n{expected}")), "{path}: {text}");
    }
}
