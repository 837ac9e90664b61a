//! WebFetch: fetches a URL, converts HTML to Markdown, and applies the prompt to it (Claude
//! Code's `WebFetchTool`).
//!
//! - The URL must be `http`/`https`, at most [`MAX_URL_LENGTH`] characters, without user
//!   name or password, with a dotted host name (or `localhost`). `http` is upgraded to
//!   `https`, except for loopback hosts (`localhost`, `127.0.0.0/8`, also IPv4-mapped,
//!   `::1`). **Decision:** Claude Code upgrades those too, which makes a local development or
//!   documentation server unreachable; we keep them on `http`. Such a fetch still needs its permission like any
//!   other (`WebFetch(domain:localhost)`), and a Bash `curl` could reach them anyway.
//! - Redirects are followed (up to [`MAX_REDIRECTS`]) only within the same host (adding or
//!   removing `www.`), scheme and port; a change of host (`www.`) only when the session's
//!   deny and ask rules let WebFetch reach the new URL too, as Claude Code checks it (a deny
//!   or ask rule on the `www.` host holds), and in a session that cannot ask (dontAsk mode,
//!   `avoid_prompts`) only when an allow rule covers it (`redirect_clear`). After a redirect
//!   the result names the URL the content came from (`URL (redirected from URL)`). Any other
//!   redirect is returned as Claude Code's text telling the model which URL to fetch
//!   instead, unless WebFetch never fetches that URL (another scheme, such as `file:` or
//!   `javascript:`; credentials, shown masked; no dotted host; too long): that is an error
//!   saying so (`unfetchable_redirect`), not an invitation to a call that fails. Raw bytes in
//!   a `Location` (UTF-8 or not) are percent-encoded, as browsers and curl read them; an
//!   empty one (or white space only) is reported as missing, as Claude Code reports it.
//! - The body is read up to [`WebFetchLimits::max_bytes`] (10 MiB) within
//!   [`WebFetchLimits::timeout`] (60 s); beyond either the call fails with a clear error.
//!   Requests ask for gzip or deflate (`Accept-Encoding`), and a `Content-Encoding` of
//!   them is decoded, to the same limit, a list (`identity, gzip`, `gzip, gzip`) undone
//!   last coding first; another encoding is refused. Each request goes on a new connection
//!   (none is reused across a redirect's hops); up to 2,000 headers are read, as Node reads
//!   them. HTML becomes Markdown (`htmd`), parsed with at most `MAX_PARSE_DEPTH` (512)
//!   elements open (deeper start tags are left out, their text kept: the parser is quadratic
//!   in depth; `html_depth.rs`) and into at most `MAX_PARSE_NODES` (1,000,000) nodes (the
//!   parser can make far more than the page has tags; past them the page is cut, with a note
//!   first). XHTML (`application/xhtml+xml`) goes through the same parser, rewritten where
//!   XML reads it otherwise (`xhtml_as_html`: a self-closed `<script/>` is an empty element,
//!   a CDATA section text). Code in a `<pre>` is a fenced code block, with or without a
//!   `<code>` inside (`pre_block`), and every table of rows and cells a GFM table, its first
//!   row the header and a `|` in a cell `\|` (`table_block`); a table whose padding would
//!   make its Markdown more than `MAX_TABLE_GROWTH` (8) times what its cells write, past
//!   the page's `TABLE_ALLOWANCE` (1 MiB, shared by all its tables), is its rows as lines
//!   instead (`table_too_wide`). Other text is kept as it is. A
//!   page's character set is its `charset` parameter's, else its own declaration's (HTML: a
//!   `<meta>`, found as the HTML standard's prescan finds it, past comments and other tags;
//!   XML: the XML declaration), else its byte-order mark's, else UTF-8. A declared charset
//!   makes any type text in it (`application/yaml; charset=iso-8859-1`), except a type that
//!   is never text and `application/octet-stream`. Binary content (NUL bytes under a textual
//!   type without a charset, HTML included; bytes that are not UTF-8 under another type
//!   without one), and a type that is never text (a PDF, an image, an archive), is
//!   described, not shown.
//! - A server certificate this machine does not trust is said so in words, with how to
//!   trust a private certificate authority (`SSL_CERT_FILE`, `SSL_CERT_DIR` on Linux).
//! - A host model's step ([`WebFetchModel::apply`]) ends as soon as the call is cancelled.
//! - Fetched pages are kept for 15 minutes ([`CACHE_TTL`]) in a process-wide LRU cache (by
//!   URL), at most [`CACHE_ENTRIES`] pages and [`CACHE_BYTES`] of content.
//!   `CLAUDE_CODE_WEBFETCH_CACHE_TTL_MS` ([`CACHE_TTL_ENV`], read at each lookup) sets
//!   another time in milliseconds, `0` turning the cache off; an empty or unreadable value
//!   keeps the 15 minutes.
//! - The prompt is applied by a host-supplied model ([`WebFetchModel`] in the app state),
//!   which reads at most [`MAX_MARKDOWN_CHARS`] from `offset`; a note after its answer says
//!   how to read on when there is more. Without one the Markdown itself is returned, from
//!   `offset`, cut at [`RAW_WINDOW_CHARS`] (under the pipeline's 50,000-character
//!   persistence threshold, so the model reads it inline) with a note saying how to read
//!   on. A call that reads no page (binary content described, HTML not converted in time,
//!   an `offset` past the end, an empty page: `[The page at URL is empty (204 No
//!   Content).]`, also for a body that is only white space once converted) returns its note,
//!   and asks no model.
//! - Permission rules match the URL (`WebFetch(domain:host)` rules).
use std::borrow::Cow;
use std::net::IpAddr;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use lru::LruCache;
/// The URL type of [`prepare_url`] and [`is_permitted_redirect`].
pub use reqwest::Url;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_core::{
    MaxResultSize, PermissionSubject, ProgressSender, ToolError, ToolResult, ToolResultContent,
    ToolUseContext, TypedTool, ValidationError, async_trait,
};

/// Longest URL accepted.
pub const MAX_URL_LENGTH: usize = 2000;
/// Most redirects followed within one host.
pub const MAX_REDIRECTS: usize = 10;
/// Characters of Markdown a host model ([`WebFetchModel`]) reads per call.
pub const MAX_MARKDOWN_CHARS: usize = 100_000;
/// Characters of Markdown returned per call when no model applies the prompt.
pub const RAW_WINDOW_CHARS: usize = 40_000;
/// How long a fetched page stays cached, unless [`CACHE_TTL_ENV`] says otherwise.
pub const CACHE_TTL: Duration = Duration::from_secs(15 * 60);
/// The environment variable that sets how long a fetched page stays cached, in milliseconds
/// (`0`: not cached).
pub const CACHE_TTL_ENV: &str = "CLAUDE_CODE_WEBFETCH_CACHE_TTL_MS";
/// How many pages the cache keeps.
pub const CACHE_ENTRIES: usize = 128;
/// How much content (bytes of Markdown) the cache keeps, all pages together.
pub const CACHE_BYTES: usize = 50 * 1024 * 1024;

/// Size and time limits of a fetch. The defaults are Claude Code's; a host (or a test) may
/// put other limits in the app state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WebFetchLimits {
    /// Time for the whole fetch (connection, redirects, body).
    pub timeout: Duration,
    /// Largest body read.
    pub max_bytes: u64,
}

impl Default for WebFetchLimits {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(60),
            max_bytes: 10 * 1024 * 1024,
        }
    }
}

/// A model that applies a WebFetch prompt to a page's Markdown (Claude Code runs a small
/// model). Put one in the app state as [`WebFetchModelHook`].
#[async_trait]
pub trait WebFetchModel: Send + Sync {
    /// Answers `prompt` about `markdown`, fetched from `url`.
    async fn apply(&self, url: &str, prompt: &str, markdown: &str) -> Result<String, String>;
}

/// The app-state slot for the host's [`WebFetchModel`].
#[derive(Clone)]
pub struct WebFetchModelHook(pub Arc<dyn WebFetchModel>);

impl std::fmt::Debug for WebFetchModelHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebFetchModelHook")
    }
}

/// Input of the WebFetch tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WebFetchInput {
    /// The URL to fetch content from
    pub url: String,
    /// The prompt to run on the fetched content
    pub prompt: String,
    /// Character offset into the page's Markdown to continue a long page from
    #[schemars(range(min = 0))]
    pub offset: Option<f64>,
}

/// Output of the WebFetch tool (Claude Code's shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebFetchOutput {
    /// Size of the body, in bytes.
    pub bytes: u64,
    /// HTTP status code.
    pub code: u16,
    /// HTTP status text.
    pub code_text: String,
    /// What the model sees.
    pub result: String,
    /// Time taken, in milliseconds.
    pub duration_ms: u64,
    /// The URL fetched (after the https upgrade): the one asked for, also when a same-site
    /// redirect was followed (`result` then names the URL the content came from).
    pub url: String,
}

/// The WebFetch tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct WebFetch;

/// A fetched page, as cached.
#[derive(Debug, Clone)]
struct Page {
    /// Where the page came from, after any same-site redirects.
    url: Url,
    fetched: Instant,
    code: u16,
    code_text: String,
    bytes: u64,
    /// Markdown (or text, or a note saying why nothing of the page is shown).
    content: String,
    /// Whether `content` is only a note for the main model ([`Converted::note`]).
    note: bool,
}

enum Fetched {
    Page(Page),
    /// A redirect to another host.
    Redirect {
        to: String,
        code: u16,
        code_text: String,
    },
}

/// Recently fetched pages, bounded by count and by the bytes of their content.
struct PageCache {
    pages: LruCache<String, Arc<Page>>,
    bytes: usize,
}

impl PageCache {
    fn put(&mut self, url: String, page: Arc<Page>) {
        if page.content.len() > CACHE_BYTES {
            return;
        }
        self.bytes += page.content.len();
        if let Some((_, old)) = self.pages.push(url, page) {
            self.bytes -= old.content.len();
        }
        while self.bytes > CACHE_BYTES {
            let Some((_, old)) = self.pages.pop_lru() else {
                break;
            };
            self.bytes -= old.content.len();
        }
    }

    /// The page cached for `url` if it is younger than `ttl`; an older one is dropped.
    fn get(&mut self, url: &str, ttl: Duration) -> Option<Arc<Page>> {
        match self.pages.get(url) {
            Some(page) if page.fetched.elapsed() < ttl => Some(Arc::clone(page)),
            Some(_) => {
                if let Some(old) = self.pages.pop(url) {
                    self.bytes -= old.content.len();
                }
                None
            }
            None => None,
        }
    }
}

/// The cache time a value of [`CACHE_TTL_ENV`] sets: milliseconds; [`CACHE_TTL`] when the
/// variable is unset, empty or not a whole number.
fn cache_ttl_from(value: Option<&str>) -> Duration {
    value
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(CACHE_TTL, Duration::from_millis)
}

/// The cache time the environment sets now ([`cache_ttl_from`]).
fn cache_ttl() -> Duration {
    cache_ttl_from(std::env::var(CACHE_TTL_ENV).ok().as_deref())
}

fn cache() -> std::sync::MutexGuard<'static, PageCache> {
    static CACHE: OnceLock<Mutex<PageCache>> = OnceLock::new();
    CACHE
        .get_or_init(|| {
            Mutex::new(PageCache {
                pages: LruCache::new(NonZeroUsize::new(CACHE_ENTRIES).unwrap_or(NonZeroUsize::MIN)),
                bytes: 0,
            })
        })
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// Whether `host` is a loopback host (`localhost`, `127.0.0.0/8`, `::1`), a fully
/// qualified `localhost.` too, and `127.0.0.0/8` written as an IPv4-mapped IPv6 address
/// (`[::ffff:127.0.0.1]`), as the permission rules read it.
pub fn is_loopback_host(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.strip_suffix('.')
        .unwrap_or(bare)
        .eq_ignore_ascii_case("localhost")
        || bare
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.to_canonical().is_loopback())
}

/// Parses and checks a URL as Claude Code's `validateURL` does, then upgrades `http` to
/// `https` unless the host is loopback.
pub fn prepare_url(raw: &str) -> Result<Url, String> {
    // Counted as Claude Code counts (a JavaScript string's length: UTF-16 units), not in
    // bytes: a URL of 1,000 accented letters is within the limit.
    let length = raw.encode_utf16().count();
    if length > MAX_URL_LENGTH {
        return Err(format!(
            "The URL is {length} characters long; the limit is {MAX_URL_LENGTH}"
        ));
    }
    let mut url = Url::parse(raw).map_err(|e| format!("Invalid URL \"{raw}\": {e}"))?;
    if let Some(refusal) = refusal(&url) {
        return Err(format!("Invalid URL \"{raw}\": {}", refusal.words()));
    }
    if url.scheme() == "http" && !is_loopback_host(url.host_str().unwrap_or_default()) {
        url.set_scheme("https")
            .map_err(|()| format!("Invalid URL \"{raw}\": cannot switch it to https"))?;
    }
    Ok(url)
}

/// Why WebFetch never fetches a parsed URL ([`refusal`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    /// Its scheme is not `http` or `https`.
    Scheme,
    /// It has a user name or a password.
    Credentials,
    /// Its host is no dotted name (nor loopback).
    Host,
}

impl Refusal {
    /// The reason, as [`prepare_url`] gives it.
    fn words(self) -> &'static str {
        match self {
            Refusal::Scheme => "only http and https URLs can be fetched",
            Refusal::Credentials => "URLs with a user name or password are not fetched",
            Refusal::Host => "the host name must be a public domain name",
        }
    }
}

