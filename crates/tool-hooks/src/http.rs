//! `http` hook handlers: the hook input POSTed as JSON; the response body read like a
//! command hook's stdout.

use std::sync::OnceLock;
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::config::HttpHandler;
use crate::matcher::glob_match;
use crate::process::{Ending, MAX_STDOUT_BYTES, RawRun, StartRetry, delayed_text, shortage_name};

/// Builds the shared client: rustls with the ring provider, no system proxy, and no
/// redirects: the hook input goes only to the URL the settings name (and
/// `allowedHttpHookUrls` allowed); a 3xx is a failed hook, as in Claude Code.
pub(crate) fn build_client() -> Result<reqwest::Client, reqwest::Error> {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may win the race; either way a provider is installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
}

/// What makes `url` no URL an http hook can POST to, or `None` for one it can: it must
/// parse as a URL, with the scheme `http` or `https` and a host. The problem names the URL
/// as diagnostics show it ([`tool_core::redact_url`]: credentials redacted); text that does not parse
/// is not quoted (it may hold a secret that redaction cannot find), only why it does not.
pub(crate) fn url_problem(url: &str) -> Option<String> {
    const NEEDS: &str = "an http hook's `url` must be an http:// or https:// URL with a host";
    if url.trim().is_empty() {
        return Some(format!("{NEEDS}, got an empty string"));
    }
    let parsed = match reqwest::Url::parse(url) {
        Ok(parsed) => parsed,
        Err(e) => return Some(format!("{NEEDS}, got text that is no URL ({e})")),
    };
    if !matches!(parsed.scheme(), "http" | "https") {
        return Some(format!(
            "{NEEDS}, got {:?}, whose scheme is {:?}",
            tool_core::redact_url(url),
            parsed.scheme()
        ));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Some(format!(
            "{NEEDS}, got {:?}, which has none",
            tool_core::redact_url(url)
        ));
    }
    None
}

/// Why `allowedHttpHookUrls` keeps out an http hook's URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UrlRefusal {
    /// No pattern allows it (or it is no URL a request can go to).
    NotAllowed,
    /// It carries user info (`http://user:pass@host/`), which no pattern allows.
    UserInfo,
}

/// Whether one of `patterns` (`allowedHttpHookUrls`) allows a hook to POST to `url`, matched
/// on the URL as the request will go out: parsed as reqwest parses it (`..` and `.`
/// resolved, `%2e%2e` too, `\` read as `/`, the host lower-cased and an IPv4 address in its
/// usual form), then part by part. A pattern is `SCHEME://HOST[:PORT][PATH][?QUERY]`, where
/// `*` stands for any run of characters within the part it is in: in the host it never
/// reaches the port or the path, in the path never the query. Without a port the URL must
/// use its scheme's default one; without a path, the path must be `/`, unless the pattern
/// ends in a `*` (`http://localhost:*`: any path); without a query, any query goes (it is
/// the same endpoint). `*` alone allows every URL. A URL with user info is never allowed.
pub(crate) fn url_refusal(patterns: &[String], url: &str) -> Option<UrlRefusal> {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return Some(UrlRefusal::NotAllowed);
    };
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Some(UrlRefusal::UserInfo);
    }
    if patterns
        .iter()
        .any(|p| UrlPattern::parse(p).is_some_and(|p| p.matches(&parsed)))
    {
        None
    } else {
        Some(UrlRefusal::NotAllowed)
    }
}

/// One `allowedHttpHookUrls` entry, split into the parts a URL is matched by (see
/// [`url_refusal`]). Each part is a glob where `*` is any run of characters.
#[derive(Debug, PartialEq, Eq)]
enum UrlPattern {
    /// `*`: every URL.
    Any,
    Parts {
        scheme: String,
        host: String,
        /// `None`: the scheme's default port.
        port: Option<String>,
        path: String,
        /// `None`: any query, or none.
        query: Option<String>,
    },
}

