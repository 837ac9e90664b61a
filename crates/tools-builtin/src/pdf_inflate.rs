//! A PDF's decompressed size, measured before lopdf inflates it.
//!
//! lopdf inflates a stream whole and without bound: the object streams while it loads the
//! file, a page's content streams and the fonts' character maps while it extracts the text.
//! A crafted file of a few megabytes can inflate to many gigabytes (a decompression bomb)
//! and take the process down. Here each of those streams is decoded first, through the same
//! filters lopdf applies (`FlateDecode` with its raw-deflate retry, `LZWDecode`,
//! `ASCII85Decode`, in any chain), with every output capped at what is left of a budget
//! (the last layer's only counted, an inner layer's held up to the cap):
//!
//! - [`load`] measures the object streams as lopdf parses them (a load filter), and empties
//!   the rest of them once the budget is spent, so lopdf never inflates past it;
//! - [`text_streams_size`] measures, on the loaded (and decrypted) document, the streams text
//!   extraction inflates: the content streams of the pages read, whatever they claim to be,
//!   and every other stream that is not another page's content, an image, a font program,
//!   an embedded file or metadata.
//!
//! What it does not cover: an encrypted file's object streams, which lopdf decrypts and
//! inflates while loading without calling the load filter.

use std::cell::Cell;
use std::collections::HashSet;
use std::io::{self, Write};

use flate2::read::{DeflateDecoder, ZlibDecoder};
use lopdf::{Document, Object, ObjectId, Stream};

thread_local! {
    /// What the object streams of the load running on this thread may still inflate to,
    /// and whether they passed it.
    static LOAD_BUDGET: Cell<(u64, bool)> = const { Cell::new((0, false)) };
}

/// The object streams inflate to more than the budget.
pub(crate) struct TooLarge;

/// Loads `bytes` with lopdf, its object streams measured first: once they pass `limit` all
/// together, the rest are emptied (lopdf inflates nothing more) and the load is refused.
pub(crate) fn load(bytes: &[u8], limit: u64) -> Result<lopdf::Result<Document>, TooLarge> {
    LOAD_BUDGET.with(|b| b.set((limit, false)));
    let options = lopdf::LoadOptions {
        filter: Some(measure_object_stream),
        ..Default::default()
    };
    let loaded = Document::load_mem_with_options(bytes, options);
    let (_, over) = LOAD_BUDGET.with(|b| b.replace((0, false)));
    if over { Err(TooLarge) } else { Ok(loaded) }
}

/// lopdf's load filter: runs on every object as it is parsed, before an object stream is
/// inflated. It edits the object in place (what lopdf keeps) and hands back a copy only for
/// an object without a stream (what lopdf keeps of an object stream's members).
fn measure_object_stream(id: ObjectId, object: &mut Object) -> Option<(ObjectId, Object)> {
    if let Object::Stream(stream) = object {
        if stream.dict.has_type(b"ObjStm") {
            LOAD_BUDGET.with(|b| {
                let (left, over) = b.get();
                if over {
                    stream.content.clear();
                    return;
                }
                let size = inflated_size(stream, left.saturating_add(1));
                if size > left {
                    b.set((0, true));
                    stream.content.clear();
                } else {
                    b.set((left - size, false));
                }
            });
        }
        return Some((id, Object::Null));
    }
    Some((id, object.clone()))
}

/// What text extraction would inflate, counted up to just past `cap`: the content streams
/// of `pages`, and every stream that is not another page's content, an image, a font
/// program, an embedded file or metadata (character maps and the like).
pub(crate) fn text_streams_size(doc: &Document, pages: &[ObjectId], cap: u64) -> u64 {
    let mut counted: HashSet<ObjectId> = HashSet::new();
    let mut total = 0u64;
    let mut add = |id: ObjectId, stream: &Stream, total: &mut u64| {
        if *total <= cap && counted.insert(id) {
            *total += inflated_size(stream, cap - *total + 1);
        }
    };
    for &page in pages {
        for id in doc.get_page_contents(page) {
            if let Ok(stream) = doc.get_object(id).and_then(Object::as_stream) {
                add(id, stream, &mut total);
            }
        }
    }
    // The other pages' content is not read.
    let other_pages: HashSet<ObjectId> = doc
        .page_iter()
        .flat_map(|page| doc.get_page_contents(page))
        .collect();
    for (&id, object) in &doc.objects {
        if let Object::Stream(stream) = object
            && !other_pages.contains(&id)
            && !skipped_for_text(stream)
        {
            add(id, stream, &mut total);
        }
    }
    total
}

