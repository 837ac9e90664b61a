//! How deep an HTML page nests, bounded before it is parsed: WebFetch's guard against pages
//! that make the HTML parser quadratic.
//!
//! html5ever looks through the open elements at many start tags (is a `<p>` open, to be
//! closed? is there a list item in scope?), so a page of 200,000 nested `<div>`s takes
//! minutes to parse, on a thread that cannot be stopped. [`cap_nesting`] reads the page's
//! tags once, keeping a stack of the elements the parser would have open, and leaves out
//! the start tags that would open more than a limit at once (and their end tags). It reads
//! tags as the HTML tokenizer does where that matters here: comments (`<!-->` included),
//! attribute values quoted only after `=`, raw text elements (a `<div` in a script is no
//! tag), `/>` closing only void and foreign (SVG, MathML) elements, and end tags that close
//! what is open above their element. Where it misjudges the parser, only markup past the
//! limit goes, never text; an ordinary page comes back as it was.

use std::borrow::Cow;
use std::collections::HashMap;

/// Elements that have no content and no end tag.
pub(crate) const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr", "param", "keygen", "basefont", "bgsound", "frame", "image",
];

/// Elements whose content is text up to their end tag. They are never left out (their
/// content would become the page's text).
const RAW_TEXT: &[&str] = &[
    "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript",
];

/// Elements a new one of the same group closes, unless one of the boundary elements is open
/// above it: a new `<li>` closes the open `<li>` of its list, not one of an outer list.
const IMPLIED_END: &[(&[&str], &[&str])] = &[
    (&["li"], &["ul", "ol", "menu"]),
    (&["dt", "dd"], &["dl"]),
    (&["td", "th"], &["tr", "table"]),
    (&["tr"], &["table", "thead", "tbody", "tfoot"]),
    (&["thead", "tbody", "tfoot"], &["table"]),
    (&["option"], &["select", "datalist", "optgroup"]),
    (&["optgroup"], &["select"]),
    (&["rb", "rt", "rtc", "rp"], &["ruby"]),
];

/// Start tags that close an open `<p>` (unless a button-scope boundary is open above it).
const CLOSES_P: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "center",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hgroup",
    "hr",
    "main",
    "menu",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "ul",
    "listing",
    "plaintext",
    "xmp",
];

/// Where a `<p>`'s implied end stops looking.
const P_BOUNDARY: &[&str] = &[
    "button", "table", "td", "th", "caption", "html", "applet", "marquee", "object", "template",
    "svg", "math",
];

/// How far down the open elements an implied end is looked for (a new `<li>` closing the
/// open one): the parser looks to the list it is in, never far in a real page; past this
/// the element is taken as not open, which can only count a page deeper than it is.
const IMPLIED_END_REACH: usize = 64;

/// The elements the parser would have open, innermost last, with how many of each name
/// there are and whether each is inside SVG or MathML: every question asked of them at a
/// tag is answered in constant time, or looks down at most [`IMPLIED_END_REACH`] entries,
/// or pops what it passes. The scan is linear in the page, whatever its markup.
#[derive(Default)]
struct OpenElements {
    stack: Vec<(String, bool)>,
    counts: HashMap<String, usize>,
}

impl OpenElements {
    fn len(&self) -> usize {
        self.stack.len()
    }

    fn foreign(&self) -> bool {
        self.stack.last().is_some_and(|(_, foreign)| *foreign)
    }

    fn is_open(&self, name: &str) -> bool {
        self.counts.get(name).is_some_and(|n| *n > 0)
    }

    fn push(&mut self, name: &str) {
        let foreign = self.foreign() || name == "svg" || name == "math";
        self.stack.push((name.to_owned(), foreign));
        *self.counts.entry(name.to_owned()).or_default() += 1;
    }

    /// Closes the element at `at` and everything open above it.
    fn close_from(&mut self, at: usize) {
        for (name, _) in self.stack.drain(at..) {
            if let Some(n) = self.counts.get_mut(&name) {
                *n -= 1;
            }
        }
    }

    /// An end tag `name`: closes the innermost open `name` and what is open above it.
    fn close(&mut self, name: &str) {
        if self.is_open(name)
            && let Some(at) = self.stack.iter().rposition(|(e, _)| e == name)
        {
            self.close_from(at);
        }
    }

    /// Closes the innermost open element of `group` (and what is open above it), unless an
    /// element of `boundary` is open above it.
    fn close_implied(&mut self, group: &[&str], boundary: &[&str]) {
        if !group.iter().any(|g| self.is_open(g)) {
            return;
        }
        let low = self.stack.len().saturating_sub(IMPLIED_END_REACH);
        for at in (low..self.stack.len()).rev() {
            let element = self.stack[at].0.as_str();
            if group.contains(&element) {
                self.close_from(at);
                return;
            }
            if boundary.contains(&element) {
                return;
            }
        }
    }
}

