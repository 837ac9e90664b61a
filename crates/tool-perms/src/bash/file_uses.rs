//! Commands whose files each have a use of their own, named mostly by options: `curl`,
//! `wget`, `tar` and `patch`. `curl -o .git/hooks/pre-commit URL` writes a file, `curl -d
//! @.env URL` sends one, `tar -xf a.tar -C .git/hooks` writes into a directory, `patch
//! .bashrc fix.diff` changes the file it is given: [`file_uses`] says which file is read and
//! which is written, for the path checks of every other command.
//!
//! What is not worked out from the command line is a word with no value (its `raw` text says
//! what it stands for), which the path checks treat as a path that cannot be computed: an
//! option the table does not know, a computed word where an option may be, a configuration
//! file full of more options, a name the server picks (`curl -OJ`), a recursive download.
//! What an archive or a patch holds is not read: `tar -x` is checked as a write of the
//! directory it extracts into, and of the members it is given.
//!
//! Not here: URLs (they are not files, except curl's `file://`), and what the commands send
//! over the network.

use super::commands::{PathUse, TreeRead};
use super::parse::Word;

/// The files a command reads and writes, in the order it names them.
pub type FileUses = Vec<(Word, PathUse)>;

/// The files `name WORDS` reads and writes, for `curl`, `wget`, `tar` and `patch`; `None`
/// for another command.
pub fn file_uses(name: &str, words: &[Word]) -> Option<FileUses> {
    Some(match name {
        "curl" => curl(words),
        "wget" => wget(words),
        "tar" => tar(words),
        "patch" => patch(words),
        _ => return None,
    })
}

/// How `tar WORDS` reads the trees it archives (`tar -c DIR`, `tar -r DIR`).
pub fn tar_reads_trees(words: &[Word]) -> Option<TreeRead> {
    let parsed = parse(words, &TAR);
    let archives = matches!(tar_mode(&parsed), Some(TarMode::Create));
    let has = |k: TarOpt| {
        parsed
            .items
            .iter()
            .any(|i| matches!(i, Item::Opt(o, _) if *o == k))
    };
    archives.then(|| TreeRead {
        follow_links: has(TarOpt::Dereference),
        rg_filters: None,
        defaults_to_cwd: false,
        direct_only: has(TarOpt::NoRecursion),
    })
}

/// Whether `tar WORDS` removes the files it archives (`--remove-files`).
pub fn tar_removes_trees(words: &[Word]) -> bool {
    let parsed = parse(words, &TAR);
    matches!(tar_mode(&parsed), Some(TarMode::Create))
        && parsed
            .items
            .iter()
            .any(|i| matches!(i, Item::Opt(TarOpt::RemoveFiles, _)))
}

/// A word for a path that is known.
fn path(value: impl Into<String>, like: &Word) -> Word {
    let value = value.into();
    Word {
        raw: value.clone(),
        value: Some(value),
        plain: like.plain,
        glob: like.glob,
    }
}

/// A plain word for a path written out in full.
fn literal(value: &str) -> Word {
    Word {
        raw: value.to_owned(),
        value: Some(value.to_owned()),
        plain: true,
        glob: false,
    }
}

/// A word for what cannot be worked out: `raw` says what it stands for.
fn unknown(raw: impl Into<String>) -> Word {
    Word {
        raw: raw.into(),
        value: None,
        plain: false,
        glob: false,
    }
}

/// `rel` under `dir` (`None`: the working directory), unless it is absolute.
fn under(dir: Option<&str>, rel: &str) -> String {
    match dir {
        Some(d) if !rel.starts_with(['/', '~']) => format!("{}/{rel}", d.trim_end_matches('/')),
        _ => rel.to_owned(),
    }
}

/// One option of a command's table: its long name (without `--`), its short letter, whether
/// it takes a value, and what it is.
type Spec<K> = (&'static str, Option<char>, bool, K);

/// How a command reads its command line.
struct Syntax<K: 'static> {
    /// The options it knows.
    table: &'static [Spec<K>],
    /// `--opt=value` is one word (getopt_long); curl takes the value from the next word only.
    long_equals: bool,
    /// tar's old style: a first word without a dash is a bundle of letters whose values are
    /// the next words, in order (`tar xzf a.tgz`).
    old_style: bool,
}

/// What one word (or bundle) of a command line is.
#[derive(Debug, Clone)]
enum Item<K> {
    /// An option, with its value when it takes one (a word with no value when the value is
    /// computed, or missing).
    Opt(K, Option<Word>),
    /// An operand.
    Operand(Word),
    /// Not understood: an option the table does not know, or a computed word where an option
    /// may be.
    Unknown(String),
}

struct Parsed<K> {
    items: Vec<Item<K>>,
}

/// The long option `name` (without `--`) in the table: exact, else the one it abbreviates.
fn long_spec<K: Copy>(table: &[Spec<K>], name: &str) -> Option<(bool, K)> {
    if let Some(s) = table.iter().find(|s| s.0 == name) {
        return Some((s.2, s.3));
    }
    let mut found = table
        .iter()
        .filter(|s| !name.is_empty() && s.0.starts_with(name));
    let first = found.next()?;
    // Several options abbreviated: ambiguous unless they are the same option.
    found
        .all(|s| s.2 == first.2 && std::mem::discriminant(&s.3) == std::mem::discriminant(&first.3))
        .then_some((first.2, first.3))
}

fn short_spec<K: Copy>(table: &[Spec<K>], letter: char) -> Option<(bool, K)> {
    table
        .iter()
        .find(|s| s.1 == Some(letter))
        .map(|s| (s.2, s.3))
}

/// Reads `words` (the command name first) as `syntax` says: options anywhere (GNU getopt
/// permutes, curl takes them anywhere) until `--`.
fn parse<K: Copy>(words: &[Word], syntax: &Syntax<K>) -> Parsed<K> {
    let mut items = Vec::new();
    let mut rest = words.iter().skip(1).peekable();
    let mut options = true;
    if syntax.old_style
        && let Some(first) = rest.peek()
        && let Some(v) = first.value.as_deref()
        && !v.starts_with('-')
        && !v.is_empty()
    {
        rest.next();
        let mut pending = Vec::new();
        for c in v.chars() {
            match short_spec(syntax.table, c) {
                Some((true, k)) => pending.push(k),
                Some((false, k)) => items.push(Item::Opt(k, None)),
                None => items.push(Item::Unknown(format!("the option `{c}` in `{v}`"))),
            }
        }
        for k in pending {
            let value = rest
                .next()
                .cloned()
                .unwrap_or_else(|| unknown("a missing value"));
            items.push(Item::Opt(k, Some(value)));
        }
    }
    while let Some(w) = rest.next() {
        let Some(v) = w.value.as_deref() else {
            // A computed word: an option unless it starts with other literal text.
            if options && !super::commands::is_surely_operand(w) {
                items.push(Item::Unknown(format!("the computed word {}", w.raw)));
            } else {
                items.push(Item::Operand(w.clone()));
            }
            continue;
        };
        if !options || v == "-" || !v.starts_with('-') {
            items.push(Item::Operand(w.clone()));
            continue;
        }
        if v == "--" {
            options = false;
            continue;
        }
        if let Some(long) = v.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, value)) if syntax.long_equals => (n, Some(value)),
                _ => (long, None),
            };
            // `--expand-OPT` (curl): OPT's value with `{{variables}}` expanded.
            let (name, expands) = match name.strip_prefix("expand-") {
                Some(base) if !syntax.long_equals => (base, true),
                _ => (name, false),
            };
            let spec = long_spec(syntax.table, name).or_else(|| {
                // `--no-FLAG` turns a flag off.
                match long_spec(syntax.table, name.strip_prefix("no-")?) {
                    Some((false, k)) => Some((false, k)),
                    _ => None,
                }
            });
            match spec {
                Some((true, k)) => {
                    let value = match inline {
                        Some(value) => path(value, w),
                        None => rest
                            .next()
                            .cloned()
                            .unwrap_or_else(|| unknown("a missing value")),
                    };
                    let value =
                        if expands && value.value.as_deref().is_some_and(|v| v.contains("{{")) {
                            unknown(format!("the expanded value {}", value.raw))
                        } else {
                            value
                        };
                    items.push(Item::Opt(k, Some(value)));
                }
                Some((false, k)) => items.push(Item::Opt(k, None)),
                // `--no-X` only ever turns a flag off (one the table may not know yet).
                None if name.starts_with("no-") && inline.is_none() => {}
                None => items.push(Item::Unknown(format!("the option {v}"))),
            }
            continue;
        }
        // A bundle of short options: the first that takes a value takes the rest of the
        // bundle, else the next word.
        let letters = &v[1..];
        for (at, c) in letters.char_indices() {
            match short_spec(syntax.table, c) {
                Some((true, k)) => {
                    let after = &letters[at + c.len_utf8()..];
                    let value = if after.is_empty() {
                        rest.next()
                            .cloned()
                            .unwrap_or_else(|| unknown("a missing value"))
                    } else {
                        path(after, w)
                    };
                    items.push(Item::Opt(k, Some(value)));
                    break;
                }
                Some((false, k)) => items.push(Item::Opt(k, None)),
                None => {
                    items.push(Item::Unknown(format!("the option -{c} in {v}")));
                    break;
                }
            }
        }
    }
    Parsed { items }
}