/// Streams text extraction never inflates (unless they are a page's content, counted
/// apart): images, form and other typed XObjects, font programs, embedded files, metadata.
fn skipped_for_text(stream: &Stream) -> bool {
    let dict = &stream.dict;
    dict.has(b"Subtype")
        || [b"Length1".as_slice(), b"Length2", b"Length3"]
            .iter()
            .any(|k| dict.has(k))
        || [b"EmbeddedFile".as_slice(), b"Metadata", b"XRef", b"ObjStm"]
            .iter()
            .any(|t| dict.has_type(t))
}

/// What `stream` decodes to through the filters lopdf applies, up to the first it does not
/// support (where lopdf stops too), counted up to `cap` (a result over it means at least
/// that much). A layer's output is held (up to `cap`) only when another layer follows; the
/// last is only counted.
fn inflated_size(stream: &Stream, cap: u64) -> u64 {
    let Ok(filters) = stream.filters() else {
        return 0;
    };
    let supported = filters
        .iter()
        .take_while(|f| matches!(**f, b"FlateDecode" | b"LZWDecode" | b"ASCII85Decode"))
        .count();
    let mut data: std::borrow::Cow<'_, [u8]> = std::borrow::Cow::Borrowed(&stream.content);
    for (i, filter) in filters[..supported].iter().enumerate() {
        let mut out = Sink::new(cap, i + 1 < supported);
        match *filter {
            b"FlateDecode" => flate(&data, &mut out),
            b"LZWDecode" => lzw(&data, &mut out),
            _ => out.put(&ascii85(&data)),
        }
        if out.len > cap || !out.keep {
            return out.len;
        }
        data = std::borrow::Cow::Owned(out.bytes);
    }
    0
}

/// zlib, read again as raw deflate after its two header bytes when nothing came out (as
/// lopdf does).
fn flate(data: &[u8], out: &mut Sink) {
    let failed = io::copy(&mut ZlibDecoder::new(data), out).is_err();
    if failed && out.len == 0 && data.len() > 2 {
        let _ = io::copy(&mut DeflateDecoder::new(&data[2..]), out);
    }
}

/// LZW as PDF writes it (MSB first, 8-bit codes, early change).
fn lzw(data: &[u8], out: &mut Sink) {
    let mut decoder = weezl::decode::Decoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8);
    let _ = decoder.into_stream(out).decode_all(data);
}

/// ASCII85 (it shrinks: four bytes out of five in).
fn ascii85(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() / 5 * 4 + 4);
    let (mut group, mut n) = (0u32, 0);
    let body = data.strip_suffix(b"~>").unwrap_or(data);
    for &c in body {
        match c {
            b'z' if n == 0 => out.extend_from_slice(&[0; 4]),
            b'!'..=b'u' => {
                group = group.wrapping_mul(85).wrapping_add(u32::from(c - b'!'));
                n += 1;
                if n == 5 {
                    out.extend_from_slice(&group.to_be_bytes());
                    (group, n) = (0, 0);
                }
            }
            c if c.is_ascii_whitespace() => {}
            _ => break,
        }
    }
    if n > 1 {
        for _ in n..5 {
            group = group.wrapping_mul(85).wrapping_add(84);
        }
        out.extend_from_slice(&group.to_be_bytes()[..n - 1]);
    }
    out
}

/// A decoder's output: counted up to `cap + 1` bytes, then refused (which stops the
/// decoder); kept only when another layer reads it.
struct Sink {
    bytes: Vec<u8>,
    len: u64,
    cap: u64,
    keep: bool,
}