impl UrlPattern {
    /// The pattern's parts, normalised as a URL's are; `None` for a pattern that can match
    /// no URL (no `SCHEME://`, user info, a port that is neither digits nor `*`).
    fn parse(pattern: &str) -> Option<Self> {
        if pattern == "*" {
            return Some(Self::Any);
        }
        let (scheme, rest) = pattern.split_once("://")?;
        let end = rest.find(['/', '?', '#', '\\']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        if authority.is_empty() || authority.contains('@') {
            return None;
        }
        let (host, port) = match authority.strip_prefix('[') {
            // An IPv6 address: `[::1]:8080`.
            Some(v6) => {
                let close = v6.find(']')?;
                let after = &v6[close + 1..];
                let port = match after {
                    "" => None,
                    _ => Some(after.strip_prefix(':')?),
                };
                (&authority[..close + 2], port)
            }
            None => match authority.split_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            },
        };
        let port = port.filter(|p| !p.is_empty());
        if host.is_empty()
            || port.is_some_and(|p| !p.chars().all(|c| c.is_ascii_digit() || c == '*'))
        {
            return None;
        }
        // The host as the URL parser writes it (lower case, IDNA, `127.1` as `127.0.0.1`);
        // a `*` is a character it keeps.
        let host = reqwest::Url::parse(&format!("http://{host}/"))
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned))
            .unwrap_or_else(|| host.to_ascii_lowercase());
        let (path, query) = if tail.is_empty() || tail.starts_with('#') {
            let open = pattern.ends_with('*');
            (if open { "/*" } else { "/" }.to_owned(), None)
        } else {
            // Path and query as the URL parser writes them, dot segments resolved.
            let u = reqwest::Url::parse(&format!("http://h{tail}")).ok()?;
            (u.path().to_owned(), u.query().map(str::to_owned))
        };
        Some(Self::Parts {
            scheme: scheme.to_ascii_lowercase(),
            host,
            port: port.map(str::to_owned),
            path,
            query,
        })
    }

    fn matches(&self, url: &reqwest::Url) -> bool {
        let Self::Parts {
            scheme,
            host,
            port,
            path,
            query,
        } = self
        else {
            return true;
        };
        let port_matches = match port {
            None => url.port().is_none(),
            Some(glob) => url
                .port_or_known_default()
                .is_some_and(|p| glob_match(glob, &p.to_string())),
        };
        glob_match(scheme, url.scheme())
            && url.host_str().is_some_and(|h| glob_match(host, h))
            && port_matches
            && glob_match(path, url.path())
            && query
                .as_deref()
                .is_none_or(|q| url.query().is_some_and(|u| glob_match(q, u)))
    }
}

/// Expands `$VAR` and `${VAR}` in a header value, only for names in `allowed`; references
/// to other variables become empty (never leak the environment).
pub(crate) fn expand_header(value: &str, allowed: &[String]) -> String {
    let lookup = |name: &str| {
        if allowed.iter().any(|a| a == name) {
            std::env::var(name).unwrap_or_default()
        } else {
            String::new()
        }
    };
    let is_start = |c: char| c.is_ascii_alphabetic() || c == '_';
    let is_cont = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        if let Some(inner) = after.strip_prefix('{') {
            if let Some(end) = inner.find('}') {
                let name = &inner[..end];
                if name.chars().next().is_some_and(is_start) && name.chars().all(is_cont) {
                    out.push_str(&lookup(name));
                    rest = &inner[end + 1..];
                    continue;
                }
            }
        } else if after.chars().next().is_some_and(is_start) {
            let end = after.find(|c: char| !is_cont(c)).unwrap_or(after.len());
            out.push_str(&lookup(&after[..end]));
            rest = &after[end..];
            continue;
        }
        out.push('$');
        rest = after;
    }
    out.push_str(rest);
    out
}

fn failed(msg: String, start: Instant) -> RawRun {
    RawRun {
        ending: Ending::Failed(msg),
        stdout: Vec::new(),
        stderr: Vec::new(),
        stderr_read: 0,
        stdout_truncated: false,
        pipes_held_open: false,
        duration: start.elapsed(),
        start_delayed: None,
    }
}