/// A value that is standard input or output, or names no file.
fn is_stdio(v: &str) -> bool {
    matches!(v, "-" | "%")
}

/// The value of an option's word: `Err` with the word when it is computed.
fn value_of(w: &Word) -> Result<&str, &Word> {
    w.value.as_deref().ok_or(w)
}

/// Pushes `w` as a file used as `use_`, unless it is standard input or output; a computed
/// word is pushed as it is (it cannot be checked).
fn push_file(out: &mut FileUses, w: &Word, use_: PathUse) {
    match value_of(w) {
        Ok(v) if is_stdio(v) || v.is_empty() => {}
        _ => out.push((w.clone(), use_)),
    }
}

/// The words of `out` for what could not be understood: each is checked as a write.
fn push_unknown(out: &mut FileUses, what: String) {
    out.push((unknown(what), PathUse::Write));
}

// ---------------------------------------------------------------------------------------
// curl

/// What a curl option's value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Curl {
    /// A flag, or a value that names no file.
    Other,
    /// A file it reads (`--cacert F`, `--netrc-file F`).
    Reads,
    /// A file it writes (`-D F`, `-c F`, `--trace F`; `--hsts F` is read and written).
    Writes,
    /// `-o FILE`: a download's file, under `--output-dir`.
    Output,
    /// `--output-dir DIR`.
    OutputDir,
    /// `-O`, `--remote-name-all`: the download is named after the URL.
    RemoteName,
    /// `-J`: named as the server says.
    HeaderName,
    /// `-d @FILE`, `--json @FILE`, `-H @FILE`: a file when the value starts with `@`.
    AtFile,
    /// `--data-urlencode`, `--url-query`, `--variable`: `[name]@FILE` when an `@` comes
    /// before any `=`.
    NameAtFile,
    /// `-F name=@FILE` / `name=<FILE` (and `;headers=@FILE`).
    Form,
    /// `-b`: a file when the value has no `=`.
    Cookie,
    /// `-E FILE[:PASSWORD]`, `--key FILE` (not a `pkcs11:` URI).
    Cert,
    /// `--pinnedpubkey`: a file unless `sha256//…`.
    Pinned,
    /// `-K FILE`: read, and full of options that are not seen.
    Config,
    /// `-T FILE`: sent (curl's globs `{a,b}`, `[1-3]` unless `-g`).
    Upload,
    /// `-w FORMAT`: `@FILE` is read; `%output{FILE}` writes.
    WriteOut,
    /// `--url URL`.
    Url,
    /// `-g`: no globbing in URLs and `-T`.
    Globoff,
}