/// Why WebFetch never fetches `url` (Claude Code's `validateURL`, past the length), if it
/// does not: a scheme other than `http` and `https`, a user name or password, a host that is
/// no dotted name and not loopback.
fn refusal(url: &Url) -> Option<Refusal> {
    if !matches!(url.scheme(), "http" | "https") {
        return Some(Refusal::Scheme);
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Some(Refusal::Credentials);
    }
    let host = url.host_str().unwrap_or_default();
    (!is_loopback_host(host) && !host.contains('.')).then_some(Refusal::Host)
}

/// The error for a redirect from `from` to a URL WebFetch never fetches ([`refusal`], or
/// longer than [`MAX_URL_LENGTH`]), if `to` is one: handed back as Claude Code's "REDIRECT
/// DETECTED" text, it would only invite a call that fails validation. Credentials in it are
/// masked (`***`).
fn unfetchable_redirect(from: &Url, to: &Url) -> Option<String> {
    let length = to.as_str().encode_utf16().count();
    // Credentials are never shown, whatever else refuses the URL (`ftp://user:pw@host/`).
    let mut masked = to.clone();
    if !masked.username().is_empty() {
        let _ = masked.set_username("***");
    }
    if masked.password().is_some() {
        let _ = masked.set_password(Some("***"));
    }
    let to = &masked;
    match refusal(to) {
        Some(Refusal::Credentials) => Some(format!(
            "{from} redirects to a URL with credentials (a user name or password), which \
             WebFetch does not fetch: {to}"
        )),
        Some(Refusal::Scheme) => Some(format!(
            "{from} redirects to {to}, which WebFetch cannot fetch (only http and https URLs)"
        )),
        Some(Refusal::Host) => Some(format!(
            "{from} redirects to {to}, which WebFetch cannot fetch (the host name must be a \
             public domain name)"
        )),
        None if length > MAX_URL_LENGTH => Some(format!(
            "{from} redirects to a URL of {length} characters, which WebFetch cannot fetch (the \
             limit is {MAX_URL_LENGTH}): {to}"
        )),
        None => None,
    }
}

/// Whether a redirect from `from` to `to` stays on the same site: same scheme and port, and
/// the same host once one leading `www.` is removed.
pub fn is_permitted_redirect(from: &Url, to: &Url) -> bool {
    let strip = |u: &Url| {
        let host = u.host_str().unwrap_or_default().to_ascii_lowercase();
        match host.strip_prefix("www.") {
            Some(rest) => rest.to_owned(),
            None => host,
        }
    };
    from.scheme() == to.scheme()
        && from.port_or_known_default() == to.port_or_known_default()
        && to.username().is_empty()
        && to.password().is_none()
        && strip(from) == strip(to)
}

/// Most headers read in a response: Node's limit (hyper reads 100, and a page behind many
/// proxies and trackers can send more).
const MAX_RESPONSE_HEADERS: usize = 2000;

/// hyper's text for a response whose head is past its limits ([`MAX_RESPONSE_HEADERS`], or
/// about 400 KB). Its `is_parse_too_large` is built with its server feature only.
const HEAD_TOO_LARGE: &str = "message head is too large";

fn client(limits: WebFetchLimits) -> Result<reqwest::Client, ToolError> {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may win the race; either way a provider is installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        // Each request (each hop of a redirect) on a connection of its own: a server may
        // close the one it answered a redirect on just as the next request goes out on it
        // ("connection closed before message completed"), and that request is not retried.
        .pool_max_idle_per_host(0)
        .http1_max_headers(MAX_RESPONSE_HEADERS)
        .timeout(limits.timeout)
        .user_agent(concat!("Toolwright-WebFetch/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| ToolError::msg(format!("Cannot build the HTTP client: {e}")))
}

/// The text of a reqwest error with its causes (reqwest's top line is generic).
fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Why the server's certificate was refused, in words, when that is what `e` is (rustls says
/// `invalid peer certificate: UnknownIssuer`).
fn certificate_refusal(e: &reqwest::Error) -> Option<String> {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        // rustls's error reaches here inside I/O errors (two), whose `source` skips it.
        let mut inner: &(dyn std::error::Error + 'static) = s;
        while let Some(wrapped) = inner
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
        {
            inner = wrapped;
        }
        if let Some(rustls::Error::InvalidCertificate(refused)) = inner.downcast_ref() {
            return Some(certificate_words(refused));
        }
        source = s.source();
    }
    None
}

/// What a certificate refusal means, and for one not trusted, how to trust a private
/// certificate authority. reqwest's verifier reads the system's certificate authorities;
/// on Linux and the BSDs `SSL_CERT_FILE` or `SSL_CERT_DIR` replace them (rustls-native-certs,
/// read at each fetch); macOS and Windows ask the system's own trust store.
fn certificate_words(refused: &rustls::CertificateError) -> String {
    use rustls::CertificateError as E;
    match refused {
        // A signature that does not check is one made by no authority this machine trusts
        // (webpki says so when an authority it trusts has the certificate's issuer's name).
        E::UnknownIssuer
        | E::BadSignature
        | E::UnsupportedSignatureAlgorithmForPublicKeyContext { .. } => untrusted_certificate(),
        E::Other(other) if format!("{other:?}").contains("CaUsedAsEndEntity") => {
            untrusted_certificate()
        }
        E::Expired | E::ExpiredContext { .. } => "the server's certificate has expired".into(),
        E::NotValidYet | E::NotValidYetContext { .. } => {
            "the server's certificate is not valid yet (or this machine's clock is behind)".into()
        }
        E::NotValidForName | E::NotValidForNameContext { .. } => {
            "the server's certificate is for another host name".into()
        }
        E::Revoked => "the server's certificate has been revoked".into(),
        _ => "the server's certificate was refused".into(),
    }
}

/// [`certificate_words`] for a certificate no authority this machine trusts vouches for.
fn untrusted_certificate() -> String {
    let how = if cfg!(any(target_vendor = "apple", windows)) {
        "add the authority to the system's trust store"
    } else {
        "set SSL_CERT_FILE to a PEM file of the authorities to trust, or SSL_CERT_DIR to a \
         directory of them (either replaces the system's list, so include that too)"
    };
    format!(
        "the server's certificate is not trusted: it is self-signed, or issued by a \
         certificate authority this machine does not trust. To trust a private certificate \
         authority, {how}"
    )
}

/// Whether a same-site redirect to another host (adding or dropping `www.`) is followed:
/// when the session's permission rules let WebFetch reach `url` as they let it reach the URL
/// it was called with. Otherwise it is handed back as a redirect, for the model to fetch
/// (and be permitted) on its own.
///
/// As Claude Code, the new host is checked against the deny and ask rules only (a deny or
/// ask rule on `www.example.com` holds when `example.com` redirects there), not against
/// the allow rules: in a session that asks, a fetch of the new host would ask, and the same
/// site is taken as one. **Decision**: in a session that cannot ask (dontAsk mode,
/// `avoid_prompts`, a background agent, or the settings' `denyInsteadOfPrompting`, also
/// where the host turned prompts back on), where a fetch of a host no allow rule covers is
/// refused, the redirect is followed only when the whole decision for the new URL is an
/// allow (an allow rule covers it); otherwise it is handed back, so that with only
/// `WebFetch(domain:www.example.com)` allowed, `www.example.com` cannot serve
/// `example.com`'s content.
///
/// The rules are the session engine's when the host put one in the app state
/// ([`tool_perms::SessionEngine`]); else those of the context's permission settings (a
/// library host may keep its rules only there), as Grep and Glob read them
/// ([`tool_perms::PermissionEngine::for_walking`]), with the allow rules too when the
/// session cannot ask.
async fn redirect_clear(url: &Url, ctx: &ToolUseContext) -> bool {
    let perm = ctx.permission();
    let cannot_ask = perm.mode == tool_core::PermissionMode::DontAsk
        || perm.avoid_prompts
        || perm.deny_instead_of_prompting;
    let engine = match ctx.app_state().get::<tool_perms::SessionEngine>() {
        Some(tool_perms::SessionEngine(engine)) => engine,
        None => {
            if !cannot_ask && perm.deny.is_empty() && perm.ask.is_empty() {
                return true;
            }
            let rules = tool_core::ToolPermissionContext {
                deny: perm.deny.clone(),
                ask: perm.ask.clone(),
                allow: perm.allow.clone(),
                ..Default::default()
            };
            let mut roots = tool_perms::PathRoots::for_cwd(ctx.cwd());
            if let Some(home) = ctx.home() {
                roots.home = Some(home.to_path_buf());
            }
            Arc::new(tool_perms::PermissionEngine::new_lenient(&rules, roots).0)
        }
    };
    let input = serde_json::json!({"url": url.as_str(), "prompt": ""});
    if cannot_ask {
        // The decision before dontAsk turns an ask into a denial (and without counting it
        // as one: nothing was refused yet).
        return matches!(
            engine.explain_inner(&WebFetch, &input, ctx).await.result,
            tool_core::PermissionResult::Allow { .. }
        );
    }
    engine
        .check_rule_based(&WebFetch, &input, ctx)
        .await
        .is_none()
}

async fn fetch(
    url: &Url,
    limits: WebFetchLimits,
    ctx: &ToolUseContext,
) -> Result<Fetched, ToolError> {
    let client = client(limits)?;
    let mut current = url.clone();
    for _ in 0..=MAX_REDIRECTS {
        let response = client
            .get(current.clone())
            .header("Accept", "text/markdown, text/html, */*")
            .header("Accept-Encoding", ACCEPT_ENCODING)
            .send()
            .await
            .map_err(|e| {
                if e.is_timeout() {
                    ToolError::msg(format!(
                        "Fetching {current} timed out after {} ms",
                        limits.timeout.as_millis()
                    ))
                } else if describe(&e).contains(HEAD_TOO_LARGE) {
                    ToolError::msg(format!(
                        "The response from {current} was not read: it has more than \
                         {MAX_RESPONSE_HEADERS} headers, or headers too large in all"
                    ))
                } else if let Some(words) = certificate_refusal(&e) {
                    ToolError::msg(format!(
                        "Fetching {current} failed: {words} ({})",
                        describe(&e)
                    ))
                } else {
                    ToolError::msg(format!("Fetching {current} failed: {}", describe(&e)))
                }
            })?;
        let status = response.status();
        let code_text = status.canonical_reason().unwrap_or("").to_owned();
        // The redirects Claude Code follows or reports; a 300, 303 or 304 is an answer.
        if matches!(status.as_u16(), 301 | 302 | 307 | 308) {
            // Raw bytes in it are percent-encoded, as browsers and curl follow it: UTF-8
            // (`/café`) as the join would encode it, and bytes that are not UTF-8 (a Latin-1
            // `é`) each as it is (`/caf%E9`). An empty one (`Location: `, or white space
            // only) is no Location: joined, it would name this URL again, and the fetch would
            // loop to the redirect limit (Claude Code: "Redirect missing Location header").
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .filter(|value| !value.as_bytes().iter().all(u8::is_ascii_whitespace))
                .ok_or_else(|| {
                    ToolError::msg(format!(
                        "{current} answered {status} without a Location header"
                    ))
                })?;
            let location: Cow<'_, str> = percent_encoding::percent_encode(
                location.as_bytes(),
                &percent_encoding::AsciiSet::EMPTY,
            )
            .into();
            let next = current.join(&location).map_err(|e| {
                ToolError::msg(format!(
                    "{current} redirects to an invalid URL {location}: {e}"
                ))
            })?;
            // Only a change of host (adding or dropping `www.`) can meet other rules.
            if is_permitted_redirect(&current, &next)
                && (next.host_str() == current.host_str() || redirect_clear(&next, ctx).await)
            {
                current = next;
                continue;
            }
            if let Some(refused) = unfetchable_redirect(&current, &next) {
                return Err(ToolError::msg(refused));
            }
            return Ok(Fetched::Redirect {
                to: next.to_string(),
                code: status.as_u16(),
                code_text,
            });
        }
        if !status.is_success() {
            let reason = if code_text.is_empty() {
                String::new()
            } else {
                format!(" ({code_text})")
            };
            return Err(ToolError::msg(format!(
                "Request failed with status code {}{reason} for {current}",
                status.as_u16()
            )));
        }
        if let Some(len) = response.content_length()
            && len > limits.max_bytes
        {
            return Err(ToolError::msg(format!(
                "The response from {current} is {len} bytes; the limit is {} bytes",
                limits.max_bytes
            )));
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        // Several header lines are one list, in order.
        let encoding = response
            .headers()
            .get_all(reqwest::header::CONTENT_ENCODING)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect::<Vec<_>>()
            .join(", ")
            .trim()
            .to_ascii_lowercase();
        let body = read_body(response, &current, limits).await?;
        // Decompressing and converting up to 10 MiB is CPU work: off the async workers.
        let at = current.clone();
        let (bytes, converted) = crate::fsutil::blocking(move || {
            let body = decode_content(body, &encoding, &at, limits.max_bytes)?;
            Ok((body.len() as u64, to_markdown(&body, &content_type)))
        })
        .await?;
        // Nothing to read: said so, and no small model is asked about it.
        let converted = if bytes == 0 || (!converted.note && converted.text.trim().is_empty()) {
            Converted::note(empty_note(&current, status.as_u16(), &code_text, bytes))
        } else {
            converted
        };
        return Ok(Fetched::Page(Page {
            url: current,
            fetched: Instant::now(),
            code: status.as_u16(),
            code_text,
            bytes,
            content: converted.text,
            note: converted.note,
        }));
    }
    Err(ToolError::msg(format!(
        "Too many redirects (more than {MAX_REDIRECTS}) fetching {url}"
    )))
}

/// The note for a page with nothing to read at `url`: no body (`204 No Content`, a `200`
/// with none), or one of `bytes` bytes that hold no text once converted (only white space, an
/// HTML page of scripts).
fn empty_note(url: &Url, code: u16, code_text: &str, bytes: u64) -> String {
    let status = if code_text.is_empty() {
        code.to_string()
    } else {
        format!("{code} {code_text}")
    };
    let why = if bytes > 0 {
        format!("{status}: its {bytes} bytes hold no text once converted to Markdown")
    } else if code == 204 {
        // "No Content" says it already.
        status
    } else {
        format!("{status}, no content")
    };
    format!("[The page at {url} is empty ({why}).]")
}

/// The content codings WebFetch decodes, as its requests' `Accept-Encoding` names them
/// (brotli and zstd are not: a server that is told nothing may pick any).
const ACCEPT_ENCODING: &str = "gzip, deflate";

/// `body` without its `Content-Encoding`: each coding of the list undone, the last applied
/// first (`gzip, gzip` is gzip twice; `identity` is nothing), each to at most `max_bytes` (a
/// small body can inflate to gigabytes). gzip and deflate are decoded; another compression
/// is refused, clearly, rather than shown to the model as text.
fn decode_content(
    body: Vec<u8>,
    encoding: &str,
    url: &Url,
    max_bytes: u64,
) -> Result<Vec<u8>, ToolError> {
    let mut body = body;
    for coding in encoding.rsplit(',').map(str::trim) {
        body = decode_coding(body, coding, encoding, url, max_bytes)?;
    }
    Ok(body)
}

/// `body` with one content coding (`coding`, of the header's `encoding`) undone; see
/// [`decode_content`].
fn decode_coding(
    body: Vec<u8>,
    coding: &str,
    encoding: &str,
    url: &Url,
    max_bytes: u64,
) -> Result<Vec<u8>, ToolError> {
    use std::io::Read as _;
    let limit = max_bytes.saturating_add(1);
    let failed = |e: std::io::Error| {
        ToolError::msg(format!(
            "The response from {url} does not decode as {encoding}: {e}"
        ))
    };
    let mut decoder: Box<dyn std::io::Read + '_> = match coding {
        // No body (a 204, a HEAD-like answer) has nothing to decode.
        _ if body.is_empty() => return Ok(body),
        "" | "identity" | "none" => return Ok(body),
        "gzip" | "x-gzip" => {
            // Member by member (a body may be several); bytes after a member that start no
            // other are ignored, as curl and Node's zlib ignore them.
            let mut decoded = Vec::new();
            let mut rest = body.as_slice();
            loop {
                let mut member = flate2::bufread::GzDecoder::new(rest);
                (&mut member)
                    .take(limit - decoded.len() as u64)
                    .read_to_end(&mut decoded)
                    .map_err(failed)?;
                rest = member.into_inner();
                if decoded.len() as u64 >= limit || !rest.starts_with(&[0x1f, 0x8b]) {
                    break;
                }
            }
            return within_limit(decoded, url, max_bytes);
        }
        // HTTP's `deflate` is zlib-wrapped; some servers send it raw.
        "deflate" if body.first().is_some_and(|b| b & 0x0f == 8) => {
            Box::new(flate2::read::ZlibDecoder::new(body.as_slice()))
        }
        "deflate" => Box::new(flate2::read::DeflateDecoder::new(body.as_slice())),
        // A value naming no compression (`utf-8`, seen in the wild) over a body that does
        // not start like gzip: the body as it is.
        other
            if !body.starts_with(&[0x1f, 0x8b])
                && !matches!(other, "br" | "zstd" | "compress" | "x-compress") =>
        {
            return Ok(body);
        }
        _ => {
            return Err(ToolError::msg(format!(
                "The response from {url} is compressed with `{encoding}`, which WebFetch does \
                 not decode (it asks for {ACCEPT_ENCODING} only)"
            )));
        }
    };
    let mut decoded = Vec::new();
    (&mut decoder)
        .take(limit)
        .read_to_end(&mut decoded)
        .map_err(failed)?;
    within_limit(decoded, url, max_bytes)
}

/// `decoded`, unless it is over `max_bytes` (a small body can inflate to gigabytes).
fn within_limit(decoded: Vec<u8>, url: &Url, max_bytes: u64) -> Result<Vec<u8>, ToolError> {
    if decoded.len() as u64 > max_bytes {
        return Err(ToolError::msg(format!(
            "The response from {url} is larger than the limit of {max_bytes} bytes once decompressed"
        )));
    }
    Ok(decoded)
}

async fn read_body(
    mut response: reqwest::Response,
    url: &Url,
    limits: WebFetchLimits,
) -> Result<Vec<u8>, ToolError> {
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() as u64 + chunk.len() as u64 > limits.max_bytes {
                    return Err(ToolError::msg(format!(
                        "The response from {url} is larger than the limit of {} bytes",
                        limits.max_bytes
                    )));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(body),
            Err(e) if e.is_timeout() => {
                return Err(ToolError::msg(format!(
                    "Fetching {url} timed out after {} ms",
                    limits.timeout.as_millis()
                )));
            }
            Err(e) => {
                return Err(ToolError::msg(format!(
                    "Reading the response from {url} failed: {}",
                    describe(&e)
                )));
            }
        }
    }
}

