//! Jupyter notebooks: an order-preserving JSON value (so an edit changes only the cells it
//! touches: numbers keep their text, keys their order), and the cell-by-cell rendering Read
//! shows the model.
//!
//! The rendering follows Claude Code's `processCell`: each cell is `{cellType, source,
//! cell_id}` (`cell_id` its `id`, or `cell-N`), and a code cell also has `language`,
//! `execution_count` (when it is a number) and, when it has any, `outputs`, each
//! `{output_type, text, image?}` with `image` as `{image_data, media_type}`. A cell of
//! another type shows no outputs, even when its JSON carries some. This is also Read's
//! structured output (a hook's `tool_response`), from which a hook's replacement is
//! rendered again ([`render_cells`]).
//!
//! A code cell whose outputs' text is more than 10,000 characters *in sum* shows one stream
//! output instead of them all, `Outputs are too large to include. Use Bash with: cat PATH |
//! jq '.cells[N].outputs'` (Claude Code's `isLargeOutputs`): a cell of many medium outputs
//! cannot carry the notebook past Read's token limit.
//!
//! **Decision**: images do not count in that sum. Claude Code adds each image's base64
//! length to it, so a cell with one ordinary plot (tens of kilobytes of base64) shows only
//! the pointer; Read here shows a notebook's images as image blocks on purpose, bounded on
//! their own (at most [`MAX_NOTEBOOK_IMAGES`] per read and [`MAX_NOTEBOOK_IMAGES_BASE64`]
//! of base64 together, each fitted as an image file is), and the sum exists to bound the
//! text a cell adds against the token limit, which images do not count against. A cell
//! whose text is too large still loses its whole outputs list to the pointer, its images
//! too, as in Claude Code. An output's `image_data` is the image as the model was shown it
//! (scaled down or re-encoded when it had to be; its `media_type` read from the bytes),
//! not necessarily the notebook's own bytes; an image that cannot be shown has no `image`,
//! and the reason is a line of the output's `text` (`[Image output omitted: ...]`).
//!
//! A notebook file is UTF-8 JSON, its byte order mark (EF BB BF) skipped as Claude Code's
//! reader skips it before `JSON.parse`, or UTF-16 JSON with its byte order mark
//! ([`decode_file`]); NotebookEdit writes it back in the same encoding, the mark included.

use std::collections::HashMap;
use std::fmt;

use tool_core::ContentBlock;

use crate::fsutil;

/// A notebook file's bytes as text, with the encoding to write it back in: UTF-8 (a byte
/// order mark skipped) or UTF-16 with its byte order mark. `Err`: the refusal, for the
/// model; `not_text` is the tool's own words for bytes that are neither (Read's "Notebook is
/// not valid UTF-8 JSON.", NotebookEdit's "Notebook is not valid JSON."), and damaged UTF-16
/// (an unpaired surrogate, an odd length) is said to be that.
pub(crate) fn decode_file(bytes: &[u8], not_text: &str) -> Result<fsutil::Decoded, String> {
    if let Some(decoded) = fsutil::decode(bytes) {
        return Ok(decoded);
    }
    Err(match fsutil::damaged_utf16(bytes) {
        Some(what) => format!(
            "Notebook is {what}, so it is not valid JSON text. Repair the file first, e.g. with Bash."
        ),
        None => not_text.to_owned(),
    })
}

