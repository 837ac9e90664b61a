//! `http` hook handlers: the hook input POSTed as JSON; the response body read like a
//! command hook's stdout.

use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::config::{HttpHandler, shown_url};
use crate::process::{Ending, MAX_STDOUT_BYTES, RawRun};

/// Builds the shared client: rustls with the ring provider, no system proxy, and no
/// redirects: the hook input goes only to the URL the settings name (and
/// `allowedHttpHookUrls` allowed); a 3xx is a failed hook, as in Claude Code.
pub(crate) fn build_client() -> Result<reqwest::Client, String> {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may win the race; either way a provider is installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
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
    }
}

/// POSTs `input` to the hook's URL. A 2xx response with an empty body is success, one
/// with a JSON object is read like stdout; anything else is a failure (never blocking by
/// status code).
pub(crate) async fn run_http(
    client: Result<&reqwest::Client, &String>,
    handler: &HttpHandler,
    input: &[u8],
    timeout: Duration,
    cancel: &CancellationToken,
) -> RawRun {
    let start = Instant::now();
    let client = match client {
        Ok(c) => c,
        Err(e) => return failed(e.clone(), start),
    };
    let mut req = client
        .post(&handler.url)
        .body(input.to_vec())
        .timeout(timeout);
    // The user's own Content-Type replaces the default (a header added twice is sent twice).
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
    let work = async {
        let describe = |e: reqwest::Error, what: &str| {
            // The URL is named redacted, once; reqwest's own text would repeat it whole.
            let e = e.without_url();
            if e.is_timeout() {
                None
            } else {
                // Include the cause chain: reqwest's top-level text is generic.
                let mut msg = format!("{what}: {e}");
                let mut src = std::error::Error::source(&e);
                while let Some(s) = src {
                    msg.push_str(&format!(": {s}"));
                    src = s.source();
                }
                Some(msg)
            }
        };
        let mut resp = req
            .send()
            .await
            .map_err(|e| describe(e, &format!("request to {} failed", shown_url(&handler.url))))?;
        let status = resp.status();
        let mut body = Vec::new();
        let mut truncated = false;
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| describe(e, "reading the response failed"))?
        {
            let room = MAX_STDOUT_BYTES.saturating_sub(body.len());
            if chunk.len() > room {
                truncated = true;
                body.extend_from_slice(&chunk[..room]);
                break;
            }
            body.extend_from_slice(&chunk);
        }
        Ok::<_, Option<String>>((status, body, truncated))
    };
    let res = tokio::select! {
        r = tokio::time::timeout(timeout, work) => r,
        () = cancel.cancelled() => {
            return RawRun { ending: Ending::Cancelled, ..failed(String::new(), start) };
        }
    };
    match res {
        Err(_) => RawRun {
            ending: Ending::TimedOut,
            ..failed(String::new(), start)
        },
        Ok(Err(None)) => RawRun {
            ending: Ending::TimedOut,
            ..failed(String::new(), start)
        },
        Ok(Err(Some(e))) => failed(e, start),
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
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