/// How deep the HTML tree may nest before its deeper part is flattened. The conversion to
/// Markdown recurses once per level, and a page of 200,000 nested `<span>`s would overflow
/// the thread's stack, which aborts the process (no unwinding catches that).
const MAX_HTML_DEPTH: usize = 128;

/// Flattens `root`'s tree below `max_depth`: a node at that depth gets all its descendants,
/// in document order and without children of their own, as its children (and is their
/// parent). Every text node
/// is kept, in order; only the structure below that depth is lost. Iterative, so a tree of
/// any depth is safe to walk.
fn flatten_below(root: &std::rc::Rc<htmd::Node>, max_depth: usize) {
    let mut stack = vec![(root.clone(), 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth < max_depth {
            stack.extend(
                node.children
                    .borrow()
                    .iter()
                    .map(|c| (c.clone(), depth + 1)),
            );
            continue;
        }
        let mut flat = Vec::new();
        let mut pending: Vec<_> = node.children.take();
        pending.reverse();
        while let Some(descendant) = pending.pop() {
            let mut children = descendant.children.take();
            children.reverse();
            pending.extend(children);
            // Its parent is `node` now: the conversion walks up through parents (is this
            // inside a `<pre>`?), and the old chain would make that walk as deep as the page.
            descendant.parent.set(Some(std::rc::Rc::downgrade(&node)));
            flat.push(descendant);
        }
        *node.children.borrow_mut() = flat;
    }
}

/// The elements whose Markdown prefixes every line of their content (`> `, a list's
/// indentation): the Markdown of a page grows with its lines times how deep these nest (2 GB
/// from a 10 MB page of 127 nested quotes). Past [`MAX_PREFIX_DEPTH`] of them, one is
/// replaced by its content (a list's items too), the text kept.
const PREFIXING: [&str; 3] = ["blockquote", "ul", "ol"];

/// See [`PREFIXING`]: far past what pages nest.
const MAX_PREFIX_DEPTH: usize = 8;

/// Inline elements whose adjacent copies `htmd` merges (`<b>a</b><b>b</b>` is `**ab**`).
/// It merges one pair at a time, moving every later sibling each time: quadratic in a run
/// of them (syntax-highlighted code is tens of thousands of `<span>`s side by side), minutes
/// of a core for a 10 MB page. [`tidy_for_markdown`] merges them first, in one pass, as
/// `htmd` would.
const MERGED_INLINE: [&str; 22] = [
    "abbr", "b", "big", "cite", "code", "del", "em", "font", "i", "ins", "kbd", "mark", "q", "s",
    "samp", "small", "span", "strike", "strong", "sub", "sup", "u",
];

/// Prepares a parsed page for `htmd`, in one pass over the tree: adjacent inline elements
/// it would merge are merged ([`MERGED_INLINE`]), and quotes and lists nested past
/// [`MAX_PREFIX_DEPTH`] are replaced by their content ([`PREFIXING`]). The text, and its
/// order, are kept. Iterative, so a tree of any depth is safe to walk.
fn tidy_for_markdown(root: &std::rc::Rc<htmd::Node>) {
    use std::collections::VecDeque;
    let prefixing = |node: &htmd::Node| element_name(node).is_some_and(|n| PREFIXING.contains(&n));
    // (node, how many prefixing elements it and its ancestors are)
    let mut stack = vec![(root.clone(), 0usize)];
    while let Some((node, depth)) = stack.pop() {
        // (child, whether it is an item of a list that was replaced by its content)
        let mut queue: VecDeque<_> = node
            .children
            .take()
            .into_iter()
            .map(|c| (c, false))
            .collect();
        let mut kept: Vec<std::rc::Rc<htmd::Node>> = Vec::with_capacity(queue.len());
        while let Some((child, orphan_item)) = queue.pop_front() {
            let name = element_name(&child);
            let too_deep = depth >= MAX_PREFIX_DEPTH && prefixing(&child);
            if too_deep || (orphan_item && name == Some("li")) {
                let items = too_deep && matches!(name, Some("ul" | "ol"));
                // A line break where the element ended, so that two items' texts do not run
                // together (`<li>one</li><li>two</li>`).
                queue.push_front((line_break(), false));
                for grandchild in child.children.take().into_iter().rev() {
                    queue.push_front((grandchild, items));
                }
                continue;
            }
            if kept.last().is_some_and(|last| merged_into(last, &child)) {
                continue;
            }
            child.parent.set(Some(std::rc::Rc::downgrade(&node)));
            kept.push(child);
        }
        stack.extend(
            kept.iter()
                .map(|c| (c.clone(), depth + usize::from(prefixing(c)))),
        );
        *node.children.borrow_mut() = kept;
    }
}

/// A line break: a `<br>` element (a text node's `\n` is whitespace to `htmd`, which
/// would run the lines together).
fn line_break() -> std::rc::Rc<htmd::Node> {
    use html5ever::{QualName, local_name, ns};
    markup5ever_rcdom::Node::new(markup5ever_rcdom::NodeData::Element {
        name: QualName::new(None, ns!(html), local_name!("br")),
        attrs: std::cell::RefCell::new(Vec::new()),
        template_contents: std::cell::RefCell::new(None),
        mathml_annotation_xml_integration_point: false,
    })
}

/// How many times what its cells write a table's laid-out Markdown may be
/// ([`table_too_wide`]): every cell is padded to its column's widest, so one wide cell over
/// many rows multiplies (a 580 KB page made 6 GB).
const MAX_TABLE_GROWTH: usize = 8;

/// The Markdown a page's tables may have past [`MAX_TABLE_GROWTH`], all of them together
/// ([`table_too_wide`]): one allowance a table, and a 5 MB page of 200 tables made 400
/// million characters.
const TABLE_ALLOWANCE: usize = 1 << 20;

/// Whether a table is too wide to lay out, and is written as plain rows ([`table_block`]):
/// its padded Markdown, `rows` (each its cells' Markdown as written, escapes and emphasis
/// markers included) in columns of `widths` characters, would be more than
/// [`MAX_TABLE_GROWTH`] times what the cells write unpadded, and more than what is left of
/// the page's `allowance`. A table laid out past that ratio uses up its size of the
/// allowance, so the page's tables stay within a small multiple of its HTML.
fn table_too_wide(rows: &[Vec<String>], widths: &[usize], allowance: &AtomicUsize) -> bool {
    // Each cell `| `, its padded text and a space; then the closing `|` and the line end.
    let line = widths.iter().map(|w| w + 3).sum::<usize>() + 2;
    let padded = line.saturating_mul(rows.len() + 1);
    let written = rows
        .iter()
        .map(|row| row.iter().map(|c| c.chars().count() + 3).sum::<usize>() + 2)
        .sum::<usize>();
    if padded / MAX_TABLE_GROWTH <= written {
        return false;
    }
    allowance
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
            left.checked_sub(padded)
        })
        .is_err()
}

/// The rows of `table`, each its cells (`td` and `th`), in document order: the table's own
/// rows (directly or in `thead`, `tbody`, `tfoot`), not those of a table inside a cell.
fn table_rows(table: &htmd::Node) -> Vec<Vec<std::rc::Rc<htmd::Node>>> {
    let children_named = |node: &htmd::Node, names: &[&str]| -> Vec<std::rc::Rc<htmd::Node>> {
        node.children
            .borrow()
            .iter()
            .filter(|c| element_name(c).is_some_and(|n| names.contains(&n)))
            .cloned()
            .collect()
    };
    let mut rows = Vec::new();
    for part in children_named(table, &["thead", "tbody", "tfoot", "tr"]) {
        if element_name(&part) == Some("tr") {
            rows.push(part);
        } else {
            rows.extend(children_named(&part, &["tr"]));
        }
    }
    rows.iter()
        .map(|row| children_named(row, &["td", "th"]))
        .collect()
}

/// `htmd`'s handler result type.
type Handled = Option<htmd::element_handler::HandlerResult>;

/// A `<pre>` as a fenced code block. `htmd` fences only a `<pre>` holding a `<code>`; the
/// text of one without (Sphinx's and GitHub's highlighted code: `<pre><span>…`) it reads as
/// Markdown (`>>>` a nested quote, `# Install` a heading, `- item` a list item). Here its
/// text is taken as written, the text of elements inside (`<span>`s) kept and a `<br>` a
/// line break, in a fence longer than any run of backticks in it (at least three), with
/// the language a `language-` class names. A `<pre>` of `<code>` elements only (and white
/// space) is left to `htmd`, which fences them the same way.
fn pre_block(
    handlers: &dyn htmd::element_handler::Handlers,
    element: htmd::Element<'_>,
) -> Handled {
    use markup5ever_rcdom::NodeData;
    let only_code = {
        let children = element.node.children.borrow();
        let mut code = false;
        let only = children.iter().all(|c| match &c.data {
            NodeData::Text { contents } => contents.borrow().trim().is_empty(),
            NodeData::Comment { .. } => true,
            _ if element_name(c) == Some("code") => {
                code = true;
                true
            }
            _ => false,
        });
        only && code
    };
    if only_code {
        return handlers.fallback(element);
    }
    let text = preformatted_text(element.node);
    let text = text.trim_matches('\n');
    if text.trim().is_empty() {
        return None;
    }
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let language = element
        .attrs
        .iter()
        .find(|a| &*a.name.local == "class")
        .and_then(|a| {
            a.value
                .split_ascii_whitespace()
                .find_map(|class| class.strip_prefix("language-"))
                .map(str::to_owned)
        })
        .unwrap_or_default();
    Some(format!("\n\n{fence}{language}\n{text}\n{fence}\n\n").into())
}

