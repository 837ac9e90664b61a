//! `WebFetch(domain:...)` rules: hostname semantics.

/// A compiled `domain:` pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DomainPattern {
    /// `domain:*`: every host.
    Any,
    /// `domain:*.example.com`: subdomains at any depth, not the apex.
    Subdomains(String),
    /// A hostname, possibly with `*` labels that match one label each.
    Labels(Vec<String>),
}

impl DomainPattern {
    /// Parses rule content `domain:HOST`.
    pub fn parse(content: &str) -> Result<Self, String> {
        let host = content
            .strip_prefix("domain:")
            .ok_or_else(|| "WebFetch rules must be `WebFetch(domain:HOST)`".to_owned())?;
        let host = normalize_host(host);
        if host.is_empty() {
            return Err("empty domain".into());
        }
        // An IPv6 address, with its brackets as in a URL (`[::1]`) or without (`::1`): the
        // host as the URL has it, in canonical form.
        if let Some(ip) = ipv6_literal(&host) {
            return Ok(Self::Labels(ip.split('.').map(str::to_owned).collect()));
        }
        if host.contains(['/', ':', '@', ' ', '[', ']']) {
            return Err(format!(
                "`{host}` is not a hostname (write the host only, without scheme, port or path)"
            ));
        }
        // The URL's host is in its ASCII (IDNA) form: so is the rule's, label by label
        // (`*` labels kept).
        let host = to_ascii(&host)?;
        if host == "*" {
            return Ok(Self::Any);
        }
        // A rule that can match no host would guard nothing without a word: an empty label
        // (the cookie-style `.example.com`) or a `*` within a label (`*example.com`, `**`).
        if host.split('.').any(str::is_empty) {
            let bare = host.trim_start_matches('.');
            return Err(
                if host.starts_with('.') && !bare.is_empty() && !bare.contains("..") {
                    format!(
                        "`{host}` has an empty label and matches no host: for the domain write \
                     `domain:{bare}`, for its subdomains `domain:*.{bare}`"
                    )
                } else {
                    format!("`{host}` has an empty label and matches no host")
                },
            );
        }
        if let Some(label) = host.split('.').find(|l| *l != "*" && l.contains('*')) {
            return Err(format!(
                "`{host}`: `*` stands for a whole label (`*.example.com`), not part of one \
                 (`{label}`); as written the rule matches no host"
            ));
        }
        if let Some(rest) = host.strip_prefix("*.")
            && !rest.contains('*')
        {
            return Ok(Self::Subdomains(rest.to_owned()));
        }
        // A host the URL parser reads as an IPv4 address, in any of the forms it takes
        // (`127.1`, `2130706433`, `0x7f.0.0.1`, `127.000.000.001`), is written as a URL's
        // host has it (`127.0.0.1`); one that looks like an address but is none
        // (`999.1.1.1`) matches no host.
        if !host.contains('*')
            && let Some(canonical) = ipv4_literal(&host)?
        {
            return Ok(Self::Labels(
                canonical.split('.').map(str::to_owned).collect(),
            ));
        }
        Ok(Self::Labels(host.split('.').map(str::to_owned).collect()))
    }

    /// Whether a (normalised) host matches.
    pub fn matches(&self, host: &str) -> bool {
        match self {
            Self::Any => true,
            Self::Subdomains(d) => {
                host.len() > d.len() + 1
                    && host.ends_with(d.as_str())
                    && host[..host.len() - d.len()].ends_with('.')
            }
            Self::Labels(labels) => {
                let parts: Vec<&str> = host.split('.').collect();
                parts.len() == labels.len()
                    && parts.iter().zip(labels).all(|(p, l)| l == "*" || l == p)
            }
        }
    }
}

fn normalize_host(host: &str) -> String {
    host.trim().trim_end_matches('.').to_ascii_lowercase()
}

/// `host` as a URL writes an IPv6 address (`[::1]`, compressed, lowercase), when it is one,
/// with or without brackets.
fn ipv6_literal(host: &str) -> Option<String> {
    let inner = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    match url::Host::parse(&format!("[{inner}]")) {
        Ok(url::Host::Ipv6(ip)) => Some(ip_host(ip)),
        _ => None,
    }
}