/// Why a request got no response.
enum HttpFailure {
    TimedOut,
    Failed(String),
    /// No connection could be opened for want of a system resource
    /// ([`Ending::Unstartable`]).
    Unstartable(String),
}

/// The io errors of `e`'s cause chain.
fn io_causes(e: &reqwest::Error) -> impl Iterator<Item = &std::io::Error> {
    std::iter::successors(std::error::Error::source(e), |s| s.source())
        .filter_map(|s| s.downcast_ref::<std::io::Error>())
}

/// The shortage an error of `e`'s cause chain names, if one does ([`shortage_name`]):
/// descriptors, memory, local ports.
fn shortage_in(e: &reqwest::Error) -> Option<&'static str> {
    io_causes(e).find_map(shortage_name)
}

/// The shortage that keeps this process from opening one more descriptor now, if any.
fn descriptor_shortage() -> Option<&'static str> {
    std::fs::File::open("/dev/null")
        .err()
        .and_then(|e| shortage_name(&e))
}

/// What a client build that failed without naming a shortage is taken for, for a guard.
const PRESUMED_SHORTAGE: &str =
    "presumed (the error gives no cause, as a client build short of descriptors gives none)";

/// The shortage a failed client build is put down to, if any. The build reads the
/// system's certificates and its error does not say why none could be read ("No CA
/// certificates were loaded"); descriptors looked for afterwards may have been freed
/// meanwhile. So for a `guard` (a PreToolUse or PermissionRequest hook, which refuses the
/// call when it cannot start) a failure whose causes name no other error is taken for a
/// shortage too.
fn build_shortage(e: &reqwest::Error, guard: bool) -> Option<&'static str> {
    shortage_in(e)
        .or_else(descriptor_shortage)
        .or_else(|| (guard && io_causes(e).next().is_none()).then_some(PRESUMED_SHORTAGE))
}