const CURL_TABLE: &[Spec<Curl>] = {
    use Curl::*;
    &[
        ("abstract-unix-socket", None, true, Other),
        ("alt-svc", None, true, Writes),
        ("anyauth", None, false, Other),
        ("append", Some('a'), false, Other),
        ("aws-sigv4", None, true, Other),
        ("basic", None, false, Other),
        ("ca-native", None, false, Other),
        ("cacert", None, true, Reads),
        ("capath", None, true, Reads),
        ("cert", Some('E'), true, Cert),
        ("cert-status", None, false, Other),
        ("cert-type", None, true, Other),
        ("ciphers", None, true, Other),
        ("compressed", None, false, Other),
        ("compressed-ssh", None, false, Other),
        ("config", Some('K'), true, Config),
        ("connect-timeout", None, true, Other),
        ("connect-to", None, true, Other),
        ("continue-at", Some('C'), true, Other),
        ("cookie", Some('b'), true, Cookie),
        ("cookie-jar", Some('c'), true, Writes),
        ("create-dirs", None, false, Other),
        ("create-file-mode", None, true, Other),
        ("crlf", None, false, Other),
        ("crlfile", None, true, Reads),
        ("curves", None, true, Other),
        ("data", Some('d'), true, AtFile),
        ("data-ascii", None, true, AtFile),
        ("data-binary", None, true, AtFile),
        ("data-raw", None, true, Other),
        ("data-urlencode", None, true, NameAtFile),
        ("delegation", None, true, Other),
        ("digest", None, false, Other),
        ("disable", Some('q'), false, Other),
        ("disable-eprt", None, false, Other),
        ("disable-epsv", None, false, Other),
        ("disallow-username-in-url", None, false, Other),
        ("dns-interface", None, true, Other),
        ("dns-ipv4-addr", None, true, Other),
        ("dns-ipv6-addr", None, true, Other),
        ("dns-servers", None, true, Other),
        ("doh-cert-status", None, false, Other),
        ("doh-insecure", None, false, Other),
        ("doh-url", None, true, Other),
        ("dump-ca-embed", None, false, Other),
        ("dump-header", Some('D'), true, Writes),
        ("ech", None, true, Other),
        ("egd-file", None, true, Reads),
        ("engine", None, true, Other),
        ("etag-compare", None, true, Reads),
        ("etag-save", None, true, Writes),
        ("expect100-timeout", None, true, Other),
        ("fail", Some('f'), false, Other),
        ("fail-early", None, false, Other),
        ("fail-with-body", None, false, Other),
        ("false-start", None, false, Other),
        ("follow", None, false, Other),
        ("form", Some('F'), true, Form),
        ("form-escape", None, false, Other),
        ("form-string", None, true, Other),
        ("ftp-account", None, true, Other),
        ("ftp-alternative-to-user", None, true, Other),
        ("ftp-create-dirs", None, false, Other),
        ("ftp-method", None, true, Other),
        ("ftp-pasv", None, false, Other),
        ("ftp-port", Some('P'), true, Other),
        ("ftp-pret", None, false, Other),
        ("ftp-skip-pasv-ip", None, false, Other),
        ("ftp-ssl-ccc", None, false, Other),
        ("ftp-ssl-ccc-mode", None, true, Other),
        ("ftp-ssl-control", None, false, Other),
        ("get", Some('G'), false, Other),
        ("globoff", Some('g'), false, Globoff),
        ("happy-eyeballs-timeout-ms", None, true, Other),
        ("haproxy-clientip", None, true, Other),
        ("haproxy-protocol", None, false, Other),
        ("head", Some('I'), false, Other),
        ("header", Some('H'), true, AtFile),
        ("help", Some('h'), false, Other),
        ("hostpubmd5", None, true, Other),
        ("hostpubsha256", None, true, Other),
        ("hsts", None, true, Writes),
        ("http0.9", None, false, Other),
        ("http1.0", Some('0'), false, Other),
        ("http1.1", None, false, Other),
        ("http2", None, false, Other),
        ("http2-prior-knowledge", None, false, Other),
        ("http3", None, false, Other),
        ("http3-only", None, false, Other),
        ("ignore-content-length", None, false, Other),
        ("include", Some('i'), false, Other),
        ("insecure", Some('k'), false, Other),
        ("interface", None, true, Other),
        ("ip-tos", None, true, Other),
        ("ipfs-gateway", None, true, Other),
        ("ipv4", Some('4'), false, Other),
        ("ipv6", Some('6'), false, Other),
        ("json", None, true, AtFile),
        ("junk-session-cookies", Some('j'), false, Other),
        ("keepalive-cnt", None, true, Other),
        ("keepalive-time", None, true, Other),
        ("key", None, true, Cert),
        ("key-type", None, true, Other),
        ("knownhosts", None, true, Reads),
        ("krb", None, true, Other),
        ("libcurl", None, true, Writes),
        ("limit-rate", None, true, Other),
        ("list-only", Some('l'), false, Other),
        ("local-port", None, true, Other),
        ("location", Some('L'), false, Other),
        ("location-trusted", None, false, Other),
        ("login-options", None, true, Other),
        ("mail-auth", None, true, Other),
        ("mail-from", None, true, Other),
        ("mail-rcpt", None, true, Other),
        ("mail-rcpt-allowfails", None, false, Other),
        ("manual", Some('M'), false, Other),
        ("max-filesize", None, true, Other),
        ("max-redirs", None, true, Other),
        ("max-time", Some('m'), true, Other),
        ("metalink", None, false, Other),
        ("mptcp", None, false, Other),
        ("negotiate", None, false, Other),
        ("netrc", Some('n'), false, Other),
        ("netrc-file", None, true, Reads),
        ("netrc-optional", None, false, Other),
        ("next", Some(':'), false, Other),
        ("no-alpn", None, false, Other),
        ("no-buffer", Some('N'), false, Other),
        ("no-clobber", None, false, Other),
        ("no-keepalive", None, false, Other),
        ("no-npn", None, false, Other),
        ("no-progress-meter", None, false, Other),
        ("no-sessionid", None, false, Other),
        ("noproxy", None, true, Other),
        ("ntlm", None, false, Other),
        ("ntlm-wb", None, false, Other),
        ("oauth2-bearer", None, true, Other),
        ("out-null", None, false, Other),
        ("output", Some('o'), true, Output),
        ("output-dir", None, true, OutputDir),
        ("parallel", Some('Z'), false, Other),
        ("parallel-immediate", None, false, Other),
        ("parallel-max", None, true, Other),
        ("pass", None, true, Other),
        ("path-as-is", None, false, Other),
        ("pinnedpubkey", None, true, Pinned),
        ("post301", None, false, Other),
        ("post302", None, false, Other),
        ("post303", None, false, Other),
        ("preproxy", None, true, Other),
        ("progress-bar", Some('#'), false, Other),
        ("progress-meter", None, false, Other),
        ("proto", None, true, Other),
        ("proto-default", None, true, Other),
        ("proto-redir", None, true, Other),
        ("proxy", Some('x'), true, Other),
        ("proxy-anyauth", None, false, Other),
        ("proxy-basic", None, false, Other),
        ("proxy-ca-native", None, false, Other),
        ("proxy-cacert", None, true, Reads),
        ("proxy-capath", None, true, Reads),
        ("proxy-cert", None, true, Cert),
        ("proxy-cert-type", None, true, Other),
        ("proxy-ciphers", None, true, Other),
        ("proxy-crlfile", None, true, Reads),
        ("proxy-digest", None, false, Other),
        ("proxy-header", None, true, AtFile),
        ("proxy-http2", None, false, Other),
        ("proxy-insecure", None, false, Other),
        ("proxy-key", None, true, Cert),
        ("proxy-key-type", None, true, Other),
        ("proxy-negotiate", None, false, Other),
        ("proxy-ntlm", None, false, Other),
        ("proxy-pass", None, true, Other),
        ("proxy-pinnedpubkey", None, true, Pinned),
        ("proxy-service-name", None, true, Other),
        ("proxy-ssl-allow-beast", None, false, Other),
        ("proxy-ssl-auto-client-cert", None, false, Other),
        ("proxy-tls13-ciphers", None, true, Other),
        ("proxy-tlsauthtype", None, true, Other),
        ("proxy-tlspassword", None, true, Other),
        ("proxy-tlsuser", None, true, Other),
        ("proxy-tlsv1", None, false, Other),
        ("proxy-user", Some('U'), true, Other),
        ("proxy1.0", None, true, Other),
        ("proxytunnel", Some('p'), false, Other),
        ("pubkey", None, true, Reads),
        ("quote", Some('Q'), true, Other),
        ("random-file", None, true, Reads),
        ("range", Some('r'), true, Other),
        ("rate", None, true, Other),
        ("raw", None, false, Other),
        ("referer", Some('e'), true, Other),
        ("remote-header-name", Some('J'), false, HeaderName),
        ("remote-name", Some('O'), false, RemoteName),
        ("remote-name-all", None, false, RemoteName),
        ("remote-time", Some('R'), false, Other),
        ("remove-on-error", None, false, Other),
        ("request", Some('X'), true, Other),
        ("request-target", None, true, Other),
        ("resolve", None, true, Other),
        ("retry", None, true, Other),
        ("retry-all-errors", None, false, Other),
        ("retry-connrefused", None, false, Other),
        ("retry-delay", None, true, Other),
        ("retry-max-time", None, true, Other),
        ("sasl-authzid", None, true, Other),
        ("sasl-ir", None, false, Other),
        ("service-name", None, true, Other),
        ("show-error", Some('S'), false, Other),
        ("show-headers", None, false, Other),
        ("sigalgs", None, true, Other),
        ("silent", Some('s'), false, Other),
        ("skip-existing", None, false, Other),
        ("socks4", None, true, Other),
        ("socks4a", None, true, Other),
        ("socks5", None, true, Other),
        ("socks5-basic", None, false, Other),
        ("socks5-gssapi", None, false, Other),
        ("socks5-gssapi-nec", None, false, Other),
        ("socks5-gssapi-service", None, true, Other),
        ("socks5-hostname", None, true, Other),
        ("speed-limit", Some('Y'), true, Other),
        ("speed-time", Some('y'), true, Other),
        ("ssl", None, false, Other),
        ("ssl-allow-beast", None, false, Other),
        ("ssl-auto-client-cert", None, false, Other),
        ("ssl-no-revoke", None, false, Other),
        ("ssl-reqd", None, false, Other),
        ("ssl-revoke-best-effort", None, false, Other),
        ("ssl-sessions", None, true, Writes),
        ("sslv2", Some('2'), false, Other),
        ("sslv3", Some('3'), false, Other),
        ("stderr", None, true, Writes),
        ("styled-output", None, false, Other),
        ("suppress-connect-headers", None, false, Other),
        ("tcp-fastopen", None, false, Other),
        ("tcp-nodelay", None, false, Other),
        ("telnet-option", Some('t'), true, Other),
        ("tftp-blksize", None, true, Other),
        ("tftp-no-options", None, false, Other),
        ("time-cond", Some('z'), true, Other),
        ("tls-earlydata", None, false, Other),
        ("tls-max", None, true, Other),
        ("tls13-ciphers", None, true, Other),
        ("tlsauthtype", None, true, Other),
        ("tlspassword", None, true, Other),
        ("tlsuser", None, true, Other),
        ("tlsv1", Some('1'), false, Other),
        ("tlsv1.0", None, false, Other),
        ("tlsv1.1", None, false, Other),
        ("tlsv1.2", None, false, Other),
        ("tlsv1.3", None, false, Other),
        ("tr-encoding", None, false, Other),
        ("trace", None, true, Writes),
        ("trace-ascii", None, true, Writes),
        ("trace-config", None, true, Other),
        ("trace-ids", None, false, Other),
        ("trace-time", None, false, Other),
        ("unix-socket", None, true, Other),
        ("upload-file", Some('T'), true, Upload),
        ("upload-flags", None, true, Other),
        ("url", None, true, Url),
        ("url-query", None, true, NameAtFile),
        ("use-ascii", Some('B'), false, Other),
        ("user", Some('u'), true, Other),
        ("user-agent", Some('A'), true, Other),
        ("variable", None, true, NameAtFile),
        ("verbose", Some('v'), false, Other),
        ("version", Some('V'), false, Other),
        ("vlan-priority", None, true, Other),
        ("write-out", Some('w'), true, WriteOut),
        ("xattr", None, false, Other),
    ]
};

const CURL: Syntax<Curl> = Syntax {
    table: CURL_TABLE,
    long_equals: false,
    old_style: false,
};

/// Whether curl globs `s` (`{a,b}`, `[1-3]`) unless told not to.
fn curl_globs(s: &str) -> bool {
    s.contains(['{', '[', '}', ']'])
}

/// The local path of a `file:` URL (`file:///etc/passwd`, `file://localhost/x`), `None`
/// for another URL; `Some(None)` when it cannot be worked out (an escape, another host).
fn file_url_path(url: &str) -> Option<Option<String>> {
    let scheme = url.get(..5)?;
    if !scheme.eq_ignore_ascii_case("file:") {
        return None;
    }
    let rest = &url[5..];
    let rest = rest.strip_prefix("//").map_or(Some(rest), |after| {
        // An authority: empty or `localhost`.
        let (host, path) = after.split_at(after.find('/').unwrap_or(after.len()));
        (host.is_empty() || host.eq_ignore_ascii_case("localhost")).then_some(path)
    });
    Some(
        rest.filter(|p| p.starts_with('/') && !p.contains('%'))
            .map(|p| {
                let end = p.find(['?', '#']).unwrap_or(p.len());
                p[..end].to_owned()
            }),
    )
}

/// The name `-O` gives a download from `url`: the last segment of its path.
fn url_file_name(url: &str) -> Option<&str> {
    let no_fragment = url.split('#').next().unwrap_or(url);
    let no_query = no_fragment.split('?').next().unwrap_or(no_fragment);
    let path = match no_query.split_once("://") {
        Some((_, rest)) => rest.split_once('/').map_or("", |(_, p)| p),
        None => no_query.split_once('/').map_or("", |(_, p)| p),
    };
    let name = path.rsplit('/').next().unwrap_or("");
    (!name.is_empty() && name != "." && name != "..").then_some(name)
}