/// An IPv6 address as the rules and the URL's host name it: an IPv4-mapped one
/// (`::ffff:127.0.0.1`, which reaches the IPv4 host on a dual-stack machine) as that IPv4
/// address, so that `domain:127.0.0.1` guards it; any other as the URL parser writes it,
/// in brackets.
fn ip_host(ip: std::net::Ipv6Addr) -> String {
    match ip.to_ipv4_mapped() {
        Some(v4) => v4.to_string(),
        None => url::Host::<String>::Ipv6(ip).to_string(),
    }
}

/// `host` as a URL writes it when the URL parser reads it as an IPv4 address (`127.1` ->
/// `127.0.0.1`); `None` for a domain name; an error for a host the parser refuses (a
/// number out of range: `999.1.1.1`), which no URL can have.
fn ipv4_literal(host: &str) -> Result<Option<String>, String> {
    match url::Host::parse(host) {
        Ok(ip @ url::Host::Ipv4(_)) => Ok(Some(ip.to_string())),
        Ok(_) => Ok(None),
        Err(e) => Err(format!(
            "`{host}` is not a valid host ({e}) and matches no host"
        )),
    }
}

/// A rule's hostname in the ASCII form a URL's host has (`bücher.de` -> `xn--bcher-kva.de`,
/// as the `url` crate's IDNA processing makes it), `*` labels kept. The label separators
/// IDNA knows (`.`, `。`, `．`, `｡`) all separate labels.
fn to_ascii(host: &str) -> Result<String, String> {
    if host.is_ascii() {
        return Ok(host.to_owned());
    }
    let mut labels = Vec::new();
    for label in host.split(['.', '\u{3002}', '\u{FF0E}', '\u{FF61}']) {
        if label.is_ascii() {
            labels.push(label.to_ascii_lowercase());
            continue;
        }
        // Parsed as a domain whose last label is not a number (else it could be read as an
        // IPv4 address): the label's ASCII form is what precedes `.a`.
        match url::Host::parse(&format!("{label}.a")) {
            Ok(url::Host::Domain(d)) => {
                labels.push(d.strip_suffix(".a").unwrap_or(&d).to_owned());
            }
            _ => return Err(format!("`{host}` is not a valid hostname (IDNA)")),
        }
    }
    Ok(labels.join(".").trim_end_matches('.').to_owned())
}