impl Sink {
    fn new(cap: u64, keep: bool) -> Self {
        Self {
            bytes: Vec::new(),
            len: 0,
            cap: cap.saturating_add(1),
            keep,
        }
    }

    fn put(&mut self, buf: &[u8]) {
        let _ = self.write(buf);
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = usize::try_from(self.cap.saturating_sub(self.len)).unwrap_or(usize::MAX);
        if room == 0 {
            return Err(io::Error::other("over the cap"));
        }
        let take = buf.len().min(room);
        if self.keep {
            self.bytes.extend_from_slice(&buf[..take]);
        }
        self.len += take as u64;
        Ok(take)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use flate2::Compression;
    use flate2::write::{DeflateEncoder, ZlibEncoder};
    use lopdf::{Dictionary, Stream};

    use super::*;

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut e = ZlibEncoder::new(Vec::new(), Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn stream(filters: &[&str], content: Vec<u8>) -> Stream {
        let mut dict = Dictionary::new();
        let names: Vec<Object> = filters
            .iter()
            .map(|f| Object::Name(f.as_bytes().to_vec()))
            .collect();
        dict.set("Filter", Object::Array(names));
        Stream::new(dict, content)
    }

    #[test]
    fn every_layer_lopdf_decodes_is_followed() {
        let mb = vec![b' '; 1 << 20];
        let max = u64::MAX - 1;
        assert_eq!(
            inflated_size(&stream(&["FlateDecode"], zlib(&mb)), max),
            1 << 20
        );
        // Twelve layers: none is left out.
        let mut deep = mb.clone();
        for _ in 0..12 {
            deep = zlib(&deep);
        }
        let filters = ["FlateDecode"; 12];
        assert_eq!(inflated_size(&stream(&filters, deep), max), 1 << 20);
        // A bad zlib header on a later layer: read as raw deflate, as lopdf does.
        let mut e = DeflateEncoder::new(Vec::new(), Compression::fast());
        e.write_all(&mb).unwrap();
        let raw = [b"\0\0".as_slice(), &e.finish().unwrap()].concat();
        let two = stream(&["FlateDecode", "FlateDecode"], zlib(&raw));
        assert_eq!(inflated_size(&two, max), 1 << 20);
        // ASCII85 before Flate.
        let a85 = ascii85_encode(&zlib(&mb));
        assert_eq!(ascii85(&a85), zlib(&mb));
        let chained = stream(&["ASCII85Decode", "FlateDecode"], a85);
        assert_eq!(inflated_size(&chained, max), 1 << 20);
        // A filter lopdf does not support stops the chain, as there.
        assert_eq!(inflated_size(&stream(&["DCTDecode"], zlib(&mb)), max), 0);
    }

    #[test]
    fn lzw_is_measured_and_capped() {
        let data = vec![b'a'; 100_000];
        let mut enc = weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8);
        let packed = enc.encode(&data).unwrap();
        assert_eq!(
            inflated_size(&stream(&["LZWDecode"], packed.clone()), u64::MAX - 1),
            100_000
        );
        assert_eq!(inflated_size(&stream(&["LZWDecode"], packed), 999), 1000);
    }

    #[test]
    fn counting_stops_just_past_the_cap() {
        let big = stream(&["FlateDecode"], zlib(&vec![0; 4 << 20]));
        assert_eq!(inflated_size(&big, 1000), 1001);
    }

    fn ascii85_encode(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for chunk in data.chunks(4) {
            let mut word = [0u8; 4];
            word[..chunk.len()].copy_from_slice(chunk);
            let mut n = u32::from_be_bytes(word);
            let mut digits = [0u8; 5];
            for d in digits.iter_mut().rev() {
                *d = (n % 85) as u8 + b'!';
                n /= 85;
            }
            out.extend_from_slice(&digits[..chunk.len() + 1]);
        }
        out.extend_from_slice(b"~>");
        out
    }
}