/// The text of `node`'s descendants, in document order, a `<br>` a line break; scripts and
/// styles left out. Iterative.
fn preformatted_text(node: &htmd::Node) -> String {
    use markup5ever_rcdom::NodeData;
    let mut text = String::new();
    let mut stack: Vec<std::rc::Rc<htmd::Node>> =
        node.children.borrow().iter().rev().cloned().collect();
    while let Some(n) = stack.pop() {
        match &n.data {
            NodeData::Text { contents } => text.push_str(&contents.borrow()),
            NodeData::Element { name, .. } => match &*name.local {
                "br" => text.push('\n'),
                "script" | "style" | "template" => {}
                _ => stack.extend(n.children.borrow().iter().rev().cloned()),
            },
            _ => {}
        }
    }
    text
}

/// A `<table>` as a GFM table, its first row the header: any table of rows and cells (`htmd`
/// lays out only one with a `<th>`, and makes the cells of any other paragraphs, losing its
/// rows and columns). A cell's content is one line (its blocks and line breaks joined by a
/// space), a `|` in it escaped as GFM escapes it (`\|`, which holds in a code span too; `htmd`
/// writes `&#124;`, which stays literal there); missing cells are empty. A table inside a
/// cell is that cell's text: its cells' text, one after the other. A table without cells is
/// its content, as a block. A table too wide to lay out ([`table_too_wide`], which takes
/// from the page's `allowance`) is its caption, then its rows, each a line of its cells
/// between ` | `.
fn table_block(
    handlers: &dyn htmd::element_handler::Handlers,
    element: htmd::Element<'_>,
    allowance: &AtomicUsize,
) -> Handled {
    let rows: Vec<Vec<String>> = table_rows(element.node)
        .iter()
        .filter(|row| !row.is_empty())
        .map(|row| {
            row.iter()
                .map(|cell| cell_text(&handlers.walk_children(cell).content))
                .collect()
        })
        .collect();
    if rows.is_empty() {
        let content = handlers.walk_children(element.node).content;
        let content = content.trim_matches('\n');
        return (!content.is_empty()).then(|| format!("\n\n{content}\n\n").into());
    }
    if inside_table_cell(element.node) {
        let text: Vec<&str> = rows
            .iter()
            .flatten()
            .map(String::as_str)
            .filter(|t| !t.is_empty())
            .collect();
        return Some(format!("\n\n{}\n\n", text.join(" ")).into());
    }
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![3; columns];
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut table = String::from("\n\n");
    for caption in element
        .node
        .children
        .borrow()
        .iter()
        .filter(|c| element_name(c) == Some("caption"))
    {
        let caption = one_line(&handlers.walk_children(caption).content);
        if !caption.is_empty() {
            table.push_str(&caption);
            table.push('\n');
        }
    }
    if table_too_wide(&rows, &widths, allowance) {
        for row in &rows {
            let line = row.join(" | ");
            table.push_str(line.trim_end());
            table.push('\n');
        }
        table.push('\n');
        return Some(table.into());
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut line = String::from("|");
        for width in &widths {
            let cell = cells.next().unwrap_or("");
            let pad = width - cell.chars().count();
            line.push(' ');
            line.push_str(cell);
            line.extend(std::iter::repeat_n(' ', pad));
            line.push_str(" |");
        }
        line.push('\n');
        line
    };
    let dashes: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    for (i, row) in rows.iter().enumerate() {
        table.push_str(&line(&mut row.iter().map(String::as_str)));
        if i == 0 {
            table.push_str(&line(&mut dashes.iter().map(String::as_str)));
        }
    }
    table.push('\n');
    Some(table.into())
}

/// A table cell's Markdown as one cell of a GFM table: [`one_line`], each `|` escaped
/// (`\|`).
fn cell_text(markdown: &str) -> String {
    one_line(markdown).replace('|', "\\|")
}

/// `markdown` on one line: its lines trimmed and joined by a space, blank ones left out.
fn one_line(markdown: &str) -> String {
    markdown
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `node` is inside a table cell (`td` or `th`).
fn inside_table_cell(node: &DomHandle) -> bool {
    let mut at = parent_of(node);
    while let Some(parent) = at {
        if matches!(element_name(&parent), Some("td" | "th")) {
            return true;
        }
        at = parent_of(&parent);
    }
    false
}

/// An element's tag name.
fn element_name(node: &htmd::Node) -> Option<&str> {
    match &node.data {
        markup5ever_rcdom::NodeData::Element { name, .. } => Some(&name.local),
        _ => None,
    }
}

/// Merges `next` into `last` as `htmd` merges adjacent inline elements: the same tag (`i`
/// and `em`, `b` and `strong` count as one), the same attributes, each holding one text
/// only. Whether it did.
fn merged_into(last: &htmd::Node, next: &htmd::Node) -> bool {
    use markup5ever_rcdom::NodeData;
    let (
        NodeData::Element {
            name: n1,
            attrs: a1,
            ..
        },
        NodeData::Element {
            name: n2,
            attrs: a2,
            ..
        },
    ) = (&last.data, &next.data)
    else {
        return false;
    };
    let (n1, n2) = (&*n1.local, &*n2.local);
    let same = n1 == n2
        || matches!(
            (n1, n2),
            ("i", "em") | ("em", "i") | ("b", "strong") | ("strong", "b")
        );
    if !same || !MERGED_INLINE.contains(&n1) || *a1.borrow() != *a2.borrow() {
        return false;
    }
    let (c1, c2) = (last.children.borrow(), next.children.borrow());
    let ([first], [second]) = (&c1[..], &c2[..]) else {
        return false;
    };
    let (NodeData::Text { contents: x }, NodeData::Text { contents: y }) =
        (&first.data, &second.data)
    else {
        return false;
    };
    x.borrow_mut().push_tendril(&y.borrow());
    true
}

/// How many elements may be open at once when the HTML is parsed ([`crate::html_depth`]):
/// start tags past that (and their end tags) are left out, their text kept. Far past what
/// pages nest, and small enough that the parser's work per start tag stays small.
const MAX_PARSE_DEPTH: usize = 512;

/// How long parsing a page's HTML may take. The parser's work per tag grows with what is
/// open, and markup can be built to keep that growing in ways no scan ahead of it foresees
/// ([`crate::html_depth`] catches plain nesting): past this the page is given up, and the
/// parse stops (it runs where nothing could stop it otherwise: the call's timeout would
/// leave it burning a core for minutes).
const MAX_PARSE_TIME: Duration = Duration::from_secs(10);

/// Most nodes (elements, text, comments) the parse of a page may make, an element counting
/// one more for each of its attributes: past this the tree is cut ([`BoundedDom`]). The
/// parser can make far more nodes than the page has tags: it re-creates every formatting
/// element still open in each new paragraph ("reconstruct the active formatting
/// elements"), attributes and all, so 400 `<b>`s reopened in 15,000 `<p>`s made six
/// million nodes and 1.5 GB from 64 KB, and one `<b>` of 4,000 attributes reopened in
/// 10,000 paragraphs 1.6 GB from 63 KB. Real pages of 8 MB make under 500,000 nodes (about
/// 200 bytes each; an attribute's copy is smaller, its value shared); this many take at
/// most about 250 MB, and hold megabytes of Markdown, far more than the model reads.
const MAX_PARSE_NODES: usize = 1_000_000;

/// How much HTML the parser is given at a time: the deadline and [`MAX_PARSE_NODES`] are
/// checked between pieces.
const PARSE_PIECE: usize = 4096;

/// `markup5ever_rcdom`'s `RcDom`, counting the nodes put in it: past its budget the tree
/// is frozen, nothing more attached, moved or removed, so that what the parser still
/// creates is dropped with the parser's own references to it; `cut` says so. The parse
/// errors are not kept (`RcDom` keeps each one, and nothing reads them).
struct BoundedDom {
    dom: markup5ever_rcdom::RcDom,
    /// Nodes made so far.
    nodes: std::cell::Cell<usize>,
    budget: usize,
    /// Whether the budget was passed (and the tree frozen).
    cut: std::cell::Cell<bool>,
}

type DomHandle = markup5ever_rcdom::Handle;

impl BoundedDom {
    fn new(budget: usize) -> Self {
        Self {
            dom: markup5ever_rcdom::RcDom::default(),
            // The document.
            nodes: std::cell::Cell::new(1),
            budget,
            cut: std::cell::Cell::new(false),
        }
    }

    /// Counts `n` more nodes; past the budget the tree is frozen.
    fn count(&self, n: usize) {
        let nodes = self.nodes.get().saturating_add(n);
        self.nodes.set(nodes);
        if nodes > self.budget {
            self.cut.set(true);
        }
    }

    /// Makes `change`, which adds `child` to `parent` (before `sibling`, or at the end),
    /// unless the tree is frozen. A text that makes a node of its own (one next to text
    /// joins it) is counted first, and not added past the budget; an element was counted
    /// when it was created.
    fn add(
        &self,
        parent: Option<&DomHandle>,
        sibling: Option<&DomHandle>,
        child: html5ever::tree_builder::NodeOrText<DomHandle>,
        change: impl FnOnce(html5ever::tree_builder::NodeOrText<DomHandle>),
    ) {
        if !self.cut.get()
            && matches!(child, html5ever::tree_builder::AppendText(_))
            && !parent.is_some_and(|p| joins_text(p, sibling))
        {
            self.count(1);
        }
        if !self.cut.get() {
            change(child);
        }
    }
}

/// Whether text added to `parent` before `sibling` (at the end when `None`) joins the text
/// node before it, as `RcDom` joins adjacent text.
fn joins_text(parent: &DomHandle, sibling: Option<&DomHandle>) -> bool {
    let children = parent.children.borrow();
    let at = match sibling {
        Some(sibling) => children
            .iter()
            .position(|c| std::rc::Rc::ptr_eq(c, sibling)),
        None => Some(children.len()),
    };
    at.and_then(|at| at.checked_sub(1))
        .and_then(|before| children.get(before))
        .is_some_and(|c| matches!(c.data, markup5ever_rcdom::NodeData::Text { .. }))
}

/// `node`'s parent, if it has one.
fn parent_of(node: &DomHandle) -> Option<DomHandle> {
    let parent = node.parent.take();
    let strong = parent.as_ref().and_then(std::rc::Weak::upgrade);
    node.parent.set(parent);
    strong
}

impl html5ever::tree_builder::TreeSink for BoundedDom {
    type Handle = DomHandle;
    type Output = Self;
    type ElemName<'a>
        = html5ever::ExpandedName<'a>
    where
        Self: 'a;

    fn finish(self) -> Self {
        self
    }

    fn parse_error(&self, _msg: Cow<'static, str>) {}

    fn get_document(&self) -> DomHandle {
        self.dom.get_document()
    }

    fn elem_name<'a>(&'a self, target: &'a DomHandle) -> html5ever::ExpandedName<'a> {
        self.dom.elem_name(target)
    }

    fn create_element(
        &self,
        name: html5ever::QualName,
        attrs: Vec<html5ever::Attribute>,
        flags: html5ever::tree_builder::ElementFlags,
    ) -> DomHandle {
        // A template's content is a node of its own; each attribute is copied with the
        // element whenever the parser re-creates it.
        self.count(1 + usize::from(flags.template) + attrs.len());
        self.dom.create_element(name, attrs, flags)
    }

    fn create_comment(&self, text: html5ever::tendril::StrTendril) -> DomHandle {
        self.count(1);
        self.dom.create_comment(text)
    }

    fn create_pi(
        &self,
        target: html5ever::tendril::StrTendril,
        data: html5ever::tendril::StrTendril,
    ) -> DomHandle {
        self.count(1);
        self.dom.create_pi(target, data)
    }

    fn append(&self, parent: &DomHandle, child: html5ever::tree_builder::NodeOrText<DomHandle>) {
        self.add(Some(parent), None, child, |child| {
            self.dom.append(parent, child);
        });
    }

    fn append_based_on_parent_node(
        &self,
        element: &DomHandle,
        prev_element: &DomHandle,
        child: html5ever::tree_builder::NodeOrText<DomHandle>,
    ) {
        // As `RcDom` does, through this sink's own methods (which count and freeze).
        if parent_of(element).is_some() {
            self.append_before_sibling(element, child);
        } else {
            self.append(prev_element, child);
        }
    }

    fn append_doctype_to_document(
        &self,
        name: html5ever::tendril::StrTendril,
        public_id: html5ever::tendril::StrTendril,
        system_id: html5ever::tendril::StrTendril,
    ) {
        if self.cut.get() {
            return;
        }
        self.count(1);
        self.dom
            .append_doctype_to_document(name, public_id, system_id);
    }

    fn get_template_contents(&self, target: &DomHandle) -> DomHandle {
        self.dom.get_template_contents(target)
    }

    fn same_node(&self, x: &DomHandle, y: &DomHandle) -> bool {
        self.dom.same_node(x, y)
    }

    fn set_quirks_mode(&self, mode: html5ever::tree_builder::QuirksMode) {
        self.dom.set_quirks_mode(mode);
    }

    fn append_before_sibling(
        &self,
        sibling: &DomHandle,
        new_node: html5ever::tree_builder::NodeOrText<DomHandle>,
    ) {
        let parent = parent_of(sibling);
        self.add(parent.as_ref(), Some(sibling), new_node, |new_node| {
            self.dom.append_before_sibling(sibling, new_node);
        });
    }

    fn add_attrs_if_missing(&self, target: &DomHandle, attrs: Vec<html5ever::Attribute>) {
        if !self.cut.get() {
            self.dom.add_attrs_if_missing(target, attrs);
        }
    }

    fn remove_from_parent(&self, target: &DomHandle) {
        if !self.cut.get() {
            self.dom.remove_from_parent(target);
        }
    }

    fn reparent_children(&self, node: &DomHandle, new_parent: &DomHandle) {
        if !self.cut.get() {
            self.dom.reparent_children(node, new_parent);
        }
    }

    fn is_mathml_annotation_xml_integration_point(&self, handle: &DomHandle) -> bool {
        self.dom.is_mathml_annotation_xml_integration_point(handle)
    }

    /// Nothing: `RcDom`'s own walks the whole `<select>` at every `</option>` (quadratic:
    /// 40,000 options passed the parse deadline) and, as its search compares the select's
    /// name where it means each node's, never finds a `<selectedcontent>` to clone into.
    /// The Markdown shows no `<selectedcontent>` either way.
    fn maybe_clone_an_option_into_selectedcontent(&self, _option: &DomHandle) {}
}

/// A page's parsed HTML ([`parse_html`]).
struct ParsedHtml {
    /// The document.
    tree: std::rc::Rc<htmd::Node>,
    /// Whether the parse stopped at [`MAX_PARSE_NODES`]: the tree holds the page up to
    /// there.
    cut: bool,
}

/// `html` parsed (as `htmd` parses it, fed piece by piece) into at most `max_nodes` nodes
/// (the parse stops past them: the tree is the page up to there), or `None` when that was
/// not done by `deadline`.
fn parse_html(html: &str, deadline: Instant, max_nodes: usize) -> Option<ParsedHtml> {
    use html5ever::tendril::TendrilSink as _;
    let mut parser = html5ever::parse_document(
        BoundedDom::new(max_nodes),
        html5ever::ParseOpts {
            tree_builder: html5ever::tree_builder::TreeBuilderOpts {
                scripting_enabled: true,
                ..Default::default()
            },
            ..Default::default()
        },
    );
    let mut rest = html;
    while !rest.is_empty() && !parser.tokenizer.sink.sink.cut.get() {
        let mut at = rest.len().min(PARSE_PIECE);
        while !rest.is_char_boundary(at) {
            at += 1;
        }
        let (piece, tail) = rest.split_at(at);
        parser.process(piece.into());
        if Instant::now() > deadline {
            return None;
        }
        rest = tail;
    }
    let sink = parser.finish();
    Some(ParsedHtml {
        tree: sink.dom.document,
        cut: sink.cut.get(),
    })
}

/// A page as the model reads it ([`to_markdown`]).
#[derive(Debug)]
struct Converted {
    /// Its Markdown (or text), or a note saying why nothing of it is shown.
    text: String,
    /// Whether `text` is only a note for the main model (binary content described, HTML
    /// that could not be converted in time, an empty page): no page for a small model to
    /// read.
    note: bool,
}

impl Converted {
    fn page(text: String) -> Self {
        Self { text, note: false }
    }

    fn note(text: String) -> Self {
        Self { text, note: true }
    }
}

/// Whether a response of type `mime` is never text, whatever its bytes and whatever charset
/// it declares: a PDF (an uncompressed one is ASCII, but its object syntax is no page to
/// read), an image, audio, video, a font, an archive.
fn never_text(mime: &str) -> bool {
    mime == "application/pdf"
        || mime.ends_with("zip")
        || matches!(
            mime,
            "application/x-tar"
                | "application/x-bzip2"
                | "application/x-xz"
                | "application/zstd"
                | "application/x-7z-compressed"
                | "application/vnd.rar"
                | "application/x-rar-compressed"
                | "application/java-archive"
                | "application/wasm"
        )
        || ["image/", "audio/", "video/", "font/"]
            .iter()
            .any(|p| mime.starts_with(p))
}

/// The converter of one page's HTML to Markdown: scripts and styles left out, `<pre>`
/// ([`pre_block`]) and tables ([`table_block`], with the page's [`TABLE_ALLOWANCE`]) as
/// here, the rest as `htmd` writes it.
fn converter() -> htmd::HtmlToMarkdown {
    let allowance = AtomicUsize::new(TABLE_ALLOWANCE);
    htmd::HtmlToMarkdown::builder()
        .skip_tags(vec!["script", "style", "noscript", "template"])
        .add_handler(vec!["pre"], pre_block)
        .add_handler(
            vec!["table"],
            move |handlers: &dyn htmd::element_handler::Handlers, element: htmd::Element<'_>| {
                table_block(handlers, element, &allowance)
            },
        )
        .build()
}

/// The page as the model reads it: HTML (and XHTML) as Markdown, other text as it is,
/// binary described.
fn to_markdown(body: &[u8], content_type: &str) -> Converted {
    let mime = content_type.split(';').next().unwrap_or("").trim();
    // A textual type with no charset and NUL bytes in it (and no byte-order mark) is binary
    // served under the wrong label (a gzip file served as `text/html`). For HTML, NUL bytes
    // in its first 1445 bytes (what the MIME sniffing standard reads of a resource): a
    // binary file has them in its header, and a long page with one stray NUL is a page.
    let unlabelled =
        charset_label(content_type).is_none() && encoding_rs::Encoding::for_bom(body).is_none();
    let mislabelled = unlabelled && body.contains(&0);
    let xhtml = mime == "application/xhtml+xml";
    let looks_html = mime.is_empty() && {
        let head = String::from_utf8_lossy(&body[..body.len().min(512)]).to_ascii_lowercase();
        head.contains("<html") || head.contains("<!doctype html")
    };
    let binary_html = unlabelled && body[..body.len().min(1445)].contains(&0);
    if (mime == "text/html" || xhtml || looks_html) && !binary_html {
        let html = if xhtml {
            // An XML document: its declaration names its encoding, and what XML reads as
            // an empty element or as text the HTML parser must too.
            let text = decode_text(body, content_type, Declared::XmlDeclaration);
            Cow::Owned(xhtml_as_html(&text).into_owned())
        } else {
            decode_text(body, content_type, Declared::Meta)
        };
        let converter = converter();
        let html = crate::html_depth::cap_nesting(&html, MAX_PARSE_DEPTH);
        return match parse_html(&html, Instant::now() + MAX_PARSE_TIME, MAX_PARSE_NODES) {
            Some(ParsedHtml { tree, cut }) => {
                flatten_below(&tree, MAX_HTML_DEPTH);
                tidy_for_markdown(&tree);
                let markdown = converter.tree_to_markdown(&tree);
                Converted::page(if cut {
                    // First, where the model reads from.
                    format!(
                        "[The page's HTML makes more than {MAX_PARSE_NODES} nodes, more than \
                         WebFetch converts: it was cut there, and only the part before is \
                         shown.]\n\n{markdown}"
                    )
                } else {
                    markdown
                })
            }
            None => Converted::note(format!(
                "[The page's HTML could not be converted within {} s: its markup is built so \
                 that parsing it takes ever longer (elements nested or reopened without end). \
                 Nothing of it is shown.]",
                MAX_PARSE_TIME.as_secs()
            )),
        };
    }
    let xml = mime.ends_with("xml");
    let textual = mime.starts_with("text/")
        || mime.is_empty()
        || mime.ends_with("json")
        || xml
        || mime.ends_with("javascript");
    if textual && !mislabelled {
        let declared = if xml {
            Declared::XmlDeclaration
        } else {
            Declared::Nowhere
        };
        return Converted::page(decode_text(body, content_type, declared).into_owned());
    }
    // A type that is never text (a PDF, an image, an archive) is described, whatever its
    // bytes. Any other that declares a character set is text in it (YAML, TOML, a shell
    // script): only `application/octet-stream` says nothing by its charset.
    let never_text = never_text(mime);
    if !never_text
        && mime != "application/octet-stream"
        && charset_label(content_type)
            .and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()))
            .is_some()
    {
        return Converted::page(decode_text(body, content_type, Declared::Nowhere).into_owned());
    }
    match std::str::from_utf8(body) {
        Ok(text) if !never_text && !text.contains('\0') => Converted::page(text.to_owned()),
        _ => Converted::note(format!(
            "[Binary content ({}, {} bytes) is not shown]",
            if mime.is_empty() {
                "unknown type"
            } else {
                mime
            },
            body.len()
        )),
    }
}