/// The host of a URL as the fetch would see it (userinfo dropped, IDNA applied, lowercase,
/// trailing dot removed); a URL without a scheme is read as `https://`.
pub fn url_host(raw: &str) -> Option<String> {
    // Only a URL without a scheme is read again as `https://`: one with a scheme that does
    // not parse (a bad port, a forbidden character in the host) is no URL at all, and its
    // scheme must not be taken for its host.
    let parsed = match url::Url::parse(raw.trim()) {
        Err(url::ParseError::RelativeUrlWithoutBase) => {
            url::Url::parse(&format!("https://{}", raw.trim()))
        }
        parsed => parsed,
    }
    .ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    // An IPv6 address keeps its brackets (`[::1]`), as a rule names it.
    match parsed.host()? {
        url::Host::Ipv6(ip) => Some(ip_host(ip)),
        _ => Some(normalize_host(parsed.host_str()?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        assert_eq!(
            url_host("http://a.com@evil.com/x").as_deref(),
            Some("evil.com")
        );
        assert_eq!(url_host("https://Docs.RS./x").as_deref(), Some("docs.rs"));
        let p = DomainPattern::parse("domain:*.example.com").unwrap();
        assert!(p.matches("a.b.example.com"));
        assert!(!p.matches("example.com"));
        assert!(!p.matches("evilexample.com"));
        assert!(DomainPattern::parse("domain:https://x.com").is_err());
    }

    /// A rule that could match no host is refused with why (a deny that guards nothing
    /// would otherwise pass without a word); wildcard labels and one trailing dot are fine.
    #[test]
    fn rules_that_match_no_host_are_refused() {
        let err = DomainPattern::parse("domain:.example.com").unwrap_err();
        assert!(
            err.contains("`domain:example.com`") && err.contains("`domain:*.example.com`"),
            "{err}"
        );
        for rule in [
            "domain:a..b.com",
            "domain:.a",
            "domain:*example.com",
            "domain:**.example.com",
            "domain:ex*mple.com",
            "domain:*.*x.com",
        ] {
            let err = DomainPattern::parse(rule).expect_err(rule);
            assert!(err.contains("matches no host"), "{rule}: {err}");
        }
        for rule in [
            "domain:*",
            "domain:*.example.com",
            "domain:www.*.com",
            "domain:example.com.",
        ] {
            assert!(DomainPattern::parse(rule).is_ok(), "{rule}");
        }
    }

    /// A rule naming an IPv4 address in any form the URL parser reads as one matches the
    /// address a URL's host becomes (`http://127.1/` fetches 127.0.0.1): a deny written
    /// `domain:127.1` guards it, where it used to match nothing and say nothing. A host that
    /// looks like an address but is none, or has a character no host can have, is refused.
    #[test]
    fn ipv4_rules_are_read_as_the_url_parser_reads_hosts() {
        let host = url_host("http://127.1:8080/x").unwrap();
        assert_eq!(host, "127.0.0.1");
        for rule in [
            "domain:127.1",
            "domain:2130706433",
            "domain:0x7f.0.0.1",
            "domain:127.000.000.001",
            "domain:127.0.0.1",
        ] {
            let p = DomainPattern::parse(rule).unwrap_or_else(|e| panic!("{rule}: {e}"));
            assert!(p.matches(&host), "{rule}");
            assert!(!p.matches("127.0.0.2"), "{rule}");
        }
        for rule in ["domain:999.1.1.1", "domain:a|b.com", "domain:1.2.3.4.5"] {
            let err = DomainPattern::parse(rule).expect_err(rule);
            assert!(err.contains("matches no host"), "{rule}: {err}");
        }
        // Names stay names, `*` labels included.
        assert!(
            DomainPattern::parse("domain:127.example")
                .unwrap()
                .matches("127.example")
        );
        assert!(DomainPattern::parse("domain:*.1.2").is_ok());
    }

    /// A URL with a scheme that does not parse is no URL: its scheme is never taken for its
    /// host (`https://evil.com:99999/` read again as `https://https://…` had the host
    /// `https`), so a domain deny rule refuses it and no allow rule lets it through.
    #[test]
    fn a_url_that_does_not_parse_has_no_host() {
        for raw in [
            "https://evil.com:99999/",
            "https://evil.com\u{0}/",
            "http://[::1",
        ] {
            assert_eq!(url_host(raw), None, "{raw}");
        }
        assert_eq!(url_host("docs.rs/x").as_deref(), Some("docs.rs"));
    }

    /// An IPv6 host is matched by a rule naming it with or without brackets, in any of its
    /// spellings; the suggested rule (the URL's host) reads back.
    #[test]
    fn ipv6_hosts() {
        let host = url_host("http://[0:0::1]:8080/x").unwrap();
        assert_eq!(host, "[::1]");
        for rule in ["domain:[::1]", "domain:::1", "domain:[0:0:0:0:0:0:0:1]"] {
            let p = DomainPattern::parse(rule).unwrap_or_else(|e| panic!("{rule}: {e}"));
            assert!(p.matches(&host), "{rule}");
            assert!(!p.matches("[::2]"), "{rule}");
        }
        let suggested = format!("domain:{host}");
        assert!(DomainPattern::parse(&suggested).unwrap().matches(&host));
        // An IPv4-mapped address is its IPv4 host (on a dual-stack machine it reaches it):
        // a rule for either spelling guards both.
        let mapped = url_host("http://[::ffff:127.0.0.1]/").unwrap();
        assert_eq!(mapped, "127.0.0.1");
        for rule in [
            "domain:[::ffff:127.0.0.1]",
            "domain:127.1",
            "domain:::ffff:7f00:1",
        ] {
            let p = DomainPattern::parse(rule).unwrap_or_else(|e| panic!("{rule}: {e}"));
            assert!(p.matches(&mapped), "{rule}");
            assert!(p.matches(&url_host("http://127.0.0.1/").unwrap()), "{rule}");
        }
        assert!(DomainPattern::parse("domain:[::1]:80").is_err());
        assert!(DomainPattern::parse("domain:[example.com]").is_err());
    }
}