/// `html` with the start tags that would open more than `max` elements at once left out,
/// with their end tags; borrowed when nothing is (see the [module docs](self)).
pub(crate) fn cap_nesting(html: &str, max: usize) -> Cow<'_, str> {
    let bytes = html.as_bytes();
    let mut open = OpenElements::default();
    // Start tags left out and not yet matched by an end tag, counted by name.
    let mut left_out: HashMap<String, usize> = HashMap::new();
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
            i = find_ignore_case(bytes, start + 9, b"]]>").map_or(bytes.len(), |end| end + 3);
            continue;
        }
        // `<!...>`, `<?...>` and `</` not followed by a letter are (bogus) comments to `>`.
        let bogus = matches!(after.first(), Some(b'!' | b'?'))
            || (after.first() == Some(&b'/') && !after.get(1).is_some_and(u8::is_ascii_alphabetic));
        if bogus {
            i = memchr::memchr(b'>', after).map_or(bytes.len(), |end| start + 2 + end);
            continue;
        }
        let closing = after.first() == Some(&b'/');
        let name_start = start + 1 + usize::from(closing);
        if !bytes.get(name_start).is_some_and(u8::is_ascii_alphabetic) {
            i = start + 1;
            continue;
        }
        let name_end = bytes[name_start..]
            .iter()
            .position(|b| b.is_ascii_whitespace() || matches!(b, b'/' | b'>'))
            .map_or(bytes.len(), |p| name_start + p);
        let name = html[name_start..name_end].to_ascii_lowercase();
        let (tag_end, slash) = tag_end(bytes, name_end);
        let raw = RAW_TEXT.contains(&name.as_str());
        let leave_out = if closing {
            match left_out.get_mut(&name) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    true
                }
                _ => {
                    open.close(&name);
                    false
                }
            }
        } else {
            if CLOSES_P.contains(&name.as_str()) {
                open.close_implied(&["p"], P_BOUNDARY);
            }
            if let Some((group, boundary)) =
                IMPLIED_END.iter().find(|(g, _)| g.contains(&name.as_str()))
            {
                open.close_implied(group, boundary);
            }
            let empty = VOID.contains(&name.as_str()) || (slash && open.foreign());
            if empty {
                false
            } else if open.len() >= max && !raw {
                *left_out.entry(name.clone()).or_default() += 1;
                true
            } else {
                open.push(&name);
                false
            }
        };
        if leave_out {
            let out = out.get_or_insert_with(|| String::with_capacity(html.len()));
            out.push_str(&html[copied..start]);
            copied = tag_end;
        }
        i = tag_end;
        if !closing {
            if name == "plaintext" {
                break;
            }
            if raw {
                i = raw_text_end(bytes, i, &name);
            }
        }
    }
    match out {
        None => Cow::Borrowed(html),
        Some(mut out) => {
            out.push_str(&html[copied..]);
            Cow::Owned(out)
        }
    }
}

/// Where a comment whose text starts at `from` ends (just past it): `<!-->` and `<!--->`
/// end at once, as do `-->` and `--!>`. One pass over the comment.
pub(crate) fn comment_end(bytes: &[u8], from: usize) -> usize {
    let rest = bytes.get(from..).unwrap_or_default();
    if rest.starts_with(b">") {
        return from + 1;
    }
    if rest.starts_with(b"->") {
        return from + 2;
    }
    let mut at = from;
    while let Some(p) = bytes.get(at..).and_then(|r| memchr::memchr(b'>', r)) {
        let gt = at + p;
        let before = &bytes[from..gt];
        if before.ends_with(b"--") || before.ends_with(b"--!") {
            return gt + 1;
        }
        at = gt + 1;
    }
    bytes.len()
}

/// Where a tag whose name ends at `from` ends (just past its `>`), and whether it ends in
/// `/>`. A quote opens an attribute value only after `=`; an unclosed one runs to the end,
/// as in the tokenizer.
pub(crate) fn tag_end(bytes: &[u8], from: usize) -> (usize, bool) {
    let mut at = from;
    let mut after_equals = false;
    while let Some(&b) = bytes.get(at) {
        match b {
            b'>' => return (at + 1, at > from && bytes[at - 1] == b'/'),
            b'=' => {
                after_equals = true;
                at += 1;
                continue;
            }
            b'"' | b'\'' if after_equals => {
                at = memchr::memchr(b, &bytes[at + 1..]).map_or(bytes.len(), |p| at + 2 + p);
            }
            b if b.is_ascii_whitespace() => {
                at += 1;
                continue;
            }
            _ => at += 1,
        }
        after_equals = false;
    }
    (bytes.len(), false)
}