/// A JSON value whose objects keep their key order and whose numbers keep their text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    /// A number as the file spells it (`3.4e-05`, an integer past 64 bits, and the `NaN`,
    /// `Infinity` and `-Infinity` Python's json module writes), written back verbatim.
    Num(Box<str>),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    pub(crate) fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub(crate) fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        match self {
            Json::Obj(entries) => entries.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Sets `key`, keeping its position when present, appending otherwise.
    pub(crate) fn set(&mut self, key: &str, value: Json) {
        if let Json::Obj(entries) = self {
            match entries.iter_mut().find(|(k, _)| k == key) {
                Some(slot) => slot.1 = value,
                None => entries.push((key.to_owned(), value)),
            }
        }
    }

    /// What kind of value this is, in words (`a number`), for messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Num(_) => "a number",
            Json::Str(_) => "a string",
            Json::Arr(_) => "an array",
            Json::Obj(_) => "an object",
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn as_u64(&self) -> Option<u64> {
        match self {
            Json::Num(n) => n.parse().ok(),
            _ => None,
        }
    }

    pub(crate) fn str(s: impl Into<String>) -> Json {
        Json::Str(s.into())
    }

    /// Text that may be stored as a string or a list of strings (notebook `source`, `text`).
    pub(crate) fn multiline_text(&self) -> String {
        match self {
            Json::Str(s) => s.clone(),
            Json::Arr(items) => items.iter().filter_map(Json::as_str).collect(),
            _ => String::new(),
        }
    }

    /// Serialises in serde_json's pretty layout (numbers written as they were read), for a
    /// value that starts inside a document: each line after the first starts with `base`
    /// (the indentation of the line the value starts on), then `unit` per level (one space
    /// in Jupyter's files). An empty `unit` and `base` write the value compactly, on one
    /// line (a minified document).
    pub(crate) fn to_pretty_at(&self, unit: &str, base: &str) -> String {
        let mut out = String::new();
        self.write_pretty(&mut out, unit, base, 0);
        out
    }

    fn write_pretty(&self, out: &mut String, unit: &str, base: &str, level: usize) {
        let compact = unit.is_empty() && base.is_empty();
        let newline = |out: &mut String, level: usize| {
            if compact {
                return;
            }
            out.push('\n');
            out.push_str(base);
            for _ in 0..level {
                out.push_str(unit);
            }
        };
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Num(n) => out.push_str(n),
            Json::Str(v) => write_string(out, v),
            Json::Arr(items) if items.is_empty() => out.push_str("[]"),
            Json::Obj(entries) if entries.is_empty() => out.push_str("{}"),
            Json::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, level + 1);
                    item.write_pretty(out, unit, base, level + 1);
                }
                newline(out, level);
                out.push(']');
            }
            Json::Obj(entries) => {
                out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, level + 1);
                    write_string(out, k);
                    out.push_str(if compact { ":" } else { ": " });
                    v.write_pretty(out, unit, base, level + 1);
                }
                newline(out, level);
                out.push('}');
            }
        }
    }
}

/// `s` as a JSON string, escaped as serde_json escapes it (quote, backslash, control
/// characters; nothing else).
fn write_string(out: &mut String, s: &str) {
    out.push('"');
    let mut from = 0;
    for (i, b) in s.bytes().enumerate() {
        let escape = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0C => "\\f",
            0..=0x1F => "",
            _ => continue,
        };
        out.push_str(&s[from..i]);
        if escape.is_empty() {
            out.push_str(&format!("\\u{b:04x}"));
        } else {
            out.push_str(escape);
        }
        from = i + 1;
    }
    out.push_str(&s[from..]);
    out.push('"');
}

/// Most values one notebook may hold (each takes tens of bytes in memory: a 100 MB notebook
/// of tiny values would take gigabytes).
pub(crate) const MAX_VALUES: usize = 2_000_000;
/// Deepest nesting of arrays and objects (serde_json's limit).
const MAX_DEPTH: usize = 128;

/// Why a notebook's text could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ParseError {
    /// Not JSON (nor the `NaN` / `Infinity` Python writes): what is wrong, and where.
    Invalid {
        what: &'static str,
        line: usize,
        column: usize,
    },
    /// More than [`MAX_VALUES`] values.
    TooManyValues,
    /// Arrays and objects nested deeper than [`MAX_DEPTH`] levels (valid JSON, maybe, but
    /// deeper than this reader goes): where the level past it opens.
    TooDeep { line: usize, column: usize },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid { what, line, column } => {
                write!(f, "{what} at line {line} column {column}")
            }
            Self::TooManyValues => write!(
                f,
                "it has too many JSON values (more than {MAX_VALUES}) to be loaded"
            ),
            Self::TooDeep { line, column } => write!(
                f,
                "its arrays and objects are nested more than {MAX_DEPTH} levels deep (at line \
                 {line} column {column}), deeper than this tool reads"
            ),
        }
    }
}