/// An XHTML document rewritten so that the HTML parser reads it as XML does, where the two
/// differ in what pages hold: a self-closed element that is not void (`<script src="a.js"/>`,
/// `<div/>`), which XML reads as empty and HTML as a start tag (a `<script/>` swallowed the
/// rest of the page), gets its end tag; a CDATA section, which XML reads as text and HTML
/// (outside SVG and MathML) as a comment, becomes that text, escaped. Comments, `<!...>`
/// and `<?...>` are left as they are. Borrowed when nothing changes.
fn xhtml_as_html(xhtml: &str) -> Cow<'_, str> {
    use crate::html_depth::{VOID, comment_end, tag_end};
    let bytes = xhtml.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while let Some(offset) = bytes.get(i..).and_then(|rest| memchr::memchr(b'<', rest)) {
        let start = i + offset;
        let after = &bytes[start + 1..];
        if after.starts_with(b"!--") {
            i = comment_end(bytes, start + 4);
            continue;
        }
        if after.starts_with(b"![CDATA[") {
            let text_start = start + "<![CDATA[".len();
            let (text_end, end) = find_bytes(bytes, text_start, b"]]>")
                .map_or((bytes.len(), bytes.len()), |e| (e, e + 3));
            let out = out.get_or_insert_with(|| String::with_capacity(xhtml.len()));
            out.push_str(&xhtml[copied..start]);
            for c in xhtml[text_start..text_end].chars() {
                match c {
                    '&' => out.push_str("&amp;"),
                    '<' => out.push_str("&lt;"),
                    '>' => out.push_str("&gt;"),
                    c => out.push(c),
                }
            }
            copied = end;
            i = end;
            continue;
        }
        if matches!(after.first(), Some(b'!' | b'?' | b'/')) {
            i = memchr::memchr(b'>', after).map_or(bytes.len(), |end| start + 2 + end);
            continue;
        }
        if !after.first().is_some_and(u8::is_ascii_alphabetic) {
            i = start + 1;
            continue;
        }
        let name_start = start + 1;
        let name_end = bytes[name_start..]
            .iter()
            .position(|b| b.is_ascii_whitespace() || matches!(b, b'/' | b'>'))
            .map_or(bytes.len(), |p| name_start + p);
        let name = &xhtml[name_start..name_end];
        let (end, self_closed) = tag_end(bytes, name_end);
        if self_closed && !VOID.contains(&name.to_ascii_lowercase().as_str()) {
            let out = out.get_or_insert_with(|| String::with_capacity(xhtml.len() + 64));
            // Up to the `/>`, then `></name>`.
            out.push_str(&xhtml[copied..end - 2]);
            out.push_str("></");
            out.push_str(name);
            out.push('>');
            copied = end;
        }
        i = end;
    }
    match out {
        None => Cow::Borrowed(xhtml),
        Some(mut out) => {
            out.push_str(&xhtml[copied..]);
            Cow::Owned(out)
        }
    }
}

/// Where a document may declare its own character set, besides the `charset` of its
/// `Content-Type` and a byte-order mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Declared {
    /// HTML: a `<meta>` tag, found as the HTML standard's prescan finds it ([`prescan`]).
    Meta,
    /// XML (XHTML included): the XML declaration's `encoding` ([`xml_declaration`]).
    XmlDeclaration,
    /// Other text: nowhere.
    Nowhere,
}

/// `body` as text in the character set its `charset` parameter names, else the one it
/// declares itself (see [`Declared`]), else its byte-order mark, else UTF-8; what does not
/// decode becomes U+FFFD. A Latin-1 page or a log with one stray byte is text, not
/// "binary".
fn decode_text<'a>(body: &'a [u8], content_type: &str, declared: Declared) -> Cow<'a, str> {
    let encoding = charset_label(content_type)
        .and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()))
        .or_else(|| match declared {
            Declared::Meta => prescan(&body[..body.len().min(PRESCAN_BYTES)]),
            Declared::XmlDeclaration => xml_declaration(body),
            Declared::Nowhere => None,
        })
        .unwrap_or(encoding_rs::UTF_8);
    // `decode` prefers a byte-order mark to the label, as browsers do.
    encoding.decode(body).0
}

/// The `charset` parameter of a `Content-Type`, lowercase (`iso-8859-1`), if it has one:
/// the parameter of that name (any case), not `charset=` inside another one
/// (`xcharset=utf-16`, `profile="charset=utf-16"`). A quoted value is unquoted.
fn charset_label(content_type: &str) -> Option<String> {
    media_type_parameters(content_type)
        .into_iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("charset"))
        .and_then(|(_, value)| {
            let value: String = value
                .trim_matches('\'')
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || "-_.:".contains(*c))
                .collect::<String>()
                .to_ascii_lowercase();
            (!value.is_empty()).then_some(value)
        })
}