/// POSTs `input` to the hook's URL. A 2xx response with an empty body is success, one
/// with a JSON object is read like stdout; anything else is a failure (never blocking by
/// status code). A client or connection that cannot be opened for want of a system resource
/// is tried again for half the timeout; `guard` says the hook's failure to start would
/// refuse the call (see [`build_shortage`]).
pub(crate) async fn run_http(
    shared_client: &OnceLock<reqwest::Client>,
    handler: &HttpHandler,
    input: &[u8],
    timeout: Duration,
    guard: bool,
    cancel: &CancellationToken,
) -> RawRun {
    let start = Instant::now();
    // When the latest attempt after a shortage began, and the shortage: a request sent
    // then had less than its timeout, and one still without an answer at the timeout may
    // never have started.
    let delayed: std::sync::Mutex<Option<(Duration, &'static str)>> = std::sync::Mutex::new(None);
    let request = |client: &reqwest::Client| {
        let mut req = client
            .post(&handler.url)
            .body(input.to_vec())
            .timeout(timeout);
        // The user's own Content-Type replaces the default (a header added twice is sent
        // twice).
        if !handler
            .headers
            .keys()
            .any(|k| k.eq_ignore_ascii_case("content-type"))
        {
            req = req.header("Content-Type", "application/json");
        }
        for (k, v) in &handler.headers {
            req = req.header(k.as_str(), expand_header(v, &handler.allowed_env_vars));
        }
        req
    };
    let work = async {
        let describe = |e: reqwest::Error, what: &str, short: Option<&str>| {
            // The URL is named redacted, once; reqwest's own text would repeat it whole.
            let e = e.without_url();
            if e.is_timeout() {
                HttpFailure::TimedOut
            } else {
                // Include the cause chain: reqwest's top-level text is generic.
                let mut msg = format!("{what}: {e}");
                let mut src = std::error::Error::source(&e);
                while let Some(s) = src {
                    msg.push_str(&format!(": {s}"));
                    src = s.source();
                }
                match short {
                    Some(shortage) => HttpFailure::Unstartable(format!(
                        "{msg} (short of system resources: {shortage}; tried again for {} ms)",
                        start.elapsed().as_millis()
                    )),
                    None => HttpFailure::Failed(msg),
                }
            }
        };
        // A connection that cannot be opened for want of descriptors is tried again as
        // other hooks end, as a command hook's start is, for half the timeout.
        let mut retry = StartRetry::new(start, timeout);
        let mut resp = loop {
            // An attempt after a shortage starts late.
            if let Some(shortage) = retry.short_of()
                && let Ok(mut last) = delayed.lock()
            {
                *last = Some((start.elapsed(), shortage));
            }
            // The client is built once, when one is first needed; a build that fails is
            // not kept (one that failed for want of descriptors would fail every later
            // hook).
            let built = match shared_client.get() {
                Some(client) => Ok(client),
                None => build_client().map(|c| shared_client.get_or_init(|| c)),
            };
            let (e, what, short) = match built {
                Ok(client) => match request(client).send().await {
                    Ok(resp) => break resp,
                    Err(e) => {
                        let short = shortage_in(&e);
                        (
                            e,
                            format!("request to {} failed", tool_core::redact_url(&handler.url)),
                            short,
                        )
                    }
                },
                Err(e) => {
                    let short = build_shortage(&e, guard);
                    (e, "cannot build the HTTP client".to_owned(), short)
                }
            };
            if retry.wait_after(short).await {
                continue;
            }
            return Err(describe(e, &what, short));
        };
        let status = resp.status();
        let mut body = Vec::new();
        let mut truncated = false;
        while let Some(chunk) = resp
            .chunk()
            .await
            // Only opening the connection counts as the hook's start.
            .map_err(|e| describe(e, "reading the response failed", None))?
        {
            let room = MAX_STDOUT_BYTES.saturating_sub(body.len());
            if chunk.len() > room {
                truncated = true;
                body.extend_from_slice(&chunk[..room]);
                break;
            }
            body.extend_from_slice(&chunk);
        }
        Ok::<_, HttpFailure>((status, body, truncated))
    };
    let res = tokio::select! {
        r = tokio::time::timeout(timeout, work) => r,
        () = cancel.cancelled() => {
            return RawRun { ending: Ending::Cancelled, ..failed(String::new(), start) };
        }
    };
    match res {
        Err(_) | Ok(Err(HttpFailure::TimedOut)) => RawRun {
            ending: Ending::TimedOut,
            start_delayed: delayed
                .lock()
                .ok()
                .and_then(|last| *last)
                .map(|(after, shortage)| delayed_text(after, shortage)),
            ..failed(String::new(), start)
        },
        Ok(Err(HttpFailure::Failed(e))) => failed(e, start),
        Ok(Err(HttpFailure::Unstartable(e))) => RawRun {
            ending: Ending::Unstartable(e),
            ..failed(String::new(), start)
        },
        Ok(Ok((status, body, truncated))) => {
            if !status.is_success() {
                let text = String::from_utf8_lossy(&body);
                let line = text.trim().lines().next().unwrap_or("");
                let msg = if line.is_empty() {
                    format!("HTTP status {status}")
                } else {
                    format!(
                        "HTTP status {status}: {}",
                        line.chars().take(200).collect::<String>()
                    )
                };
                return failed(msg, start);
            }
            // A body is empty or one JSON object; anything else (a proxy's truncated page
            // too) is a failed hook, never text for the model.
            let text = String::from_utf8_lossy(&body);
            let t = text.trim();
            if !t.is_empty() && !t.starts_with('{') {
                return failed(
                    format!("HTTP {status} response body is not a JSON object"),
                    start,
                );
            }
            // (A body cut at the size limit is judged by the runner, as a command's stdout is.)
            if !t.is_empty()
                && !truncated
                && let Err(e) = tool_core::parse_config_json(t)
            {
                return failed(
                    format!("HTTP {status} response body is not valid JSON: {e}"),
                    start,
                );
            }
            RawRun {
                ending: Ending::Exited(0),
                stdout: body,
                stderr: Vec::new(),
                stderr_read: 0,
                stdout_truncated: truncated,
                pipes_held_open: false,
                duration: start.elapsed(),
                start_delayed: None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `allowedHttpHookUrls` patterns, part by part: the documented forms allow what they
    /// name, and a `*` stays in its part (host, port, path, query).
    #[test]
    fn url_patterns_match_part_by_part() {
        let allows = |pattern: &str, url: &str| url_refusal(&[pattern.to_owned()], url).is_none();
        let yes = [
            (
                "https://hooks.example.com/*",
                "https://hooks.example.com/a/b?x=1",
            ),
            (
                "https://hooks.example.com/*",
                "https://HOOKS.example.com:443/a",
            ),
            (
                "https://hooks.example.com/hook",
                "https://hooks.example.com/hook?x=1",
            ),
            ("https://hooks.example.com", "https://hooks.example.com"),
            ("https://*.example.com/*", "https://a.b.example.com/x"),
            ("http://localhost:*", "http://localhost:8080/x"),
            ("http://localhost:*", "http://localhost/x"),
            ("http://127.0.0.1:80*/x", "http://127.0.0.1:8080/x"),
            ("http://127.1:8080/*", "http://127.0.0.1:8080/x"),
            ("http://[::1]:8080/*", "http://[::1]:8080/x"),
            ("https://h.example/x?k=*", "https://h.example/x?k=1"),
            ("https://h.example/a b/*", "https://h.example/a%20b/c"),
            ("*://h.example/*", "https://h.example/x"),
            ("*", "https://anything.example:9/x"),
        ];
        for (pattern, url) in yes {
            assert!(allows(pattern, url), "{pattern} should allow {url}");
        }
        let no = [
            ("https://hooks.example.com/*", "http://hooks.example.com/a"),
            (
                "https://hooks.example.com/*",
                "https://hooks.example.com:8443/a",
            ),
            (
                "https://hooks.example.com/*",
                "https://hooks.example.com.evil.example/a",
            ),
            (
                "https://hooks.example.com/hook",
                "https://hooks.example.com/hook/x",
            ),
            ("https://hooks.example.com", "https://hooks.example.com/x"),
            (
                "https://*.example.com/*",
                "https://evil.example/x?.example.com/",
            ),
            (
                "https://*.example.com/*",
                "https://evil.example\\.example.com/",
            ),
            (
                "https://*.example.com/*",
                "https://a.example.com@evil.example/",
            ),
            ("https://h.example/ok*", "https://h.example/ok/../deny"),
            ("https://h.example/ok*", "https://h.example/ok\\..\\deny"),
            ("https://h.example/ok*", "https://h.example/deny?/ok"),
            ("https://h.example/x?k=*", "https://h.example/x"),
            ("http://[::1]:8080/*", "http://[::2]:8080/x"),
            ("*", "https://user@h.example/"),
            ("https://user@h.example/*", "https://user@h.example/"),
            ("h.example/*", "https://h.example/x"),
            ("https://h.example:x/*", "https://h.example/x"),
            ("https://h.example/*", "not a url"),
        ];
        for (pattern, url) in no {
            assert!(!allows(pattern, url), "{pattern} should not allow {url}");
        }
        assert_eq!(
            url_refusal(&["*".to_owned()], "https://u:p@h.example/"),
            Some(UrlRefusal::UserInfo)
        );
    }

    #[test]
    fn header_expansion_only_for_allowed() {
        let allowed = vec!["PATH".to_owned()];
        let path = std::env::var("PATH").unwrap_or_default();
        assert_eq!(
            expand_header("Bearer $PATH", &allowed),
            format!("Bearer {path}")
        );
        assert_eq!(expand_header("x${PATH}y", &allowed), format!("x{path}y"));
        assert_eq!(expand_header("Bearer $HOME", &allowed), "Bearer ");
        assert_eq!(expand_header("cost: $5 ${", &allowed), "cost: $5 ${");
    }
}