/// Parses a notebook's JSON, keeping key order and each number's text. Takes the bare
/// `NaN`, `Infinity` and `-Infinity` tokens that Python's json module (and so nbformat)
/// writes; stops past [`MAX_VALUES`] values.
pub(crate) fn parse(text: &str) -> Result<Json, ParseError> {
    parse_limited(text, MAX_VALUES).map(|(json, _)| json)
}

/// As [`parse`], with where the top-level `cells` array and each of its cells are in `text`
/// (`None` without such an array): an edit rewrites only the text of the cells it changes.
pub(crate) fn parse_with_cells(text: &str) -> Result<(Json, Option<CellSpans>), ParseError> {
    parse_limited(text, MAX_VALUES)
}

/// Where the top-level `cells` array and its items are in the text (byte ranges).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CellSpans {
    /// From its `[` to past its `]`.
    pub array: std::ops::Range<usize>,
    /// Each cell, from its first byte to past its last.
    pub cells: Vec<std::ops::Range<usize>>,
}

fn parse_limited(text: &str, max_values: usize) -> Result<(Json, Option<CellSpans>), ParseError> {
    let mut p = Parser {
        src: text,
        bytes: text.as_bytes(),
        pos: 0,
        values: 0,
        max_values,
        depth: 0,
        capture_cells: false,
        cells: None,
    };
    p.skip_ws();
    let value = p.value()?;
    p.skip_ws();
    if p.pos < p.bytes.len() {
        return Err(p.invalid("trailing characters"));
    }
    Ok((value, p.cells))
}

struct Parser<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    values: usize,
    max_values: usize,
    depth: usize,
    /// The array about to be parsed is the top-level `cells`: record its spans.
    capture_cells: bool,
    cells: Option<CellSpans>,
}