/// The parameters of a media type (`text/html; charset="utf-8"; q=1`), in order: each its
/// name and its value, both trimmed, a quoted value unquoted (`\` escaping the character
/// after it). Parameters are split on the `;`s outside quotes; the media type itself, and a
/// parameter without `=`, are left out.
fn media_type_parameters(content_type: &str) -> Vec<(&str, Cow<'_, str>)> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in content_type.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ';' if !quoted => {
                parts.push(&content_type[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&content_type[start..]);
    parts
        .into_iter()
        .skip(1)
        .filter_map(|part| {
            let (name, value) = part.split_once('=')?;
            let value = value.trim();
            let value = match value.strip_prefix('"') {
                Some(inner) => {
                    let mut unquoted = String::with_capacity(inner.len());
                    let mut chars = inner.chars();
                    while let Some(c) = chars.next() {
                        match c {
                            '"' => break,
                            '\\' => unquoted.extend(chars.next()),
                            c => unquoted.push(c),
                        }
                    }
                    Cow::Owned(unquoted)
                }
                None => Cow::Borrowed(value),
            };
            Some((name.trim(), value))
        })
        .collect()
}

/// How much of a page [`prescan`] reads.
const PRESCAN_BYTES: usize = 2048;

/// ASCII whitespace as the HTML standard's prescan counts it.
fn prescan_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

/// The character set a `<meta>` tag at the start of `bytes` declares, read as the HTML
/// standard's "prescan a byte stream to determine its encoding" reads it: comments
/// (`<!--` to `-->`), other tags with their attributes (a quoted `<meta>` in a value is
/// none), end tags, `<!...>` and `<?...>` are skipped, so that neither a commented-out
/// `<meta>` nor a page's text that mentions `charset=` decides. A `<meta>` declares with a
/// `charset` attribute, or with `http-equiv=content-type` and a `content` naming one; a
/// label no encoding has leaves it to the next `<meta>`. A `<meta>` cut off by the end of
/// `bytes` declares nothing.
fn prescan(bytes: &[u8]) -> Option<&'static encoding_rs::Encoding> {
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        if rest.starts_with(b"<!--") {
            // Up to the first `-->` after the `<`, whose dashes may be those of `<!--`.
            at = find_bytes(bytes, at + 2, b"-->").map_or(bytes.len(), |p| p + 3);
            continue;
        }
        if rest.len() > 5 && rest[..5].eq_ignore_ascii_case(b"<meta") {
            let after = rest[5];
            if prescan_space(after) || after == b'/' {
                at += 6;
                match meta_declaration(bytes, &mut at) {
                    MetaDeclaration::Found(encoding) => return Some(encoding),
                    MetaDeclaration::CutOff => return None,
                    MetaDeclaration::Nothing => {}
                }
                at += 1;
                continue;
            }
        }
        let name_at = at + 1 + usize::from(rest.get(1) == Some(&b'/'));
        if rest[0] == b'<' && bytes.get(name_at).is_some_and(u8::is_ascii_alphabetic) {
            // Another tag, start or end: its name, then its attributes.
            at = bytes[name_at..]
                .iter()
                .position(|&b| prescan_space(b) || b == b'>')
                .map_or(bytes.len(), |p| name_at + p);
            loop {
                match prescan_attribute(bytes, &mut at) {
                    Attribute::Found(..) => {}
                    Attribute::None => break,
                    Attribute::CutOff => return None,
                }
            }
            at += 1;
            continue;
        }
        if rest.starts_with(b"<!") || rest.starts_with(b"</") || rest.starts_with(b"<?") {
            at = memchr::memchr(b'>', &rest[2..]).map_or(bytes.len(), |p| at + 2 + p + 1);
            continue;
        }
        at += 1;
    }
    None
}

/// What a `<meta>` tag declared ([`meta_declaration`]).
enum MetaDeclaration {
    Found(&'static encoding_rs::Encoding),
    /// Nothing: the prescan goes on after it.
    Nothing,
    /// The bytes ended inside it: the prescan stops.
    CutOff,
}

/// The character set the `<meta>` tag whose attributes start at `at` declares, `at` left
/// at its `>` (the prescan's "processing" steps of a `<meta>`).
fn meta_declaration(bytes: &[u8], at: &mut usize) -> MetaDeclaration {
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let mut got_pragma = false;
    let mut need_pragma = None;
    // `None`: not declared yet; `Some(None)`: a label no encoding has.
    let mut charset: Option<Option<&'static encoding_rs::Encoding>> = None;
    loop {
        let (name, value) = match prescan_attribute(bytes, at) {
            Attribute::Found(name, value) => (name, value),
            Attribute::None => break,
            Attribute::CutOff => return MetaDeclaration::CutOff,
        };
        if seen.contains(&name) {
            continue;
        }
        match name.as_slice() {
            b"http-equiv" => got_pragma |= value == b"content-type",
            b"content" if charset.is_none() => {
                if let Some(encoding) = charset_in_content(&value) {
                    charset = Some(Some(encoding));
                    need_pragma = Some(true);
                }
            }
            b"charset" if charset.is_none() => {
                charset = Some(encoding_rs::Encoding::for_label(&value));
                need_pragma = Some(false);
            }
            _ => {}
        }
        seen.push(name);
    }
    let declared = match (need_pragma, charset) {
        (Some(true), _) if !got_pragma => None,
        (Some(_), Some(Some(encoding))) => Some(encoding),
        _ => None,
    };
    match declared {
        // Read as ASCII, so it cannot be true: browsers take UTF-8 then (and windows-1252
        // for x-user-defined), as the HTML standard says.
        Some(e) if e == encoding_rs::UTF_16LE || e == encoding_rs::UTF_16BE => {
            MetaDeclaration::Found(encoding_rs::UTF_8)
        }
        Some(e) if e == encoding_rs::X_USER_DEFINED => {
            MetaDeclaration::Found(encoding_rs::WINDOWS_1252)
        }
        Some(e) => MetaDeclaration::Found(e),
        None => MetaDeclaration::Nothing,
    }
}

/// An attribute read by [`prescan_attribute`].
enum Attribute {
    /// Its name and value, ASCII letters lowercased.
    Found(Vec<u8>, Vec<u8>),
    /// None: the tag ends here (at its `>`).
    None,
    /// The bytes ended inside the tag.
    CutOff,
}

/// The attribute at `at`, `at` left just after it: the HTML standard's "get an attribute"
/// (a quote opens a value only after `=`; a value runs to its closing quote, `>` or all).
fn prescan_attribute(bytes: &[u8], at: &mut usize) -> Attribute {
    let byte = |i: usize| bytes.get(i).copied();
    while byte(*at).is_some_and(|b| prescan_space(b) || b == b'/') {
        *at += 1;
    }
    match byte(*at) {
        None => return Attribute::CutOff,
        Some(b'>') => return Attribute::None,
        Some(_) => {}
    }
    let mut name = Vec::new();
    let mut value = Vec::new();
    // The name, up to `=` (when it has a first character), whitespace, `/` or `>`.
    loop {
        match byte(*at) {
            None => return Attribute::CutOff,
            Some(b'=') if !name.is_empty() => break,
            Some(b) if prescan_space(b) => {
                while byte(*at).is_some_and(prescan_space) {
                    *at += 1;
                }
                if byte(*at) != Some(b'=') {
                    return Attribute::Found(name, value);
                }
                break;
            }
            Some(b'/' | b'>') => return Attribute::Found(name, value),
            Some(b) => name.push(b.to_ascii_lowercase()),
        }
        *at += 1;
    }
    // Past the `=`, and the whitespace after it.
    *at += 1;
    while byte(*at).is_some_and(prescan_space) {
        *at += 1;
    }
    match byte(*at) {
        None => return Attribute::CutOff,
        Some(quote @ (b'"' | b'\'')) => loop {
            *at += 1;
            match byte(*at) {
                None => return Attribute::CutOff,
                Some(b) if b == quote => {
                    *at += 1;
                    return Attribute::Found(name, value);
                }
                Some(b) => value.push(b.to_ascii_lowercase()),
            }
        },
        Some(b'>') => return Attribute::Found(name, value),
        Some(_) => {}
    }
    loop {
        match byte(*at) {
            None => return Attribute::CutOff,
            Some(b) if prescan_space(b) || b == b'>' => return Attribute::Found(name, value),
            Some(b) => value.push(b.to_ascii_lowercase()),
        }
        *at += 1;
    }
}

/// The encoding a `<meta>`'s `content` names (`text/html; charset=koi8-r`): the HTML
/// standard's "extract a character encoding from a meta element". `content` is lowercase.
fn charset_in_content(content: &[u8]) -> Option<&'static encoding_rs::Encoding> {
    let mut from = 0;
    loop {
        let word = find_bytes(content, from, b"charset")?;
        let mut at = word + "charset".len();
        while content.get(at).copied().is_some_and(prescan_space) {
            at += 1;
        }
        if content.get(at) != Some(&b'=') {
            from = at;
            continue;
        }
        at += 1;
        while content.get(at).copied().is_some_and(prescan_space) {
            at += 1;
        }
        let rest = &content[at..];
        return match rest.first() {
            Some(&quote @ (b'"' | b'\'')) => {
                let close = memchr::memchr(quote, &rest[1..])?;
                encoding_rs::Encoding::for_label(&rest[1..=close])
            }
            Some(_) => {
                let end = rest
                    .iter()
                    .position(|&b| prescan_space(b) || b == b';')
                    .unwrap_or(rest.len());
                encoding_rs::Encoding::for_label(&rest[..end])
            }
            None => None,
        };
    }
}

/// Where `needle` first is in `bytes` at or after `from`.
fn find_bytes(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(bytes.get(from..)?, needle).map(|p| from + p)
}

/// The encoding an XML declaration at the start of `body` names (`<?xml version="1.0"
/// encoding="ISO-8859-1"?>`). UTF-16 named there cannot be true (the declaration was read
/// as ASCII): UTF-8 then, as for a `<meta>`.
fn xml_declaration(body: &[u8]) -> Option<&'static encoding_rs::Encoding> {
    let rest = body.strip_prefix(b"<?xml")?;
    if !rest.first().copied().is_some_and(prescan_space) {
        return None;
    }
    let end = find_bytes(rest, 0, b"?>").filter(|&end| end < 1024)?;
    let declaration = &rest[..end];
    let mut from = 0;
    loop {
        let word = find_bytes(declaration, from, b"encoding")?;
        let mut at = word + "encoding".len();
        let skip = |at: &mut usize| {
            while declaration.get(*at).copied().is_some_and(prescan_space) {
                *at += 1;
            }
        };
        skip(&mut at);
        if declaration.get(at) != Some(&b'=') {
            from = at;
            continue;
        }
        at += 1;
        skip(&mut at);
        let quote = *declaration.get(at).filter(|q| matches!(q, b'"' | b'\''))?;
        let value = &declaration[at + 1..];
        let close = memchr::memchr(quote, value)?;
        let encoding = encoding_rs::Encoding::for_label(&value[..close])?;
        return Some(
            if encoding == encoding_rs::UTF_16LE || encoding == encoding_rs::UTF_16BE {
                encoding_rs::UTF_8
            } else {
                encoding
            },
        );
    }
}

/// The text of a redirect to another host (Claude Code's).
fn redirect_text(original: &str, to: &str, code: u16, code_text: &str, prompt: &str) -> String {
    format!(
        "REDIRECT DETECTED: The URL redirects to a different host.\n\n\
Original URL: {original}\n\
Redirect URL: {to}\n\
Status: {code} {code_text}\n\n\
To complete your request, I need to fetch content from the redirected URL. Please use WebFetch again with these parameters:\n\
- url: \"{to}\"\n\
- prompt: \"{prompt}\""
    )
}

/// The part of a page's Markdown a call reads ([`window`]).
#[derive(Debug)]
enum Window {
    /// The offset is at or past the end of a page of `total` characters.
    PastEnd { total: usize },
    /// Characters `offset` to `end` of the page's `total`.
    Part {
        text: String,
        offset: usize,
        end: usize,
        total: usize,
    },
}

impl Window {
    /// The part as the model reads it without a small model: its text, with a note after it
    /// saying how to read on when there is more; `past_end` when there is no part.
    fn shown(self, past_end: impl FnOnce(usize) -> String) -> String {
        match self {
            Window::PastEnd { total } => past_end(total),
            Window::Part {
                text,
                offset,
                end,
                total,
            } if end < total => format!(
                "{text}\n\n[Content truncated: characters {offset}-{end} of {total} shown. Call WebFetch again with offset {end} to read more.]"
            ),
            Window::Part { text, .. } => text,
        }
    }
}

/// At most `max` characters of `markdown`, from `offset` (characters).
fn window(markdown: &str, offset: usize, max: usize) -> Window {
    let total = markdown.chars().count();
    if offset >= total && total > 0 {
        return Window::PastEnd { total };
    }
    let text: String = markdown.chars().skip(offset).take(max).collect();
    let end = offset + text.chars().count();
    Window::Part {
        text,
        offset,
        end,
        total,
    }
}

#[async_trait]
impl TypedTool for WebFetch {
    type Input = WebFetchInput;
    type Output = WebFetchOutput;
    const NAME: &'static str = "WebFetch";