/// Where the content of raw text element `name` that starts at `from` ends: at its end tag
/// (`</name` then whitespace, `/` or `>`; `</namex` is text).
fn raw_text_end(bytes: &[u8], from: usize, name: &str) -> usize {
    let end_tag = format!("</{name}");
    let mut at = from;
    while let Some(found) = find_ignore_case(bytes, at, end_tag.as_bytes()) {
        let next = bytes.get(found + end_tag.len());
        if next.is_none_or(|b| b.is_ascii_whitespace() || matches!(b, b'/' | b'>')) {
            return found;
        }
        at = found + 1;
    }
    bytes.len()
}

/// The first place at or after `from` where `needle` is, ASCII case ignored.
fn find_ignore_case(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
        .map(|p| from + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ordinary page, with everything a scan could misread, comes back as it was.
    #[test]
    fn an_ordinary_page_is_kept() {
        let mut page = String::from(
            "<!doctype html><html><head><title>a <b> title</title></head><body>\
             <div class=\"a>b\" data-x='<div>' title=it's><p>one<p>two<br><img src=x/>\
             <!-- <div><div><div> --><!--><!---><script>if (a<b) { '<div>' }</script>\
             <ul><li>x<li>y<ul><li>inner</ul></ul><svg><path d=\"M0\"/><path/></svg>\
             <table>",
        );
        // Cells with unclosed spans: each `</td>` closes its span.
        page.push_str(&"<tr><td><span class=x>cell</td>".repeat(300));
        page.push_str("</table><h2>Next</h2><a href=u>link</a></div></body></html>");
        assert!(matches!(cap_nesting(&page, 32), Cow::Borrowed(_)));
    }

    /// Start tags past the limit go, with their end tags; the text stays, in order.
    #[test]
    fn deep_nesting_is_cut_and_text_kept() {
        let deep = format!("{}text{}after", "<div>".repeat(5), "</div>".repeat(5));
        assert_eq!(cap_nesting(&deep, 2), "<div><div>text</div></div>after");
        // `/>` does not close a `<div>` (the parser opens one each time).
        let slashed = "<div/>".repeat(5) + "x";
        assert_eq!(cap_nesting(&slashed, 2), "<div/><div/>x");
        // An empty comment ends at once: what follows is still read.
        let commented = format!("<!-->{}x", "<b>".repeat(4));
        assert_eq!(cap_nesting(&commented, 2), "<!--><b><b>x");
        // A quote inside an unquoted value opens nothing: the text after is kept.
        let quoted = format!(
            "{}<div class=it's>Price</div></div><p>Contact",
            "<div>".repeat(2)
        );
        assert_eq!(cap_nesting(&quoted, 2), "<div><div>Price</div><p>Contact");
        // A script past the limit is kept whole: its code never becomes page text.
        let script = format!("{}<script>var s = '<b>';</script>x", "<div>".repeat(3));
        assert_eq!(
            cap_nesting(&script, 2),
            format!("<div><div><script>var s = '<b>';</script>x")
        );
        // Nested lists each open their own `<li>`.
        let lists = "<ul><li>".repeat(4) + "x";
        assert_eq!(cap_nesting(&lists, 3), "<ul><li><ul>x");
    }

    /// Markup the scan must read as the tokenizer does, or it would take text for tags
    /// (and leave it out) or work quadratically.
    #[test]
    fn comments_cdata_and_raw_text_read_as_the_tokenizer_does() {
        // `</textareax>` does not end the textarea: `<b>` after it is text, kept.
        let textarea = "<div><div><textarea></textareax><b>kept?</textarea>";
        assert!(matches!(cap_nesting(textarea, 2), Cow::Borrowed(_)));
        // A CDATA section's `<g>` is text.
        let cdata = "<div><svg><![CDATA[ a > <g>b ]]></svg>";
        assert!(matches!(cap_nesting(cdata, 2), Cow::Borrowed(_)));
        // `</ ` opens a bogus comment to `>`: `</div` in it closes nothing.
        let bogus = "<div></ </div><b>x";
        assert_eq!(cap_nesting(bogus, 2), bogus);
        assert_eq!(cap_nesting(&format!("{bogus}<i>y"), 2), format!("{bogus}y"));
        // Many comments: one pass each (a search to the end for each was quadratic).
        let comments = "<!-- -->".repeat(200_000);
        assert!(matches!(cap_nesting(&comments, 2), Cow::Borrowed(_)));
        assert_eq!(comment_end(b"<!-- a --!> b", 4), 11);
        assert_eq!(comment_end(b"<!-- a -> b", 4), 11);
    }

    #[test]
    fn odd_bytes_never_panic() {
        for odd in [
            "<",
            "<div",
            "<div a='",
            "</",
            "<!--",
            "<!",
            "<script>",
            "é<é>",
            "<a\u{0}>",
            "<a =\"",
            "<x/",
            "<!---",
            "</é>",
            "<a b=é>",
            "<svg><a/>",
        ] {
            let _ = cap_nesting(odd, 1);
        }
    }
}