fn curl(words: &[Word]) -> FileUses {
    let parsed = parse(words, &CURL);
    let mut out = FileUses::new();
    let mut outputs: Vec<Word> = Vec::new();
    let mut output_dir: Option<Word> = None;
    let mut urls: Vec<Word> = Vec::new();
    let globoff = parsed
        .items
        .iter()
        .any(|i| matches!(i, Item::Opt(Curl::Globoff, _)));
    let (mut remote_name, mut header_name) = (false, false);
    // The file in `value` after `at` (`@FILE`, `<FILE`), up to a `;` (form fields).
    let file_after = |value: &str, w: &Word, form: bool| -> Option<Word> {
        let end = if form {
            value.find(';').unwrap_or(value.len())
        } else {
            value.len()
        };
        let file = &value[..end];
        if file.starts_with('"') {
            return Some(unknown(format!("the quoted file name in {}", w.raw)));
        }
        (!file.is_empty() && !is_stdio(file)).then(|| path(file, w))
    };
    for item in parsed.items {
        let (kind, value) = match item {
            Item::Unknown(what) => {
                push_unknown(&mut out, format!("what curl does with {what}"));
                continue;
            }
            Item::Operand(w) => {
                urls.push(w);
                continue;
            }
            Item::Opt(kind, value) => (kind, value),
        };
        let Some(w) = value else {
            match kind {
                Curl::RemoteName => remote_name = true,
                Curl::HeaderName => header_name = true,
                _ => {}
            }
            continue;
        };
        let v = match value_of(&w) {
            Ok(v) => v,
            Err(_) => {
                // A computed value of an option that may name a file.
                if !matches!(kind, Curl::Other | Curl::Url) {
                    push_unknown(&mut out, format!("the computed value {}", w.raw));
                }
                if kind == Curl::Url {
                    urls.push(w);
                }
                continue;
            }
        };
        match kind {
            Curl::Other | Curl::RemoteName | Curl::HeaderName | Curl::Globoff => {}
            Curl::Reads => push_file(&mut out, &w, PathUse::Read),
            Curl::Writes => push_file(&mut out, &w, PathUse::Write),
            Curl::Output => outputs.push(w.clone()),
            Curl::OutputDir => output_dir = Some(w.clone()),
            Curl::Url => urls.push(w.clone()),
            Curl::AtFile => {
                if let Some(f) = v.strip_prefix('@').and_then(|f| file_after(f, &w, false)) {
                    out.push((f, PathUse::Read));
                }
            }
            Curl::NameAtFile => {
                let v = v.strip_prefix('+').unwrap_or(v);
                if let Some(at) = v.find(['=', '@']).filter(|&i| v.as_bytes()[i] == b'@')
                    && let Some(f) = file_after(&v[at + 1..], &w, false)
                {
                    out.push((f, PathUse::Read));
                }
            }
            Curl::Form => {
                // `name=@FILE[;type=…]`, `name=<FILE`, several files as `@a,b`, and a
                // header file `;headers=@FILE` / `;headers=<FILE`.
                let content = v.split_once('=').map_or("", |(_, c)| c);
                if let Some(files) = content.strip_prefix(['@', '<']) {
                    let end = files.find(';').unwrap_or(files.len());
                    if files.starts_with('"') {
                        push_unknown(&mut out, format!("the quoted file name in {}", w.raw));
                    } else {
                        for f in files[..end].split(',') {
                            if let Some(f) = file_after(f, &w, true) {
                                out.push((f, PathUse::Read));
                            }
                        }
                    }
                }
                for marker in [";headers=@", ";headers=<"] {
                    if let Some(at) = content.find(marker)
                        && let Some(f) = file_after(&content[at + marker.len()..], &w, true)
                    {
                        out.push((f, PathUse::Read));
                    }
                }
            }
            Curl::Cookie => {
                if !v.contains('=') {
                    push_file(&mut out, &w, PathUse::Read);
                }
            }
            Curl::Cert => {
                if !v.starts_with("pkcs11:") {
                    let file = v.split(':').next().unwrap_or(v);
                    if !file.is_empty() {
                        out.push((path(file, &w), PathUse::Read));
                    }
                }
            }
            Curl::Pinned => {
                if !v.starts_with("sha256//") {
                    push_file(&mut out, &w, PathUse::Read);
                }
            }
            Curl::Config => {
                push_file(&mut out, &w, PathUse::Read);
                push_unknown(
                    &mut out,
                    format!("the options in the config file {}", w.raw),
                );
            }
            Curl::Upload => {
                if v == "." {
                    // Standard input, read as it arrives.
                } else if curl_globs(v) && !globoff {
                    out.push((
                        unknown(format!("the files of the glob {}", w.raw)),
                        PathUse::Read,
                    ));
                } else {
                    push_file(&mut out, &w, PathUse::Read);
                }
            }
            Curl::WriteOut => {
                if let Some(f) = v.strip_prefix('@') {
                    if let Some(f) = file_after(f, &w, false) {
                        out.push((f, PathUse::Read));
                    }
                    push_unknown(
                        &mut out,
                        format!("the format in {}, which may write files", w.raw),
                    );
                }
                if v.contains("%output{") {
                    push_unknown(
                        &mut out,
                        format!("the files `%output{{…}}` in {} writes", w.raw),
                    );
                }
            }
        }
    }
    let dir = match &output_dir {
        Some(d) => match value_of(d) {
            Ok(d) => Some(d),
            Err(d) => {
                push_unknown(
                    &mut out,
                    format!("what lands in the computed directory {}", d.raw),
                );
                None
            }
        },
        None => None,
    };
    for o in &outputs {
        match value_of(o) {
            Ok(v) if is_stdio(v) => {}
            // `#1` is the text a URL glob matched.
            Ok(v) if v.contains('#') => {
                push_unknown(&mut out, format!("the file {} named by a URL glob", o.raw));
            }
            Ok(v) => out.push((path(under(dir, v), o), PathUse::Write)),
            Err(o) => out.push((o.clone(), PathUse::Write)),
        }
    }
    for url in &urls {
        let value = url.value.as_deref();
        // A `file:` URL reads a local file.
        match value.map(file_url_path) {
            Some(Some(Some(p))) if globoff || !curl_globs(&p) => {
                out.push((path(p, url), PathUse::Read));
            }
            Some(Some(_)) => {
                out.push((
                    unknown(format!("the file the URL {} names", url.raw)),
                    PathUse::Read,
                ));
            }
            Some(None) => {}
            None => {
                // A computed URL may be a `file:` one, unless it starts with other text.
                if !super::commands::literal_start(&url.raw)
                    .is_some_and(|c| !matches!(c, 'f' | 'F'))
                {
                    out.push((
                        unknown(format!("the file the URL {} may name", url.raw)),
                        PathUse::Read,
                    ));
                }
            }
        }
        if remote_name {
            let name = match value {
                _ if header_name => None,
                Some(v) if globoff || !curl_globs(v) => url_file_name(v),
                _ => None,
            };
            match name {
                Some(name) => out.push((path(under(dir, name), url), PathUse::Write)),
                None => push_unknown(
                    &mut out,
                    format!(
                        "the file the download of {} is saved as{}",
                        url.raw,
                        dir.map(|d| format!(" in {d}")).unwrap_or_default()
                    ),
                ),
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// wget

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wget {
    Other,
    Reads,
    Writes,
    /// `-O FILE`: every download goes to it.
    Document,
    /// `-P DIR`.
    Prefix,
    /// `-i FILE`: the URLs to get (a file read; what they download is not known).
    Input,
    /// `--warc-file NAME`: writes `NAME.warc.gz`.
    Warc,
    /// `--config FILE`, `-e COMMAND`, `--use-askpass COMMAND`: settings or programs that
    /// are not seen.
    Unseen,
    /// Recursive or server-named downloads: the files they write are not known.
    Names,
    /// `--default-page NAME`.
    DefaultPage,
    /// `--pinnedpubkey`: a file unless `sha256//…`.
    Pinned,
}

const WGET_TABLE: &[Spec<Wget>] = {
    use Wget::*;
    &[
        ("version", Some('V'), false, Other),
        ("help", Some('h'), false, Other),
        ("background", Some('b'), false, Other),
        ("execute", Some('e'), true, Unseen),
        ("output-file", Some('o'), true, Writes),
        ("append-output", Some('a'), true, Writes),
        ("debug", Some('d'), false, Other),
        ("quiet", Some('q'), false, Other),
        ("verbose", Some('v'), false, Other),
        // `-nv`, `-nc`, `-nd`, `-nH`, `-np`: `-n` and letters.
        ("no", Some('n'), true, Other),
        ("report-speed", None, true, Other),
        ("input-file", Some('i'), true, Input),
        ("input-metalink", None, true, Input),
        ("force-html", Some('F'), false, Other),
        ("base", Some('B'), true, Other),
        ("config", None, true, Unseen),
        ("rejected-log", None, true, Writes),
        ("tries", Some('t'), true, Other),
        ("retry-connrefused", None, false, Other),
        ("retry-on-host-error", None, false, Other),
        ("retry-on-http-error", None, true, Other),
        ("output-document", Some('O'), true, Document),
        ("clobber", None, false, Other),
        ("netrc", None, false, Other),
        ("continue", Some('c'), false, Other),
        ("start-pos", None, true, Other),
        ("progress", None, true, Other),
        ("show-progress", None, false, Other),
        ("timestamping", Some('N'), false, Other),
        ("if-modified-since", None, false, Other),
        ("use-server-timestamps", None, false, Other),
        ("server-response", Some('S'), false, Other),
        ("spider", None, false, Other),
        ("timeout", Some('T'), true, Other),
        ("dns-timeout", None, true, Other),
        ("connect-timeout", None, true, Other),
        ("read-timeout", None, true, Other),
        ("wait", Some('w'), true, Other),
        ("waitretry", None, true, Other),
        ("random-wait", None, false, Other),
        ("proxy", None, false, Other),
        ("quota", Some('Q'), true, Other),
        ("bind-address", None, true, Other),
        ("bind-dns-address", None, true, Other),
        ("dns-servers", None, true, Other),
        ("limit-rate", None, true, Other),
        ("dns-cache", None, false, Other),
        ("restrict-file-names", None, true, Other),
        ("ignore-case", None, false, Other),
        ("inet4-only", Some('4'), false, Other),
        ("inet6-only", Some('6'), false, Other),
        ("prefer-family", None, true, Other),
        ("user", None, true, Other),
        ("password", None, true, Other),
        ("ask-password", None, false, Other),
        ("use-askpass", None, true, Unseen),
        ("iri", None, false, Other),
        ("local-encoding", None, true, Other),
        ("remote-encoding", None, true, Other),
        ("unlink", None, false, Other),
        ("xattr", None, false, Other),
        ("directories", None, false, Other),
        ("force-directories", Some('x'), false, Names),
        ("host-directories", None, false, Other),
        ("protocol-directories", None, false, Names),
        ("directory-prefix", Some('P'), true, Prefix),
        ("cut-dirs", None, true, Other),
        ("http-user", None, true, Other),
        ("http-password", None, true, Other),
        ("cache", None, false, Other),
        ("default-page", None, true, DefaultPage),
        ("adjust-extension", Some('E'), false, Names),
        ("ignore-length", None, false, Other),
        ("header", None, true, Other),
        ("compression", None, true, Other),
        ("max-redirect", None, true, Other),
        ("proxy-user", None, true, Other),
        ("proxy-password", None, true, Other),
        ("referer", None, true, Other),
        ("save-headers", None, false, Other),
        ("user-agent", Some('U'), true, Other),
        ("http-keep-alive", None, false, Other),
        ("cookies", None, false, Other),
        ("load-cookies", None, true, Reads),
        ("save-cookies", None, true, Writes),
        ("keep-session-cookies", None, false, Other),
        ("post-data", None, true, Other),
        ("post-file", None, true, Reads),
        ("method", None, true, Other),
        ("body-data", None, true, Other),
        ("body-file", None, true, Reads),
        ("content-disposition", None, false, Names),
        ("content-on-error", None, false, Other),
        ("auth-no-challenge", None, false, Other),
        ("secure-protocol", None, true, Other),
        ("https-only", None, false, Other),
        ("check-certificate", None, false, Other),
        ("certificate", None, true, Reads),
        ("certificate-type", None, true, Other),
        ("private-key", None, true, Reads),
        ("private-key-type", None, true, Other),
        ("ca-certificate", None, true, Reads),
        ("ca-directory", None, true, Reads),
        ("crl-file", None, true, Reads),
        ("pinnedpubkey", None, true, Pinned),
        ("random-file", None, true, Reads),
        ("egd-file", None, true, Reads),
        ("ciphers", None, true, Other),
        ("hsts", None, false, Other),
        ("hsts-file", None, true, Writes),
        ("ftp-user", None, true, Other),
        ("ftp-password", None, true, Other),
        ("remove-listing", None, false, Other),
        ("glob", None, false, Other),
        ("passive-ftp", None, false, Other),
        ("preserve-permissions", None, false, Other),
        ("retr-symlinks", None, false, Other),
        ("ftps-implicit", None, false, Other),
        ("ftps-resume-ssl", None, false, Other),
        ("ftps-clear-data-connection", None, false, Other),
        ("ftps-fallback-to-ftp", None, false, Other),
        ("warc-file", None, true, Warc),
        ("warc-header", None, true, Other),
        ("warc-max-size", None, true, Other),
        ("warc-cdx", None, false, Other),
        ("warc-dedup", None, true, Reads),
        ("warc-compression", None, false, Other),
        ("warc-digests", None, false, Other),
        ("warc-keep-log", None, false, Other),
        ("warc-tempdir", None, true, Writes),
        ("recursive", Some('r'), false, Names),
        ("level", Some('l'), true, Other),
        ("delete-after", None, false, Other),
        ("convert-links", Some('k'), false, Other),
        ("convert-file-only", None, false, Other),
        ("backups", None, true, Other),
        ("backup-converted", Some('K'), false, Other),
        ("mirror", Some('m'), false, Names),
        ("page-requisites", Some('p'), false, Names),
        ("strict-comments", None, false, Other),
        ("accept", Some('A'), true, Other),
        ("reject", Some('R'), true, Other),
        ("accept-regex", None, true, Other),
        ("reject-regex", None, true, Other),
        ("regex-type", None, true, Other),
        ("domains", Some('D'), true, Other),
        ("exclude-domains", None, true, Other),
        ("follow-ftp", None, false, Other),
        ("follow-tags", None, true, Other),
        ("ignore-tags", None, true, Other),
        ("span-hosts", Some('H'), false, Other),
        ("relative", Some('L'), false, Other),
        ("include-directories", Some('I'), true, Other),
        ("trust-server-names", None, false, Names),
        ("exclude-directories", Some('X'), true, Other),
        ("parent", None, false, Other),
    ]
};

const WGET: Syntax<Wget> = Syntax {
    table: WGET_TABLE,
    long_equals: true,
    old_style: false,
};

fn wget(words: &[Word]) -> FileUses {
    let parsed = parse(words, &WGET);
    let mut out = FileUses::new();
    let mut document: Option<Word> = None;
    let mut prefix: Option<Word> = None;
    let mut default_page = "index.html".to_owned();
    let mut names_unknown: Option<String> = None;
    let mut urls: Vec<Word> = Vec::new();
    for item in parsed.items {
        match item {
            Item::Unknown(what) => push_unknown(&mut out, format!("what wget does with {what}")),
            Item::Operand(w) => urls.push(w),
            Item::Opt(Wget::Names, _) => {
                names_unknown.get_or_insert_with(|| "a recursive or server-named download".into());
            }
            Item::Opt(_, None) => {}
            Item::Opt(kind, Some(w)) => {
                let Ok(v) = value_of(&w) else {
                    if kind != Wget::Other {
                        push_unknown(&mut out, format!("the computed value {}", w.raw));
                    }
                    continue;
                };
                match kind {
                    Wget::Other | Wget::Names => {}
                    Wget::Reads => push_file(&mut out, &w, PathUse::Read),
                    Wget::Writes => push_file(&mut out, &w, PathUse::Write),
                    Wget::Pinned => {
                        if !v.starts_with("sha256//") {
                            push_file(&mut out, &w, PathUse::Read);
                        }
                    }
                    Wget::Document => document = Some(w.clone()),
                    Wget::Prefix => prefix = Some(w.clone()),
                    Wget::DefaultPage => default_page = v.to_owned(),
                    Wget::Warc => out.push((path(format!("{v}.warc.gz"), &w), PathUse::Write)),
                    Wget::Input => {
                        // A URL is fetched, a file read; the URLs in it are not seen.
                        if !v.contains("://") {
                            push_file(&mut out, &w, PathUse::Read);
                        }
                        names_unknown
                            .get_or_insert_with(|| format!("the downloads listed in {}", w.raw));
                    }
                    Wget::Unseen => push_unknown(&mut out, format!("what {} makes wget do", w.raw)),
                }
            }
        }
    }
    if let Some(doc) = &document {
        // Every download goes to it (a recursive one too).
        push_file(&mut out, doc, PathUse::Write);
        return out;
    }
    let dir = match &prefix {
        Some(p) => match value_of(p) {
            Ok(d) => Some(d),
            Err(p) => {
                push_unknown(
                    &mut out,
                    format!("what lands in the computed directory {}", p.raw),
                );
                return out;
            }
        },
        None => None,
    };
    if let Some(what) = names_unknown {
        push_unknown(
            &mut out,
            format!(
                "the files {what} writes in {}",
                dir.unwrap_or("the working directory")
            ),
        );
        return out;
    }
    for url in &urls {
        let name = url.value.as_deref().map(|v| {
            // wget keeps the query in the name (`page?x=1`).
            let no_fragment = v.split('#').next().unwrap_or(v);
            let (path_part, query) = match no_fragment.split_once('?') {
                Some((p, q)) => (p, Some(q)),
                None => (no_fragment, None),
            };
            let name = url_file_name(path_part).unwrap_or(&default_page);
            match query {
                Some(q) => format!("{name}?{q}"),
                None => name.to_owned(),
            }
        });
        match name {
            Some(name) => out.push((path(under(dir, &name), url), PathUse::Write)),
            None => push_unknown(
                &mut out,
                format!("the file the download of {} is saved as", url.raw),
            ),
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// tar

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TarOpt {
    Other,
    /// `-c`, `-r`, `-u`: archives its operands.
    Create,
    /// `-A`: appends the archives it is given.
    Catenate,
    /// `--delete`: changes the archive only.
    Delete,
    /// `-x`.
    Extract,
    /// `-t`, `-d`: reads the archive.
    List,
    /// `-f ARCHIVE`.
    File,
    /// `-C DIR`.
    Directory,
    /// `-T FILE`: the names to archive or extract are in it.
    FilesFrom,
    /// `--add-file FILE`: an operand.
    AddFile,
    Reads,
    Writes,
    /// `-O`: extracts to standard output.
    ToStdout,
    /// `-P`: members keep `/` and `..`.
    AbsoluteNames,
    /// `--one-top-level[=DIR]`.
    OneTopLevel,
    /// `-I PROG`, `--to-command`, `-F SCRIPT`, `--rsh-command`, `--checkpoint-action`: a
    /// program tar runs.
    Runs,
    /// `--checkpoint-action=ACTION`: runs a command when ACTION is `exec=…`.
    CheckpointAction,
    /// `-h`.
    Dereference,
    /// `--no-recursion`.
    NoRecursion,
    /// `--remove-files`.
    RemoveFiles,
}

const TAR_TABLE: &[Spec<TarOpt>] = {
    use TarOpt::*;
    &[
        ("catenate", Some('A'), false, Catenate),
        ("concatenate", None, false, Catenate),
        ("create", Some('c'), false, Create),
        ("delete", None, false, Delete),
        ("diff", Some('d'), false, List),
        ("compare", None, false, List),
        ("append", Some('r'), false, Create),
        ("test-label", None, false, List),
        ("list", Some('t'), false, List),
        ("update", Some('u'), false, Create),
        ("extract", Some('x'), false, Extract),
        ("get", None, false, Extract),
        ("check-device", None, false, Other),
        ("listed-incremental", Some('g'), true, Writes),
        ("incremental", Some('G'), false, Other),
        ("hole-detection", None, true, Other),
        ("ignore-failed-read", None, false, Other),
        ("level", None, true, Other),
        ("seek", Some('n'), false, Other),
        ("occurrence", None, false, Other),
        ("sparse-version", None, true, Other),
        ("sparse", Some('S'), false, Other),
        ("add-file", None, true, AddFile),
        ("directory", Some('C'), true, Directory),
        ("exclude", None, true, Other),
        ("exclude-backups", None, false, Other),
        ("exclude-caches", None, false, Other),
        ("exclude-caches-all", None, false, Other),
        ("exclude-caches-under", None, false, Other),
        ("exclude-ignore", None, true, Other),
        ("exclude-ignore-recursive", None, true, Other),
        ("exclude-tag", None, true, Other),
        ("exclude-tag-all", None, true, Other),
        ("exclude-tag-under", None, true, Other),
        ("exclude-vcs", None, false, Other),
        ("exclude-vcs-ignores", None, false, Other),
        ("null", None, false, Other),
        ("recursion", None, false, Other),
        ("no-recursion", None, false, NoRecursion),
        ("unquote", None, false, Other),
        ("verbatim-files-from", None, false, Other),
        ("files-from", Some('T'), true, FilesFrom),
        ("exclude-from", Some('X'), true, Reads),
        ("anchored", None, false, Other),
        ("ignore-case", None, false, Other),
        ("wildcards", None, false, Other),
        ("wildcards-match-slash", None, false, Other),
        ("keep-directory-symlink", None, false, Other),
        ("keep-newer-files", None, false, Other),
        ("keep-old-files", Some('k'), false, Other),
        ("overwrite-dir", None, false, Other),
        ("one-top-level", None, false, OneTopLevel),
        ("overwrite", None, false, Other),
        ("recursive-unlink", None, false, Other),
        ("remove-files", None, false, RemoveFiles),
        ("skip-old-files", None, false, Other),
        ("unlink-first", Some('U'), false, Other),
        ("verify", Some('W'), false, Other),
        ("ignore-command-error", None, false, Other),
        ("to-stdout", Some('O'), false, ToStdout),
        ("to-command", None, true, Runs),
        ("atime-preserve", None, false, Other),
        ("clamp-mtime", None, false, Other),
        ("delay-directory-restore", None, false, Other),
        ("group", None, true, Other),
        ("group-map", None, true, Reads),
        ("mode", None, true, Other),
        ("mtime", None, true, Other),
        ("touch", Some('m'), false, Other),
        ("same-owner", None, false, Other),
        ("same-permissions", None, false, Other),
        ("preserve-permissions", Some('p'), false, Other),
        ("numeric-owner", None, false, Other),
        ("owner", None, true, Other),
        ("owner-map", None, true, Reads),
        ("sort", None, true, Other),
        ("preserve-order", Some('s'), false, Other),
        ("same-order", None, false, Other),
        ("acls", None, false, Other),
        ("selinux", None, false, Other),
        ("xattrs", None, false, Other),
        ("xattrs-exclude", None, true, Other),
        ("xattrs-include", None, true, Other),
        ("force-local", None, false, Other),
        ("file", Some('f'), true, File),
        ("info-script", Some('F'), true, Runs),
        ("new-volume-script", None, true, Runs),
        ("tape-length", Some('L'), true, Other),
        ("multi-volume", Some('M'), false, Other),
        ("rmt-command", None, true, Runs),
        ("rsh-command", None, true, Runs),
        ("volno-file", None, true, Writes),
        ("blocking-factor", Some('b'), true, Other),
        ("read-full-records", Some('B'), false, Other),
        ("ignore-zeros", Some('i'), false, Other),
        ("record-size", None, true, Other),
        ("format", Some('H'), true, Other),
        ("old-archive", None, false, Other),
        ("portability", None, false, Other),
        ("pax-option", None, true, Other),
        ("posix", None, false, Other),
        ("label", Some('V'), true, Other),
        ("auto-compress", Some('a'), false, Other),
        ("use-compress-program", Some('I'), true, Runs),
        ("bzip2", Some('j'), false, Other),
        ("xz", Some('J'), false, Other),
        ("lzip", None, false, Other),
        ("lzma", None, false, Other),
        ("lzop", None, false, Other),
        ("zstd", None, false, Other),
        ("gzip", Some('z'), false, Other),
        ("gunzip", None, false, Other),
        ("ungzip", None, false, Other),
        ("compress", Some('Z'), false, Other),
        ("uncompress", None, false, Other),
        ("backup", None, false, Other),
        ("hard-dereference", None, false, Other),
        ("dereference", Some('h'), false, Dereference),
        ("starting-file", Some('K'), true, Other),
        ("newer-mtime", None, true, Other),
        ("newer", Some('N'), true, Other),
        ("after-date", None, true, Other),
        ("one-file-system", None, false, Other),
        ("absolute-names", Some('P'), false, AbsoluteNames),
        ("suffix", None, true, Other),
        ("strip-components", None, true, Other),
        ("transform", None, true, Other),
        ("xform", Some('s'), true, Other),
        ("checkpoint", None, false, Other),
        ("checkpoint-action", None, true, CheckpointAction),
        ("full-time", None, false, Other),
        ("index-file", None, true, Writes),
        ("check-links", Some('l'), false, Other),
        ("no-quote-chars", None, true, Other),
        ("quote-chars", None, true, Other),
        ("quoting-style", None, true, Other),
        ("block-number", Some('R'), false, Other),
        ("show-defaults", None, false, Other),
        ("show-omitted-dirs", None, false, Other),
        ("show-snapshot-field-ranges", None, false, Other),
        ("show-transformed-names", None, false, Other),
        ("show-stored-names", None, false, Other),
        ("totals", None, false, Other),
        ("utc", None, false, Other),
        ("verbose", Some('v'), false, Other),
        ("warning", None, true, Other),
        ("interactive", Some('w'), false, Other),
        ("confirmation", None, false, Other),
        ("", Some('o'), false, Other),
        ("help", Some('?'), false, Other),
        ("restrict", None, false, Other),
        ("usage", None, false, Other),
        ("version", None, false, Other),
    ]
};

const TAR: Syntax<TarOpt> = Syntax {
    table: TAR_TABLE,
    long_equals: true,
    old_style: true,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TarMode {
    Create,
    Catenate,
    Delete,
    Extract,
    List,
}

/// The operation `tar` performs (the last one given; tar refuses two).
fn tar_mode(parsed: &Parsed<TarOpt>) -> Option<TarMode> {
    parsed.items.iter().rev().find_map(|i| match i {
        Item::Opt(TarOpt::Create, _) => Some(TarMode::Create),
        Item::Opt(TarOpt::Catenate, _) => Some(TarMode::Catenate),
        Item::Opt(TarOpt::Delete, _) => Some(TarMode::Delete),
        Item::Opt(TarOpt::Extract, _) => Some(TarMode::Extract),
        Item::Opt(TarOpt::List, _) => Some(TarMode::List),
        _ => None,
    })
}

/// A program name tar may run as a compressor without more words (`-I zstd`, `-I
/// 'zstd -19'` is not one).
fn is_plain_program(v: &str) -> bool {
    !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

fn tar(words: &[Word]) -> FileUses {
    let parsed = parse(words, &TAR);
    let mode = tar_mode(&parsed);
    let mut out = FileUses::new();
    // The directory operands are relative to (`-C` is relative to the one before it).
    let mut dir: Option<String> = None;
    let mut dirs_written: Vec<Word> = Vec::new();
    let mut members: Vec<(Option<String>, Word)> = Vec::new();
    let mut to_stdout = false;
    let mut top_level = false;
    let mut absolute = false;
    let removes = tar_removes_trees(words);
    let operand_use = if removes {
        PathUse::Write
    } else {
        PathUse::Read
    };
    let archive_use = match mode {
        Some(TarMode::Create | TarMode::Catenate | TarMode::Delete) => PathUse::Write,
        _ => PathUse::Read,
    };
    for item in parsed.items {
        match item {
            Item::Unknown(what) => push_unknown(&mut out, format!("what tar does with {what}")),
            Item::Operand(w) => members.push((dir.clone(), w)),
            Item::Opt(TarOpt::ToStdout, _) => to_stdout = true,
            Item::Opt(TarOpt::OneTopLevel, _) => top_level = true,
            Item::Opt(TarOpt::AbsoluteNames, _) => absolute = true,
            Item::Opt(_, None) => {}
            Item::Opt(kind, Some(w)) => {
                let Ok(v) = value_of(&w) else {
                    if kind != TarOpt::Other {
                        push_unknown(&mut out, format!("the computed value {}", w.raw));
                    }
                    continue;
                };
                match kind {
                    // Opened where tar starts, whatever `-C` comes before.
                    TarOpt::File => push_file(&mut out, &w, archive_use),
                    TarOpt::Directory => {
                        let next = under(dir.as_deref(), v);
                        dirs_written.push(path(next.clone(), &w));
                        dir = Some(next);
                    }
                    TarOpt::FilesFrom => {
                        push_file(&mut out, &w, PathUse::Read);
                        let use_ = if mode == Some(TarMode::Extract) {
                            PathUse::Write
                        } else {
                            operand_use
                        };
                        out.push((unknown(format!("the files listed in {}", w.raw)), use_));
                    }
                    TarOpt::AddFile => members.push((dir.clone(), w.clone())),
                    TarOpt::Reads => push_file(&mut out, &w, PathUse::Read),
                    TarOpt::Writes => push_file(&mut out, &w, PathUse::Write),
                    TarOpt::Runs if !(is_plain_program(v) && w.plain) => {
                        push_unknown(
                            &mut out,
                            format!("what the program {} tar runs does", w.raw),
                        );
                    }
                    TarOpt::CheckpointAction if v.starts_with("exec") => {
                        push_unknown(&mut out, format!("what the command in {} does", w.raw));
                    }
                    _ => {}
                }
            }
        }
    }
    match mode {
        Some(TarMode::Create | TarMode::Catenate) => {
            for (dir, w) in &members {
                match value_of(w) {
                    Ok(v) => out.push((path(under(dir.as_deref(), v), w), operand_use)),
                    Err(w) => out.push((w.clone(), operand_use)),
                }
            }
        }
        Some(TarMode::Extract) if !to_stdout => {
            if absolute {
                push_unknown(
                    &mut out,
                    "the members of the archive, which keep their absolute names".into(),
                );
            }
            if dirs_written.is_empty() {
                dirs_written.push(literal("."));
            }
            if top_level {
                push_unknown(
                    &mut out,
                    "the directory `--one-top-level` extracts into".into(),
                );
            }
            for d in &dirs_written {
                out.push((d.clone(), PathUse::Write));
                for (_, member) in &members {
                    match (value_of(d), value_of(member)) {
                        (Ok(d), Ok(m)) => {
                            let d = (d != ".").then_some(d);
                            let at = under(d, m.trim_start_matches('/'));
                            out.push((path(at, member), PathUse::Write));
                        }
                        (_, Err(m)) => out.push((m.clone(), PathUse::Write)),
                        (Err(_), _) => {}
                    }
                }
            }
        }
        _ => {}
    }
    out
}

// ---------------------------------------------------------------------------------------
// patch

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Patch {
    Other,
    /// `-i PATCHFILE`.
    Input,
    /// `-o FILE`, `-r FILE`.
    Writes,
    /// `-d DIR`: patch works there, before anything else.
    Directory,
    /// `--dry-run`.
    DryRun,
}

const PATCH_TABLE: &[Spec<Patch>] = {
    use Patch::*;
    &[
        ("strip", Some('p'), true, Other),
        ("fuzz", Some('F'), true, Other),
        ("ignore-whitespace", Some('l'), false, Other),
        ("context", Some('c'), false, Other),
        ("ed", Some('e'), false, Other),
        ("normal", Some('n'), false, Other),
        ("unified", Some('u'), false, Other),
        ("forward", Some('N'), false, Other),
        ("reverse", Some('R'), false, Other),
        ("input", Some('i'), true, Input),
        ("output", Some('o'), true, Writes),
        ("reject-file", Some('r'), true, Writes),
        ("ifdef", Some('D'), true, Other),
        ("merge", None, false, Other),
        ("remove-empty-files", Some('E'), false, Other),
        ("set-utc", Some('Z'), false, Other),
        ("set-time", Some('T'), false, Other),
        ("quoting-style", None, true, Other),
        ("backup", Some('b'), false, Other),
        ("backup-if-mismatch", None, false, Other),
        ("version-control", Some('V'), true, Other),
        ("prefix", Some('B'), true, Other),
        ("basename-prefix", Some('Y'), true, Other),
        ("suffix", Some('z'), true, Other),
        ("get", Some('g'), true, Other),
        ("batch", Some('t'), false, Other),
        ("force", Some('f'), false, Other),
        ("quiet", Some('s'), false, Other),
        ("silent", None, false, Other),
        ("verbose", None, false, Other),
        ("dry-run", None, false, DryRun),
        ("posix", None, false, Other),
        ("directory", Some('d'), true, Directory),
        ("reject-format", None, true, Other),
        ("binary", None, false, Other),
        ("read-only", None, true, Other),
        ("follow-symlinks", None, false, Other),
        ("version", Some('v'), false, Other),
        ("help", None, false, Other),
    ]
};

const PATCH: Syntax<Patch> = Syntax {
    table: PATCH_TABLE,
    long_equals: true,
    old_style: false,
};

fn patch(words: &[Word]) -> FileUses {
    let parsed = parse(words, &PATCH);
    let mut out = FileUses::new();
    // `-d DIR` comes first, whatever its place: every other path is relative to it.
    let dir = parsed.items.iter().rev().find_map(|i| match i {
        Item::Opt(Patch::Directory, Some(w)) => Some(w.clone()),
        _ => None,
    });
    let dir_value = match &dir {
        Some(d) => match value_of(d) {
            Ok(v) => Some(v.to_owned()),
            Err(d) => {
                push_unknown(
                    &mut out,
                    format!("what patch changes in the computed directory {}", d.raw),
                );
                return out;
            }
        },
        None => None,
    };
    let dry_run = parsed
        .items
        .iter()
        .any(|i| matches!(i, Item::Opt(Patch::DryRun, _)));
    let written = if dry_run {
        PathUse::Read
    } else {
        PathUse::Write
    };
    let at = |w: &Word| match value_of(w) {
        Ok(v) if !is_stdio(v) => Some(path(under(dir_value.as_deref(), v), w)),
        Ok(_) => None,
        Err(w) => Some(w.clone()),
    };
    let mut operands = Vec::new();
    for item in &parsed.items {
        match item {
            Item::Unknown(what) => push_unknown(&mut out, format!("what patch does with {what}")),
            Item::Operand(w) => operands.push(w.clone()),
            Item::Opt(Patch::Input, Some(w)) => out.extend(at(w).map(|p| (p, PathUse::Read))),
            Item::Opt(Patch::Writes, Some(w)) if !dry_run => {
                out.extend(at(w).map(|p| (p, PathUse::Write)));
            }
            _ => {}
        }
    }
    let mut operands = operands.iter();
    match operands.next() {
        Some(file) => out.extend(at(file).map(|p| (p, written))),
        // The files the patch names, in its directory: what the patch holds is not read;
        // the directory is checked.
        None => out.push((literal(dir_value.as_deref().unwrap_or(".")), written)),
    }
    if let Some(patchfile) = operands.next() {
        out.extend(at(patchfile).map(|p| (p, PathUse::Read)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bash::parse::analyze;

    /// The files of `command` as `R path` / `W path` (`?` for what cannot be worked out).
    fn uses(command: &str) -> Vec<String> {
        let analysis = analyze(command);
        let words = &analysis.commands[0].words;
        let name = words[0].value.clone().unwrap_or_default();
        file_uses(&name, words)
            .unwrap_or_default()
            .into_iter()
            .map(|(w, u)| {
                let u = if u == PathUse::Read { 'R' } else { 'W' };
                format!("{u} {}", w.value.as_deref().unwrap_or("?"))
            })
            .collect()
    }

    #[track_caller]
    fn check(command: &str, expected: &[&str]) {
        assert_eq!(uses(command), expected, "{command}");
    }

    #[test]
    fn curl_outputs_and_uploads() {
        check("curl -sSL https://example.com/x.json", &[]);
        check(
            "curl -o .git/hooks/pre-commit https://x",
            &["W .git/hooks/pre-commit"],
        );
        check("curl -so.bashrc https://x", &["W .bashrc"]);
        check("curl --output out https://x", &["W out"]);
        check("curl --outp out https://x", &["W ?"]);
        check("curl --output-d d -o f https://x", &["W d/f"]);
        check("curl -o f --output-dir d https://x", &["W d/f"]);
        check("curl -o - https://x", &[]);
        check("curl -O https://x/a/pre-commit?v=1", &["W pre-commit"]);
        check(
            "curl --output-dir .git/hooks -O https://x/h",
            &["W .git/hooks/h"],
        );
        check("curl -OJ https://x/a", &["W ?"]);
        check(
            "curl --remote-name-all https://x/a https://y/b",
            &["W a", "W b"],
        );
        check("curl -O 'https://x/[1-3].txt'", &["W ?"]);
        check("curl -gO 'https://x/[1].txt'", &["W [1].txt"]);
        check("curl -o 'f_#1' 'https://x/{a,b}'", &["W ?"]);
        check(
            "curl -D h.txt -c jar --trace t https://x",
            &["W h.txt", "W jar", "W t"],
        );
        check("curl -D - --stderr % https://x", &[]);
        check("curl -d @.env https://x", &["R .env"]);
        check("curl -d @- https://x", &[]);
        check("curl -d a=b --data-raw @x https://x", &[]);
        check(
            "curl --data-urlencode name@.env --data-urlencode a=@x https://x",
            &["R .env"],
        );
        check("curl --json @body.json https://x", &["R body.json"]);
        check(
            "curl -H @headers.txt -H 'A: b' https://x",
            &["R headers.txt"],
        );
        check(
            "curl -F 'f=@.env;type=text/plain' -F 'g=<a.txt' -F 'h=@a,b' https://x",
            &["R .env", "R a.txt", "R a", "R b"],
        );
        check("curl -F 'f=x;headers=@h.txt' https://x", &["R h.txt"]);
        check("curl --form-string 'f=@.env' https://x", &[]);
        check("curl -b cookies.txt -b 'a=b' https://x", &["R cookies.txt"]);
        check(
            "curl -E cert.pem:secret --key key.pem https://x",
            &["R cert.pem", "R key.pem"],
        );
        check(
            "curl --pinnedpubkey sha256//abc --cacert ca.pem https://x",
            &["R ca.pem"],
        );
        check("curl -T .env https://x", &["R .env"]);
        check("curl -T '{a,b}' https://x", &["R ?"]);
        check("curl -K cfg https://x", &["R cfg", "W ?"]);
        check("curl -w '%{http_code}' https://x", &[]);
        check("curl -w '%output{.bashrc}' https://x", &["W ?"]);
        check("curl -w @fmt https://x", &["R fmt", "W ?"]);
        check(
            "curl --variable 'v@.env' --expand-url 'https://x/{{v}}'",
            &["R .env"],
        );
        check(
            "curl --expand-output '{{HOME}}/.bashrc' https://x",
            &["W ?"],
        );
    }

    #[test]
    fn curl_urls_and_computed_words() {
        check("curl file:///etc/passwd", &["R /etc/passwd"]);
        check("curl FILE://localhost/etc/passwd?x", &["R /etc/passwd"]);
        check("curl file://otherhost/etc/passwd", &["R ?"]);
        check("curl --url file:///a/.env", &["R /a/.env"]);
        check("curl -- -o", &[]);
        check("curl \"https://$HOST/x\"", &[]);
        check("curl \"$URL\"", &["W ?"]);
        check("curl $URL", &["W ?"]);
        check("curl \"file://$P\"", &["R ?"]);
        check("curl -o \"$OUT\" https://x", &["W ?"]);
        check("curl --made-up-option x https://x", &["W ?"]);
        check("curl --no-progress-meter --no-location https://x", &[]);
    }

    #[test]
    fn wget_downloads() {
        check("wget https://x/a.tgz", &["W a.tgz"]);
        check("wget https://x/", &["W index.html"]);
        check("wget 'https://x/p?a=1'", &["W p?a=1"]);
        check("wget -P .git/hooks https://x/h", &["W .git/hooks/h"]);
        check("wget --directory-prefix=d https://x/h", &["W d/h"]);
        check("wget -O .bashrc https://x/h", &["W .bashrc"]);
        check("wget -qO- https://x/h", &[]);
        check("wget -nv -o log https://x/h", &["W log", "W h"]);
        check("wget --post-file=.env https://x/h", &["R .env", "W h"]);
        check(
            "wget --body-file .env --method=PUT https://x/h",
            &["R .env", "W h"],
        );
        check("wget -r https://x/", &["W ?"]);
        check("wget -i urls.txt", &["R urls.txt", "W ?"]);
        check("wget -e robots=off https://x/h", &["W ?", "W h"]);
        check(
            "wget --no-check-certificate --no-madeup https://x/h",
            &["W h"],
        );
    }

    #[test]
    fn tar_archives_and_extracts() {
        check("tar xzf a.tgz", &["R a.tgz", "W ."]);
        check("tar -xzf a.tgz -C .git/hooks", &["R a.tgz", "W .git/hooks"]);
        check(
            "tar --extract --file=a.tar --directory d sub/x",
            &["R a.tar", "W d", "W d/sub/x"],
        );
        check("tar -xOf a.tar", &["R a.tar"]);
        check("tar -xPf a.tar", &["R a.tar", "W ?", "W ."]);
        check(
            "tar czf out.tgz src .env",
            &["W out.tgz", "R src", "R .env"],
        );
        check(
            "tar -C src -czf out.tgz main.rs",
            &["W out.tgz", "R src/main.rs"],
        );
        check("tar cf - . | cat", &["R ."]);
        check(
            "tar -czf out.tgz --remove-files src",
            &["W out.tgz", "W src"],
        );
        check(
            "tar -cf out.tar -T list.txt",
            &["W out.tar", "R list.txt", "R ?"],
        );
        check("tar -tvf a.tar", &["R a.tar"]);
        check("tar -I zstd -xf a.tar.zst", &["R a.tar.zst", "W ."]);
        check(
            "tar -I 'zstd -d' -xf a.tar.zst",
            &["W ?", "R a.tar.zst", "W ."],
        );
        check(
            "tar xf a.tar --to-command='sh -c x'",
            &["R a.tar", "W ?", "W ."],
        );
        check(
            "tar xf a.tar --checkpoint-action=exec=x",
            &["R a.tar", "W ?", "W ."],
        );
        check(
            "tar -cvf out.tar -g snap src",
            &["W out.tar", "W snap", "R src"],
        );
    }

    #[test]
    fn tar_trees() {
        let words = |c: &str| analyze(c).commands[0].words.clone();
        assert!(tar_reads_trees(&words("tar czf o.tgz .")).is_some());
        assert!(tar_reads_trees(&words("tar xzf o.tgz")).is_none());
        assert!(tar_reads_trees(&words("tar -chf o.tar .")).is_some_and(|t| t.follow_links));
        assert!(tar_removes_trees(&words(
            "tar -czf o.tgz --remove-files src"
        )));
        assert!(!tar_removes_trees(&words("tar -czf o.tgz src")));
    }

    #[test]
    fn patch_files() {
        check("patch -p1 -i fix.diff", &["R fix.diff", "W ."]);
        check("patch -p1 < fix.diff", &["W ."]);
        check("patch .bashrc fix.diff", &["W .bashrc", "R fix.diff"]);
        check(
            "patch -d sub -p0 -i ../fix.diff",
            &["R sub/../fix.diff", "W sub"],
        );
        check("patch -d .git/hooks -p1", &["W .git/hooks"]);
        check(
            "patch -o out.rs src/a.rs fix.diff",
            &["W out.rs", "W src/a.rs", "R fix.diff"],
        );
        check("patch --dry-run -p1 -i fix.diff", &["R fix.diff", "R ."]);
        check("patch -d \"$D\" -p1", &["W ?"]);
    }
}