    fn description(&self) -> Cow<'_, str> {
        "Fetches content from a specified URL and processes it using an AI model".into()
    }

    fn prompt(&self) -> Cow<'_, str> {
        "- Fetches content from a specified URL and processes it using an AI model\n\
- Takes a URL and a prompt as input\n\
- Fetches the URL content, converts HTML to markdown\n\
- Processes the content with the prompt using a small, fast model\n\
- Returns the model's response about the content\n\
- Use this tool when you need to retrieve and analyze web content\n\n\
Usage notes:\n\
- The URL must be a fully-formed valid URL; HTTP URLs are automatically upgraded to HTTPS (except loopback addresses such as localhost, 127.0.0.1 and [::1])\n\
- This tool is read-only and does not modify any files\n\
- Results may be summarized if the content is very large\n\
- Includes a self-cleaning 15-minute cache for faster responses when repeatedly accessing the same URL\n\
- When a URL redirects to a different host, the tool will inform you and provide the redirect URL in a special format. You should then make a new WebFetch request with the redirect URL to fetch the content."
            .into()
    }

    fn search_hint(&self) -> Option<&str> {
        Some("fetch and extract content from a URL")
    }

    fn should_defer(&self) -> bool {
        true
    }

    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }

    fn is_concurrency_safe(&self, _input: &WebFetchInput) -> bool {
        true
    }

    fn is_read_only(&self, _input: &WebFetchInput) -> bool {
        true
    }

    fn is_open_world(&self, _input: &WebFetchInput) -> bool {
        true
    }

    fn permission_subject(&self, input: &WebFetchInput) -> Option<PermissionSubject> {
        Some(PermissionSubject::Url(input.url.clone()))
    }

    async fn validate_input(
        &self,
        input: &WebFetchInput,
        _ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        prepare_url(&input.url)
            .map(|_| ())
            .map_err(|e| ValidationError::with_code(e, 1))
    }

    async fn call(
        &self,
        input: WebFetchInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<WebFetchOutput>, ToolError> {
        let started = Instant::now();
        let url = prepare_url(&input.url).map_err(ToolError::msg)?;
        let limits = ctx.app_state().get::<WebFetchLimits>().unwrap_or_default();
        let key = url.to_string();
        // A time of zero turns the cache off: nothing is read from it or kept in it.
        let ttl = cache_ttl();
        let cached = if ttl.is_zero() {
            None
        } else {
            cache().get(&key, ttl)
        };
        let page = match cached {
            Some(page) => page,
            None => {
                // The limit covers the whole fetch, every redirect hop included.
                let whole = tokio::time::timeout(limits.timeout, fetch(&url, limits, &ctx));
                let fetched = tokio::select! {
                    f = whole => f.map_err(|_| ToolError::msg(format!(
                        "Fetching {url} timed out after {} ms",
                        limits.timeout.as_millis()
                    )))??,
                    () = ctx.cancellation().cancelled() => return Err(ToolError::Cancelled(None)),
                };
                match fetched {
                    Fetched::Page(page) => {
                        let page = Arc::new(page);
                        // A page reached by a change of host (`www.`) passed the rules for
                        // that host as they were; a cache hit would skip them next time.
                        if !ttl.is_zero() && page.url.host_str() == url.host_str() {
                            cache().put(key.clone(), Arc::clone(&page));
                        }
                        page
                    }
                    Fetched::Redirect {
                        to,
                        code,
                        code_text,
                    } => {
                        let result =
                            redirect_text(&input.url, &to, code, &code_text, &input.prompt);
                        return Ok(ToolResult::new(WebFetchOutput {
                            bytes: result.len() as u64,
                            code,
                            code_text,
                            result,
                            duration_ms: elapsed_ms(started),
                            url: key,
                        }));
                    }
                }
            }
        };
        // Any number not below zero (the schema's minimum), as Claude Code's schema takes it
        // and `slice` reads it: its whole part.
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "the whole part of a number not below zero; the cast saturates"
        )]
        let offset = input.offset.map_or(0, |o| o.trunc() as usize);
        // The offset as the model gave it (`1e30` is not 18446744073709551615).
        let past_end = |total: usize| {
            let given = input.offset.unwrap_or_default();
            format!("[offset {given} is past the end of the content ({total} characters)]")
        };
        // The URL the content came from, with the one asked for when a redirect was
        // followed (to the `www.` host, or within the host).
        let source = if page.url == url {
            key.clone()
        } else {
            format!("{} (redirected from {key})", page.url)
        };
        let raw = |why: &str| {
            format!(
                "[{why}; the content of {source} follows as Markdown.]\n\n{}",
                window(&page.content, offset, RAW_WINDOW_CHARS).shown(past_end)
            )
        };
        let model = ctx.app_state().get::<WebFetchModelHook>();
        // Notes for the main model (binary content described, an offset past the end) are
        // its answer: no page for a small model to read, and no request paid for.
        let result = match window(&page.content, offset, MAX_MARKDOWN_CHARS) {
            _ if page.note => page.content.clone(),
            Window::PastEnd { total } => past_end(total),
            Window::Part {
                text,
                offset,
                end,
                total,
            } => match model {
                Some(WebFetchModelHook(model)) => {
                    // A model that cannot be reached (a gateway without it) still leaves the
                    // page: the fetch worked.
                    // A model request that stalls does not hold a cancelled call.
                    let answer = tokio::select! {
                        answer = model.apply(page.url.as_str(), &input.prompt, &text) => answer,
                        () = ctx.cancellation().cancelled() => return Err(ToolError::Cancelled(None)),
                    };
                    match answer {
                        Ok(mut answer) => {
                            // Where the page came from, after a redirect, and what the small
                            // model was not given are said after its answer, for the main
                            // model, which may read on.
                            if page.url != url {
                                answer.push_str(&format!("\n\n[The content came from {source}.]"));
                            }
                            if end < total {
                                answer.push_str(&format!(
                                    "\n\n[The prompt was applied to characters {offset}-{end} \
                                     of {total}. Call WebFetch again with offset {end} to read \
                                     more.]"
                                ));
                            }
                            answer
                        }
                        Err(e) => raw(&format!("The prompt could not be applied ({e})")),
                    }
                }
                None => raw("No model is available to apply the prompt"),
            },
        };
        Ok(ToolResult::new(WebFetchOutput {
            bytes: page.bytes,
            code: page.code,
            code_text: page.code_text.clone(),
            result,
            duration_ms: elapsed_ms(started),
            url: key,
        }))
    }

    fn to_content(&self, output: &WebFetchOutput) -> ToolResultContent {
        ToolResultContent::Text(output.result.clone())
    }
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by review 39: `http://[::ffff:127.0.0.1]:8000/`, which the permission rules
    /// read as `127.0.0.1`, was refused as a host that "must be a public domain name",
    /// while `127.0.0.1` and `[::1]` are fetched (over http, as loopback).
    #[test]
    fn an_ipv4_mapped_loopback_address_is_loopback() {
        for raw in [
            "http://[::ffff:127.0.0.1]:8000/",
            "http://[::ffff:7f00:1]/",
            "http://127.0.0.1:8000/",
            "http://[::1]:8000/",
        ] {
            let url = prepare_url(raw).unwrap_or_else(|e| panic!("{raw}: {e}"));
            assert_eq!(url.scheme(), "http", "{raw}");
        }
        // Another mapped address is no loopback: no dotted name, refused as before.
        assert!(prepare_url("http://[::ffff:10.0.0.1]/").is_err());
    }

    /// Markup the nesting cap does not foresee (a `</form>` closes only the form, so the
    /// `<div>`s pile up) still cannot hold the parser for long: it is given up at its
    /// deadline, where it ran for minutes. An ordinary page parses whole.
    #[test]
    fn a_parse_past_its_deadline_is_given_up() {
        let page = "<form><div></form>".repeat(200_000);
        assert!(matches!(
            crate::html_depth::cap_nesting(&page, MAX_PARSE_DEPTH),
            Cow::Borrowed(_)
        ));
        let deadline = Instant::now() + Duration::from_millis(200);
        assert!(parse_html(&page, deadline, MAX_PARSE_NODES).is_none());
        let ordinary = "<p>one <b>two</b> three</p>".repeat(20_000);
        let parsed = parse_html(
            &ordinary,
            Instant::now() + Duration::from_secs(600),
            MAX_PARSE_NODES,
        )
        .expect("parsed");
        assert!(!parsed.cut);
        let tree = parsed.tree;
        let converter = htmd::HtmlToMarkdown::builder().build();
        assert!(
            converter
                .tree_to_markdown(&tree)
                .contains("one **two** three")
        );
    }

    /// Nodes in `tree`, itself included. Iterative.
    fn node_count(tree: &std::rc::Rc<htmd::Node>) -> usize {
        let mut count = 0;
        let mut stack = vec![tree.clone()];
        while let Some(node) = stack.pop() {
            count += 1;
            stack.extend(node.children.borrow().iter().cloned());
        }
        count
    }

    /// The parser re-creates every formatting element still open in each new paragraph
    /// ("reconstruct the active formatting elements"): 400 `<b>`s of distinct ids (which the
    /// Noah's Ark clause does not limit), or 12 tags three times each, reopened in thousands
    /// of `<p>`s, made millions of nodes from a small page (1.5 GB from 64 KB, and an abort
    /// from 200 KB). The parse stops at [`MAX_PARSE_NODES`], the part before kept, and the
    /// Markdown says the page was cut.
    #[test]
    fn a_page_that_multiplies_its_elements_is_cut_at_the_node_budget() {
        let distinct: String = (0..400).map(|i| format!("<b id={i}>")).collect();
        let repeated: String = [
            "b", "i", "u", "s", "em", "strong", "small", "big", "code", "tt", "font", "strike",
        ]
        .iter()
        .map(|t| format!("<{t}>").repeat(3))
        .collect();
        // Counted exactly: the document, `html`, `head`, `body`, `p` and one text node (its
        // three pieces joined). One node fewer, and the text is left out.
        let small = "<p>a&amp;b</p>";
        let far = || Instant::now() + Duration::from_secs(600);
        let whole = parse_html(small, far(), 6).expect("parsed");
        assert!(!whole.cut);
        assert_eq!(node_count(&whole.tree), 6);
        let cut = parse_html(small, far(), 5).expect("parsed");
        assert!(cut.cut);
        assert_eq!(node_count(&cut.tree), 5);
        for (open, per_paragraph) in [(distinct, 400), (repeated, 36)] {
            let paragraphs = 2 * MAX_PARSE_NODES / per_paragraph;
            let page = format!(
                "<html><body><p>first{open}t{}</body></html>",
                "<p>t".repeat(paragraphs)
            );
            let parsed = parse_html(
                &page,
                Instant::now() + Duration::from_secs(600),
                MAX_PARSE_NODES,
            )
            .expect("parsed in time");
            assert!(parsed.cut);
            let nodes = node_count(&parsed.tree);
            assert!(nodes <= MAX_PARSE_NODES, "{nodes} nodes");
            drop(parsed);
            let markdown = to_markdown(page.as_bytes(), "text/html").text;
            assert!(
                markdown.starts_with("[The page's HTML makes more than 1000000 nodes"),
                "{}",
                &markdown[..200]
            );
            assert!(markdown.contains("first"), "{}", &markdown[..200]);
        }
    }

    /// An element's attributes count towards the budget: the parser copies them with every
    /// element it re-creates, so one `<b>` of 4,000 attributes reopened in each paragraph
    /// took 1.6 GB from 63 KB while making few nodes. And a `<select>` of 40,000 options
    /// converts within the parse's own deadline (the DOM's walk of the select at every
    /// `</option>` made it quadratic; it passed the deadline and nothing was converted).
    #[test]
    fn attributes_count_and_a_long_select_converts() {
        let attrs: String = (0..4000).map(|i| format!(" a{i}")).collect();
        let page = format!("<p>first<b{attrs}>x{}", "<p>t".repeat(600));
        let parsed = parse_html(
            &page,
            Instant::now() + Duration::from_secs(600),
            MAX_PARSE_NODES,
        )
        .expect("parsed in time");
        assert!(
            parsed.cut,
            "600 copies of 4,000 attributes were not counted"
        );
        let select = format!("<select>{}</select>", "<option>o</option>".repeat(40_000));
        let parsed = parse_html(&select, Instant::now() + MAX_PARSE_TIME, MAX_PARSE_NODES)
            .expect("the select was not parsed within the parse deadline");
        assert!(!parsed.cut);
    }

    /// The merge of adjacent inline elements done ahead of `htmd` gives what `htmd` gives
    /// by itself; quotes and lists nested past the limit keep their text, with at most
    /// [`MAX_PREFIX_DEPTH`] levels of prefix.
    #[test]
    fn the_tidied_tree_converts_as_htmd_would_with_bounded_prefixes() {
        let converter = htmd::HtmlToMarkdown::builder().build();
        let convert = |html: &str, tidy: bool| {
            let tree = parse_html(
                html,
                Instant::now() + Duration::from_secs(600),
                MAX_PARSE_NODES,
            )
            .unwrap()
            .tree;
            if tidy {
                tidy_for_markdown(&tree);
            }
            converter.tree_to_markdown(&tree)
        };
        for html in [
            "<p><b>a</b><b>b</b><strong>c</strong> <i>d</i><em>e</em><i class=x>f</i></p>",
            "<p><span>x</span><span>y</span><span><b>z</b></span><span>w</span></p>",
            "<p><a href=/a>a</a><a href=/a>b</a><code>c</code><code>d</code></p>",
            "<ul><li>one<ul><li>two</li></ul></li></ul><blockquote>q</blockquote>",
        ] {
            assert_eq!(convert(html, true), convert(html, false), "{html}");
        }
        let deep = format!(
            "{}text{}",
            "<blockquote><ul><li>".repeat(20),
            "</li></ul></blockquote>".repeat(20)
        );
        let markdown = convert(&deep, true);
        assert!(markdown.contains("text"), "{markdown}");
        // Items of a list past the limit keep apart.
        let items = format!(
            "{}<li>one</li><li>two</li>{}",
            "<ul><li>".repeat(12),
            "</li></ul>".repeat(12)
        );
        let markdown = convert(&items, true);
        assert!(!markdown.contains("onetwo"), "{markdown}");
        assert!(
            markdown
                .lines()
                .all(|l| l.matches('>').count() <= MAX_PREFIX_DEPTH),
            "{markdown}"
        );
        assert!(
            markdown.lines().all(|l| l.len() < 8 * MAX_PREFIX_DEPTH),
            "{markdown}"
        );
    }

    /// `html` converted as a page is, past the parse (the tree tidied, then the page's
    /// converter).
    fn page_markdown(html: &str) -> String {
        let tree = parse_html(
            html,
            Instant::now() + Duration::from_secs(600),
            MAX_PARSE_NODES,
        )
        .unwrap()
        .tree;
        tidy_for_markdown(&tree);
        converter().tree_to_markdown(&tree)
    }

    /// A table whose padded Markdown would be far larger than its text (one wide cell over
    /// many rows: every cell is padded to its column's widest) is written as plain rows,
    /// every cell's text kept; an ordinary table is still laid out.
    #[test]
    fn a_table_padded_past_its_text_is_written_as_rows() {
        let wide = format!(
            "<p>before</p><table><tr><th>{}</th><th>h2</th></tr>{}<tr><td>last</td><td>z</td></tr></table><p>after</p>",
            "a".repeat(20_000),
            "<tr><td>x</td><td>y</td></tr>".repeat(2_000)
        );
        let markdown = page_markdown(&wide);
        assert!(markdown.len() < 200_000, "{} bytes", markdown.len());
        assert_eq!(markdown.matches("x | y").count(), 2_000);
        // One row a line.
        assert_eq!(
            markdown
                .lines()
                .filter(|l| l.trim_end_matches(['\\', ' ']) == "x | y")
                .count(),
            2_000,
            "{}",
            &markdown[..300]
        );
        assert!(markdown.contains(&format!("{} | h2", "a".repeat(20_000))));
        assert!(markdown.contains("last | z"));
        assert!(markdown.starts_with("before") && markdown.trim_end().ends_with("after"));
        // An image's address counts as wide as it is written (`![](data:...)`), and the
        // caption's text is kept.
        let image = format!(
            "<table><caption>Totals</caption><tr><td><img src=\"data:image/png;base64,{}\"></td></tr>{}</table>",
            "A".repeat(200_000),
            "<tr><td>x</td></tr>".repeat(2_000)
        );
        let markdown = page_markdown(&image);
        assert!(markdown.len() < 1_000_000, "{} bytes", markdown.len());
        assert!(markdown.starts_with("Totals\n![]("), "{}", &markdown[..200]);
        let small = "<table><tr><th>name</th><th>n</th></tr><tr><td>a</td><td>1</td></tr></table>";
        assert_eq!(
            page_markdown(small),
            "| name | n   |\n| ---- | --- |\n| a    | 1   |"
        );
    }

    /// The reviewer's table: a first cell of a thousand `<b>|</b>`, a thousand characters of
    /// text but twice as many written (`**\|\|…**`), over a thousand rows. Its width is what
    /// is written, so it is too wide to lay out (its text made it fit the allowance, and 27 KB
    /// of HTML made 2 million characters); its rows are lines, every cell kept.
    #[test]
    fn a_cells_width_is_what_is_written_of_it() {
        let html = format!(
            "<table><tr><td>{}</td></tr>{}</table>",
            "<b>|</b>".repeat(1000),
            "<tr><td>x</td></tr>".repeat(1000)
        );
        let markdown = page_markdown(&html);
        assert!(
            markdown.len() < 2 * html.len(),
            "{} characters from {} bytes",
            markdown.len(),
            html.len()
        );
        assert_eq!(markdown.lines().filter(|l| *l == "x").count(), 1000);
        assert!(
            markdown.starts_with(&format!("**{}**\nx\n", "\\|".repeat(1000))),
            "{}",
            &markdown[..markdown.len().min(3000)]
        );
    }

    /// The allowance for padding is the page's, shared by its tables: each of these tables is
    /// well within it (its padded Markdown 300,000 characters), and twenty of them made 6
    /// million characters of a 390 KB page. The tables laid out come first and are GFM
    /// tables; past the allowance the rest are rows as lines, every cell kept.
    #[test]
    fn the_tables_of_a_page_share_one_allowance() {
        let table = format!(
            "<table><tr><td>{}</td></tr>{}</table>",
            "a".repeat(300),
            "<tr><td>x</td></tr>".repeat(1000)
        );
        let html = table.repeat(20);
        let markdown = page_markdown(&html);
        assert!(
            markdown.len() < TABLE_ALLOWANCE + 2 * html.len(),
            "{} characters from {} bytes",
            markdown.len(),
            html.len()
        );
        let laid_out = markdown
            .matches(&format!("| {} |\n", "-".repeat(300)))
            .count();
        assert!((1..20).contains(&laid_out), "{laid_out} tables laid out");
        let padded_rows = markdown
            .lines()
            .filter(|l| *l == format!("| x{} |", " ".repeat(299)))
            .count();
        let plain_rows = markdown.lines().filter(|l| *l == "x").count();
        assert_eq!(padded_rows, 1000 * laid_out);
        assert_eq!(plain_rows, 1000 * (20 - laid_out));
        // The laid-out ones are the first.
        let first_plain = markdown.find("\nx\n").unwrap();
        assert!(!markdown[first_plain..].contains("| x "));
    }

    /// A page's character set comes from its `<meta>` declaration only: text that mentions
    /// `charset=`, or a script's `charset` attribute, is no declaration.
    #[test]
    fn only_a_meta_tag_declares_the_charset() {
        let page = |head: &str| format!("<html><head>{head}</head><body>café</body></html>");
        for (head, expected) in [
            ("<meta charset='iso-8859-1'>", "cafÃ©"),
            (
                "<meta http-equiv=Content-Type content='text/html; charset=iso-8859-1'>",
                "cafÃ©",
            ),
            ("<title>Send charset=iso-8859-1</title>", "café"),
            (
                "<script src=a.js charset=windows-1251></script><meta charset=utf-8>",
                "café",
            ),
            (
                "<meta name=description content='Tip: send charset=windows-1251'><meta charset=\"utf-8\">",
                "café",
            ),
            ("<meta charset=nonsense><meta charset=iso-8859-1>", "cafÃ©"),
        ] {
            let html = page(head);
            let text = decode_text(html.as_bytes(), "text/html", Declared::Meta);
            assert!(text.contains(expected), "{head}: {text}");
        }
    }

    /// The `<meta>` prescan skips what the HTML standard's prescan skips: comments (`<!-->`
    /// ends one at once), the attributes of other tags (their quoted values too), end tags,
    /// `<!...>` and `<?...>`; a `charset` without `http-equiv` in the same tag wins over a
    /// `content`, and a `content` counts only beside `http-equiv=content-type`.
    #[test]
    fn the_prescan_skips_comments_and_other_markup() {
        let page = |head: &str| format!("<html><head>{head}</head><body>café</body></html>");
        for (head, expected) in [
            (
                "<!-- <meta charset=koi8-r> --><meta charset=iso-8859-1>",
                "cafÃ©",
            ),
            ("<!--><meta charset=iso-8859-1>", "cafÃ©"),
            ("<!-- a -- b --><meta charset=iso-8859-1>", "cafÃ©"),
            ("<!-- <meta charset=iso-8859-1>", "café"),
            ("<div title='<meta charset=iso-8859-1>'></div>", "café"),
            ("<div title=\"x><meta charset=iso-8859-1>\">", "café"),
            ("</x charset=iso-8859-1><meta charset=utf-8>", "café"),
            ("</x title='<meta charset=iso-8859-1>'>", "café"),
            // `<?` runs to the first `>`, which is the quoted `<meta>`'s.
            (
                "<!doctype html><?php echo '<meta charset=iso-8859-1>' ?><meta charset=utf-8>",
                "café",
            ),
            ("<meta content='text/html; charset=iso-8859-1'>", "café"),
            (
                "<meta http-equiv=content-type content='text/html; charset = \"iso-8859-1\"'>",
                "cafÃ©",
            ),
            ("<META CHARSET=ISO-8859-1>", "cafÃ©"),
            ("<meta/charset=iso-8859-1>", "cafÃ©"),
            ("<metacharset=iso-8859-1>", "café"),
        ] {
            let html = page(head);
            let text = decode_text(html.as_bytes(), "text/html", Declared::Meta);
            assert!(text.contains(expected), "{head}: {text}");
        }
    }

    /// Each kind of certificate refusal is said in words; only a certificate not trusted
    /// says how to trust a private certificate authority.
    #[test]
    fn certificate_refusals_are_said_in_words() {
        use rustls::CertificateError as E;
        let untrusted = certificate_words(&E::UnknownIssuer);
        assert!(
            untrusted.starts_with("the server's certificate is not trusted: it is self-signed"),
            "{untrusted}"
        );
        if cfg!(target_os = "linux") {
            assert!(untrusted.contains("set SSL_CERT_FILE"), "{untrusted}");
        }
        for (refused, words) in [
            (E::Expired, "the server's certificate has expired"),
            (
                E::NotValidYet,
                "the server's certificate is not valid yet (or this machine's clock is behind)",
            ),
            (
                E::NotValidForName,
                "the server's certificate is for another host name",
            ),
            (E::Revoked, "the server's certificate has been revoked"),
            (E::BadEncoding, "the server's certificate was refused"),
        ] {
            assert_eq!(certificate_words(&refused), words);
        }
    }

    /// An XHTML document's self-closed elements that are not void get their end tag, and
    /// its CDATA sections become escaped text; void elements, comments, attribute values
    /// holding `/>` and an ordinary document are left alone.
    #[test]
    fn xhtml_is_rewritten_where_html_reads_it_otherwise() {
        for (xhtml, html) in [
            (
                "<head><script src=\"a.js\"/><style /></head><p>x</p>",
                "<head><script src=\"a.js\"></script><style ></style></head><p>x</p>",
            ),
            (
                "<p>a<br/>b<img src='x'/></p>",
                "<p>a<br/>b<img src='x'/></p>",
            ),
            ("<p title=\"a/>b\">c</p>", "<p title=\"a/>b\">c</p>"),
            ("<!-- <div/> --><p/>", "<!-- <div/> --><p></p>"),
            ("<p><![CDATA[a<b & c]]></p>", "<p>a&lt;b &amp; c</p>"),
            (
                "<?xml version=\"1.0\"?><html/>",
                "<?xml version=\"1.0\"?><html></html>",
            ),
        ] {
            assert_eq!(xhtml_as_html(xhtml), html, "{xhtml}");
        }
        assert!(matches!(
            xhtml_as_html("<html><body><p>plain</p></body></html>"),
            Cow::Borrowed(_)
        ));
    }

    /// Bytes served as HTML with NUL bytes in their header (a PNG, a gzip file) are
    /// described as binary; a long page with one stray NUL further on is still a page.
    #[test]
    fn binary_served_as_html_is_described() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR<html>";
        assert_eq!(
            to_markdown(png, "text/html").text,
            format!(
                "[Binary content (text/html, {} bytes) is not shown]",
                png.len()
            )
        );
        let mut page = format!("<h1>Title</h1><p>{}</p>", "text ".repeat(400)).into_bytes();
        page.extend_from_slice(b"<p>a\0b</p>");
        let markdown = to_markdown(&page, "text/html").text;
        assert!(markdown.starts_with("# Title"), "{markdown}");
    }

    fn page(size: usize) -> Arc<Page> {
        Arc::new(Page {
            url: Url::parse("https://example.com/").unwrap_or_else(|e| panic!("{e}")),
            fetched: Instant::now(),
            code: 200,
            code_text: "OK".into(),
            bytes: size as u64,
            content: "x".repeat(size),
            note: false,
        })
    }

    #[test]
    fn the_cache_is_bounded_by_bytes_as_well_as_pages() {
        let mut cache = PageCache {
            pages: LruCache::new(NonZeroUsize::new(CACHE_ENTRIES).unwrap_or(NonZeroUsize::MIN)),
            bytes: 0,
        };
        let big = CACHE_BYTES / 2 + 1;
        cache.put("a".into(), page(big));
        cache.put("b".into(), page(10));
        cache.put("c".into(), page(big));
        // `a` went to make room; the small page stayed.
        assert!(cache.get("a", CACHE_TTL).is_none());
        assert!(cache.get("b", CACHE_TTL).is_some() && cache.get("c", CACHE_TTL).is_some());
        assert_eq!(cache.bytes, big + 10);
        // Replacing an entry counts its bytes once; a page over the whole bound is not kept.
        cache.put("b".into(), page(20));
        assert_eq!(cache.bytes, big + 20);
        cache.put("huge".into(), page(CACHE_BYTES + 1));
        assert!(cache.get("huge", CACHE_TTL).is_none());
        assert!(cache.bytes <= CACHE_BYTES);
    }

    #[test]
    fn the_cache_time_is_read_in_milliseconds() {
        assert_eq!(cache_ttl_from(None), CACHE_TTL);
        assert_eq!(cache_ttl_from(Some("")), CACHE_TTL);
        assert_eq!(cache_ttl_from(Some("soon")), CACHE_TTL);
        assert_eq!(cache_ttl_from(Some("-5")), CACHE_TTL);
        assert_eq!(cache_ttl_from(Some("1.5")), CACHE_TTL);
        assert_eq!(cache_ttl_from(Some("0")), Duration::ZERO);
        assert_eq!(cache_ttl_from(Some(" 2500 ")), Duration::from_millis(2500));
    }

    #[test]
    fn a_page_older_than_the_cache_time_is_dropped() {
        let mut cache = PageCache {
            pages: LruCache::new(NonZeroUsize::new(CACHE_ENTRIES).unwrap_or(NonZeroUsize::MIN)),
            bytes: 0,
        };
        cache.put("a".into(), page(10));
        std::thread::sleep(Duration::from_millis(5));
        assert!(cache.get("a", CACHE_TTL).is_some());
        assert!(cache.get("a", Duration::from_millis(1)).is_none());
        // Dropped, not only skipped.
        assert!(cache.get("a", CACHE_TTL).is_none());
        assert_eq!(cache.bytes, 0);
    }
}