impl Parser<'_> {
    fn invalid(&self, what: &'static str) -> ParseError {
        let (line, column) = self.position();
        ParseError::Invalid { what, line, column }
    }

    /// The line and column (1-based) of the parser's position.
    fn position(&self) -> (usize, usize) {
        let before = &self.bytes[..self.pos.min(self.bytes.len())];
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let line_start = before
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        (line, self.pos - line_start + 1)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn literal(&mut self, word: &str) -> bool {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Result<Json, ParseError> {
        self.values += 1;
        if self.values > self.max_values {
            return Err(ParseError::TooManyValues);
        }
        match self.peek() {
            None => Err(self.invalid("EOF while parsing a value")),
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => self.string().map(Json::Str),
            Some(b't') if self.literal("true") => Ok(Json::Bool(true)),
            Some(b'f') if self.literal("false") => Ok(Json::Bool(false)),
            Some(b'n') if self.literal("null") => Ok(Json::Null),
            Some(b'N' | b'I' | b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.invalid("expected value")),
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
        self.pos - start
    }

    /// A number's text, checked against JSON's grammar (plus `NaN`, `Infinity`,
    /// `-Infinity`).
    fn number(&mut self) -> Result<Json, ParseError> {
        let start = self.pos;
        let bad = |p: &Self| Err(p.invalid("invalid number"));
        if self.literal("NaN") || self.literal("Infinity") || self.literal("-Infinity") {
            return Ok(Json::Num(self.src[start..self.pos].into()));
        }
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return bad(self),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return bad(self);
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return bad(self);
            }
        }
        Ok(Json::Num(self.src[start..self.pos].into()))
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let hex = self
            .bytes
            .get(self.pos..self.pos + 4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .ok_or_else(|| self.invalid("invalid escape"))?;
        self.pos += 4;
        Ok(hex)
    }

    /// A string, the opening quote at `pos`.
    fn string(&mut self) -> Result<String, ParseError> {
        self.pos += 1;
        let mut out = String::new();
        let mut from = self.pos;
        loop {
            let Some(b) = self.peek() else {
                return Err(self.invalid("EOF while parsing a string"));
            };
            match b {
                b'"' => {
                    out.push_str(&self.src[from..self.pos]);
                    self.pos += 1;
                    return Ok(out);
                }
                b'\\' => {
                    out.push_str(&self.src[from..self.pos]);
                    self.pos += 1;
                    let Some(e) = self.peek() else {
                        return Err(self.invalid("EOF while parsing a string"));
                    };
                    self.pos += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let first = self.hex4()?;
                            let code =
                                match first {
                                    0xD800..=0xDBFF => {
                                        if !self.literal("\\u") {
                                            return Err(self
                                                .invalid("lone leading surrogate in hex escape"));
                                        }
                                        let second = self.hex4()?;
                                        if !(0xDC00..=0xDFFF).contains(&second) {
                                            return Err(self
                                                .invalid("lone leading surrogate in hex escape"));
                                        }
                                        0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                                    }
                                    0xDC00..=0xDFFF => {
                                        return Err(self.invalid("unexpected end of hex escape"));
                                    }
                                    c => c,
                                };
                            out.push(
                                char::from_u32(code)
                                    .ok_or_else(|| self.invalid("invalid escape"))?,
                            );
                        }
                        _ => return Err(self.invalid("invalid escape")),
                    }
                    from = self.pos;
                }
                0..=0x1F => {
                    return Err(self.invalid(
                        "control character (\\u0000-\\u001F) found while parsing a string",
                    ));
                }
                _ => self.pos += 1,
            }
        }
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let (line, column) = self.position();
            return Err(ParseError::TooDeep { line, column });
        }
        self.pos += 1;
        self.skip_ws();
        Ok(())
    }

    /// After an item: `,` (more follow) or `close` (the end).
    fn next_item(&mut self, close: u8) -> Result<bool, ParseError> {
        self.skip_ws();
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                self.skip_ws();
                Ok(true)
            }
            Some(b) if b == close => {
                self.pos += 1;
                self.depth -= 1;
                Ok(false)
            }
            None => Err(self.invalid("EOF while parsing a list or an object")),
            Some(_) => Err(self.invalid("expected `,` or the end of a list or an object")),
        }
    }

    fn array(&mut self) -> Result<Json, ParseError> {
        let capture = std::mem::take(&mut self.capture_cells);
        let start = self.pos;
        let mut spans = Vec::new();
        self.enter()?;
        let mut items = Vec::new();
        if self.peek() == Some(b']') {
            self.pos += 1;
            self.depth -= 1;
        } else {
            loop {
                let from = self.pos;
                items.push(self.value()?);
                if capture {
                    spans.push(from..self.pos);
                }
                if !self.next_item(b']')? {
                    break;
                }
            }
        }
        if capture {
            self.cells = Some(CellSpans {
                array: start..self.pos,
                cells: spans,
            });
        }
        Ok(Json::Arr(items))
    }

    fn object(&mut self) -> Result<Json, ParseError> {
        self.enter()?;
        let mut entries: Vec<(String, Json)> = Vec::new();
        // Past a few keys, where each key is (a duplicate key keeps its first place and
        // takes the last value, as before): no quadratic search in a huge object.
        let mut index: HashMap<String, usize> = HashMap::new();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            self.depth -= 1;
            return Ok(Json::Obj(entries));
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(self.invalid("key must be a string"));
            }
            let key = self.string()?;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(self.invalid("expected `:`"));
            }
            self.pos += 1;
            self.skip_ws();
            self.capture_cells = self.depth == 1 && key == "cells" && self.peek() == Some(b'[');
            let value = self.value()?;
            let at = if entries.len() < 16 {
                entries.iter().position(|(k, _)| *k == key)
            } else {
                if index.is_empty() {
                    index = entries
                        .iter()
                        .enumerate()
                        .map(|(i, (k, _))| (k.clone(), i))
                        .collect();
                }
                index.get(&key).copied()
            };
            match at {
                Some(i) => entries[i].1 = value,
                None => {
                    if !index.is_empty() {
                        index.insert(key.clone(), entries.len());
                    }
                    entries.push((key, value));
                }
            }
            if !self.next_item(b'}')? {
                return Ok(Json::Obj(entries));
            }
        }
    }
}

/// One level of a document's indentation as written (spaces or tabs: the second line's
/// leading whitespace); empty for a document on one line (written compactly), one space
/// when its second line is not indented.
pub(crate) fn indent_unit(text: &str) -> &str {
    let mut lines = text.lines();
    let Some(second) = lines.nth(1) else {
        return "";
    };
    let unit = leading_whitespace(second);
    if unit.is_empty() { " " } else { unit }
}

/// The spaces and tabs `line` starts with.
pub(crate) fn leading_whitespace(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// The id Claude Code shows for cell `index`: its `id`, or `cell-N`.
pub(crate) fn cell_id(cell: &Json, index: usize) -> String {
    cell.get("id")
        .and_then(Json::as_str)
        .map_or_else(|| format!("cell-{index}"), str::to_owned)
}

/// The notebook's language (`metadata.language_info.name`, default python).
pub(crate) fn language(nb: &Json) -> String {
    nb.get("metadata")
        .and_then(|m| m.get("language_info"))
        .and_then(|l| l.get("name"))
        .and_then(Json::as_str)
        .unwrap_or("python")
        .to_owned()
}

/// A code cell whose outputs' text is longer than this in sum (Claude Code's
/// `isLargeOutputs`) shows one pointer to read them with jq instead of them.
const MAX_OUTPUT_CHARS: usize = 10_000;

/// Most images one notebook read shows.
pub(crate) const MAX_NOTEBOOK_IMAGES: usize = 20;

/// Most base64 the images of one notebook read carry, together (the API takes a request of
/// 32 MB at most, and every later request of the conversation carries them again).
pub(crate) const MAX_NOTEBOOK_IMAGES_BASE64: usize = 20 * 1024 * 1024;

/// The images one read shows, counted as they are shown: at most [`MAX_NOTEBOOK_IMAGES`],
/// carrying at most [`MAX_NOTEBOOK_IMAGES_BASE64`] of base64 together. A read and a hook's
/// replacement of its output ([`render_cells`]) count alike.
#[derive(Debug, Default)]
struct ImageBudget {
    shown: usize,
    base64: usize,
}

impl ImageBudget {
    /// Why no other image can be shown, once [`MAX_NOTEBOOK_IMAGES`] are.
    fn full(&self) -> Result<(), String> {
        if self.shown >= MAX_NOTEBOOK_IMAGES {
            return Err(format!("a read shows at most {MAX_NOTEBOOK_IMAGES} images"));
        }
        Ok(())
    }

    /// Takes an image of `len` bytes of base64, or says why it cannot be shown.
    fn admit(&mut self, len: usize) -> Result<(), String> {
        self.full()?;
        if self.base64 + len > MAX_NOTEBOOK_IMAGES_BASE64 {
            return Err(format!(
                "the images of one read carry at most {} MB of base64, and the ones shown above take most of it",
                MAX_NOTEBOOK_IMAGES_BASE64 >> 20
            ));
        }
        self.shown += 1;
        self.base64 += len;
        Ok(())
    }
}

/// An image output (base64 `data`) of a notebook as the model will be shown it, as
/// Read shows an image file ([`crate::read::fit_image`]: scaled down past 1568 pixels on a
/// side or over the API's limits, re-encoded over 500 KB when lighter; its media type read
/// from the bytes, not the output's label), taken from `budget`, or why it cannot be shown:
/// one image the API refuses fails every later request of the conversation.
fn image_to_show(data: &str, budget: &mut ImageBudget) -> Result<(&'static str, String), String> {
    use base64::Engine as _;
    budget.full()?;
    // Far too long to be scaled down here: refused undecoded.
    let bytes = crate::read::decode_base64_image(data, crate::read::MAX_SHRINK_INPUT_BYTES)?;
    let fitted = crate::read::fit_image(bytes).map_err(|why| why.to_string())?;
    let len = if fitted.changed {
        fitted.bytes.len().div_ceil(3) * 4
    } else {
        data.len()
    };
    budget.admit(len)?;
    let base64 = if fitted.changed {
        base64::engine::general_purpose::STANDARD.encode(&fitted.bytes)
    } else {
        data.to_owned()
    };
    Ok((fitted.media_type, base64))
}

/// Renders a notebook for the model: one text block per cell (`<cell id="...">...`), then,
/// for a code cell, its outputs as text and image blocks. Also returns the cells in Claude
/// Code's shape (see the [module docs](self)), for the structured output.
pub(crate) fn render(nb: &Json, path_display: &str) -> (Vec<ContentBlock>, Vec<serde_json::Value>) {
    // The path as one shell word in the command the model is invited to run: in double
    // quotes as Claude Code writes it, unless it holds what a shell expands or ends there
    // (a repository's `my $(x) "nb".ipynb`): then single-quoted.
    // (A relative path starting with `-` would be read as an option: `./` before it.)
    let path_display = if path_display.starts_with('-') {
        std::borrow::Cow::Owned(format!("./{path_display}"))
    } else {
        std::borrow::Cow::Borrowed(path_display)
    };
    let path_word = if path_display.contains(['"', '$', '`', '\\', '!']) {
        crate::bash::shell_quote(&path_display)
    } else {
        format!("\"{path_display}\"")
    };
    let language = language(nb);
    let mut cells_out = Vec::new();
    let mut budget = ImageBudget::default();
    let cells = match nb.get("cells") {
        Some(Json::Arr(cells)) => cells.as_slice(),
        _ => &[],
    };
    for (index, cell) in cells.iter().enumerate() {
        let cell_type = cell
            .get("cell_type")
            .and_then(Json::as_str)
            .unwrap_or("code");
        let mut summary = serde_json::Map::new();
        summary.insert("cellType".into(), cell_type.into());
        summary.insert(
            "source".into(),
            cell.get("source")
                .map(Json::multiline_text)
                .unwrap_or_default()
                .into(),
        );
        summary.insert("cell_id".into(), cell_id(cell, index).into());
        // Outputs, language and execution count belong to code cells only (a markdown cell
        // that carries `outputs` shows none, as in Claude Code).
        if cell_type == "code" {
            summary.insert("language".into(), language.as_str().into());
            if let Some(n) = cell.get("execution_count").and_then(Json::as_u64) {
                summary.insert("execution_count".into(), n.into());
            }
            let outputs = match cell.get("outputs") {
                Some(Json::Arr(outputs)) => outputs.as_slice(),
                _ => &[],
            };
            if !outputs.is_empty() {
                let rendered: Vec<_> = outputs.iter().map(render_output).collect();
                let text_chars: usize = rendered
                    .iter()
                    .map(|(_, text, _)| text.chars().count())
                    .sum();
                let shown: Vec<serde_json::Value> = if text_chars > MAX_OUTPUT_CHARS {
                    vec![serde_json::json!({
                        "output_type": "stream",
                        "text": format!(
                            "Outputs are too large to include. Use Bash with: cat {path_word} | jq '.cells[{index}].outputs'"
                        ),
                    })]
                } else {
                    rendered
                        .into_iter()
                        .map(|(output_type, mut text, image)| {
                            let mut out = serde_json::Map::new();
                            if let Some(t) = output_type {
                                out.insert("output_type".into(), t.into());
                            }
                            let mut shown_image = None;
                            if let Some(data) = image {
                                match image_to_show(&data, &mut budget) {
                                    Ok((media_type, base64)) => {
                                        shown_image = Some(serde_json::json!({
                                            "image_data": base64,
                                            "media_type": media_type,
                                        }));
                                    }
                                    Err(why) => push_line(
                                        &mut text,
                                        &format!(
                                            "[Image output omitted: {why}. Use Bash with: cat {path_word} | jq '.cells[{index}].outputs']"
                                        ),
                                    ),
                                }
                            }
                            out.insert("text".into(), text.into());
                            if let Some(image) = shown_image {
                                out.insert("image".into(), image);
                            }
                            serde_json::Value::Object(out)
                        })
                        .collect()
                };
                summary.insert("outputs".into(), shown.into());
            }
        }
        cells_out.push(serde_json::Value::Object(summary));
    }
    (render_cells(&cells_out), cells_out)
}

/// `line` after `text`, on a line of its own when `text` has any.
fn push_line(text: &mut String, line: &str) {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(line);
}

/// The blocks the model is shown for cells in the shape [`render`] gives them: what a Read
/// shows, and what a hook's replacement output shows. An image is shown only as the API
/// takes it (`tool_core::check_image`); one it would refuse (a hook's replacement may carry
/// anything) becomes a note, since it would fail every later request of the conversation.
pub(crate) fn render_cells(cells: &[serde_json::Value]) -> Vec<ContentBlock> {
    let mut blocks = Vec::new();
    // As a read of the notebook: at most MAX_NOTEBOOK_IMAGES images, and
    // MAX_NOTEBOOK_IMAGES_BASE64 of base64 together (a replacement's images each pass the
    // API's checks, and all of them go with every later request).
    let mut budget = ImageBudget::default();
    for cell in cells {
        let text = |key: &str| cell[key].as_str().unwrap_or_default();
        let (id, cell_type, language) = (text("cell_id"), text("cellType"), text("language"));
        let mut meta = String::new();
        if cell_type != "code" {
            meta.push_str(&format!("<cell_type>{cell_type}</cell_type>"));
        }
        if cell_type == "code" && !language.is_empty() && language != "python" {
            meta.push_str(&format!("<language>{language}</language>"));
        }
        blocks.push(ContentBlock::text(format!(
            "<cell id=\"{id}\">{meta}{}</cell id=\"{id}\">",
            text("source")
        )));
        for output in cell["outputs"].as_array().into_iter().flatten() {
            if let Some(t) = output["text"].as_str().filter(|t| !t.is_empty()) {
                blocks.push(ContentBlock::text(t));
            }
            if output.get("image").is_some_and(|i| !i.is_null()) {
                let shown = checked_image(&output["image"]).and_then(|(media_type, data)| {
                    Ok((media_type, data, budget.admit(data.len())?))
                });
                blocks.push(match shown {
                    Ok((media_type, data, ())) => ContentBlock::image(media_type, data.to_owned()),
                    Err(why) => ContentBlock::text(format!("[Image output omitted: {why}]")),
                });
            }
        }
    }
    blocks
}

/// An output's `image` (`{image_data, media_type}`) as the API takes it: its media type
/// read from the bytes, and its base64; or why it cannot be shown.
fn checked_image(image: &serde_json::Value) -> Result<(&'static str, &str), String> {
    let data = image["image_data"]
        .as_str()
        .ok_or("its `image_data` is not a string")?;
    Ok((crate::read::checked_base64_image(data)?, data))
}

/// An output's type, its text and the base64 of its image (PNG or JPEG), if it has one
/// (Claude Code's `processOutput`).
fn render_output(output: &Json) -> (Option<String>, String, Option<String>) {
    let output_type = output.get("output_type").and_then(Json::as_str);
    let (text, image) = match output_type {
        Some("stream") => (
            output
                .get("text")
                .map(Json::multiline_text)
                .unwrap_or_default(),
            None,
        ),
        Some("execute_result" | "display_data") => {
            let data = output.get("data");
            let text = data
                .and_then(|d| d.get("text/plain"))
                .map(Json::multiline_text)
                .unwrap_or_default();
            let image = data.and_then(|d| {
                ["image/png", "image/jpeg"].into_iter().find_map(|key| {
                    d.get(key).map(|v| {
                        v.multiline_text()
                            .chars()
                            .filter(|c| !c.is_whitespace())
                            .collect()
                    })
                })
            });
            (text, image)
        }
        Some("error") => {
            let ename = output.get("ename").and_then(Json::as_str).unwrap_or("");
            let evalue = output.get("evalue").and_then(Json::as_str).unwrap_or("");
            let traceback = match output.get("traceback") {
                Some(Json::Arr(lines)) => lines
                    .iter()
                    .filter_map(Json::as_str)
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => String::new(),
            };
            (format!("{ename}: {evalue}\n{traceback}"), None)
        }
        _ => (String::new(), None),
    };
    (output_type.map(str::to_owned), text, image)
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::*;

    /// Any JSON value serde_json writes.
    fn any_json() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::Bool),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<u64>().prop_map(serde_json::Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(serde_json::Value::from),
            "\\PC{0,12}|[\\x00-\\x1f\"\\\\]{0,4}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
                prop::collection::vec(("[a-z\"\\\\é]{0,6}", inner), 0..6)
                    .prop_map(|kv| { serde_json::Value::Object(kv.into_iter().collect()) }),
            ]
        })
    }

    proptest! {
        /// What serde_json writes (pretty, two spaces) reads and writes back byte for byte.
        #[test]
        fn serde_json_output_round_trips(value in any_json()) {
            let text = serde_json::to_string_pretty(&value).unwrap();
            let parsed = parse(&text).unwrap();
            prop_assert_eq!(parsed.to_pretty_at("  ", ""), text);
        }

        /// Any text, JSON or not, parses or is refused without a panic.
        #[test]
        fn any_text_parses_or_is_refused(text in "[\\[\\]{}\",:0-9eE+.\\-a-zNIn \\n\\\\u]{0,40}") {
            let _ = parse(&text);
        }
    }

    #[test]
    fn round_trip_keeps_key_order_and_indent() {
        let text = "{\n \"z\": 1,\n \"a\": [\n  \"x\",\n  {\n   \"k\": null,\n   \"b\": true\n  }\n ],\n \"m\": {},\n \"e\": []\n}";
        let json = parse(text).unwrap();
        assert_eq!(json.to_pretty_at(indent_unit(text), ""), text);
        let two = "{\n  \"b\": 1.5,\n  \"a\": \"\u{e9}\"\n}";
        let json = parse(two).unwrap();
        assert_eq!(json.to_pretty_at(indent_unit(two), ""), two);
    }

    #[test]
    fn numbers_keep_their_text_and_strings_are_escaped_as_serde_json_does() {
        let text = r#"[0.21526736620564346, 3.4e-05, 123456789012345678901234567890, NaN, -Infinity, Infinity, -0, 1E+2, "a\"\\\/\b\f\n\r\t\u0001\u00e9\ud83d\ude00\u007f"]"#;
        let json = parse(text).unwrap();
        let Json::Arr(items) = &json else {
            panic!("{json:?}")
        };
        let numbers: Vec<&str> = items
            .iter()
            .filter_map(|v| match v {
                Json::Num(n) => Some(&**n),
                _ => None,
            })
            .collect();
        assert_eq!(
            numbers,
            [
                "0.21526736620564346",
                "3.4e-05",
                "123456789012345678901234567890",
                "NaN",
                "-Infinity",
                "Infinity",
                "-0",
                "1E+2"
            ]
        );
        let string = items[8].as_str().unwrap();
        assert_eq!(string, "a\"\\/\u{8}\u{c}\n\r\t\u{1}\u{e9}\u{1F600}\u{7f}");
        let mut written = String::new();
        write_string(&mut written, string);
        assert_eq!(
            written,
            serde_json::to_string(string).unwrap(),
            "escaped as serde_json escapes"
        );
        assert_eq!(Json::Num("42".into()).as_u64(), Some(42));
    }

    #[test]
    fn what_is_not_json_is_refused() {
        for bad in [
            "",
            "[1,]",
            "{\"a\" 1}",
            "[01]",
            "[1.]",
            "[.5]",
            "[1e]",
            "[-]",
            "[nan]",
            "{1: 2}",
            "[\"\\ud800\"]",
            "[\"\\udc00\"]",
            "[\"\\x\"]",
            "[\"a\nb\"]",
            "[1] 2",
            "[\"open",
            "[true",
        ] {
            assert!(
                matches!(parse(bad), Err(ParseError::Invalid { .. })),
                "{bad:?}: {:?}",
                parse(bad)
            );
        }
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(parse(&deep).is_err());
        let fine = "[".repeat(100) + &"]".repeat(100);
        assert!(parse(&fine).is_ok());
        let err = parse("{\n \"a\": x}").unwrap_err();
        assert_eq!(err.to_string(), "expected value at line 2 column 7");
    }

    #[test]
    fn values_are_counted_and_a_duplicate_key_keeps_its_place() {
        assert_eq!(
            parse_limited("[1, [2, 3], {\"a\": 4}]", 6),
            Err(ParseError::TooManyValues)
        );
        assert!(parse_limited("[1, [2, 3], {\"a\": 4}]", 7).is_ok());
        let many: Vec<String> = (0..40).map(|i| format!("\"k{i}\": {i}")).collect();
        let text = format!(
            "{{{}, \"k3\": \"again\", \"k30\": \"too\"}}",
            many.join(", ")
        );
        let Json::Obj(entries) = parse(&text).unwrap() else {
            panic!()
        };
        assert_eq!(entries.len(), 40);
        assert_eq!(entries[3], ("k3".to_owned(), Json::str("again")));
        assert_eq!(entries[30], ("k30".to_owned(), Json::str("too")));
    }
}
