//! A PDF's decompressed size, measured before lopdf parses it.
//!
//! lopdf inflates a stream whole and without bound: the object streams while it loads the
//! file, a page's content streams while it extracts the text. A crafted file of a few
//! megabytes can inflate to many gigabytes (a decompression bomb) and take the process down.
//! [`inflated_size`] walks the raw file for streams, inflates each one's `FlateDecode`
//! layers into nothing but a counter, and stops once the total passes a limit, so what
//! lopdf would allocate is known before it does.
//!
//! What it measures: every stream whose filters are all `FlateDecode` (one or more layers),
//! images excepted (lopdf does not inflate them to extract text), with the raw-deflate retry
//! lopdf makes when the zlib header is bad. What it does not: streams under other filters
//! (LZW, or ASCII85 before Flate), which crafted files rarely use and lopdf handles as it
//! does. The scan is lexical (no object parsing): a stream keyword inside binary data may
//! be taken for one, which can only count more, never less.

use std::io::{self, Read};

use flate2::read::{DeflateDecoder, ZlibDecoder};
use memchr::memmem;

/// How far back from a `stream` keyword its dictionary is looked for.
const DICT_WINDOW: usize = 64 * 1024;
/// Layers of `FlateDecode` followed on one stream at most.
const MAX_LAYERS: usize = 8;

/// The bytes the Flate-encoded, non-image streams of `pdf` inflate to, counted up to just
/// past `limit` (a result over `limit` means "at least that much").
pub(crate) fn inflated_size(pdf: &[u8], limit: u64) -> u64 {
    let mut total = 0u64;
    for at in memmem::find_iter(pdf, b"stream") {
        if total > limit {
            break;
        }
        let Some(data_start) = stream_data_start(pdf, at) else {
            continue;
        };
        let dict = &pdf[dict_start(pdf, at)..at];
        let Some(layers) = flate_layers(dict) else {
            continue;
        };
        if is_image(dict) {
            continue;
        }
        total += layered_size(&pdf[data_start..], layers, limit - total + 1);
    }
    total
}

/// Where a stream's data begins when `at` is the keyword `stream` that opens one (not the
/// end of `endstream`): after its end-of-line.
fn stream_data_start(pdf: &[u8], at: usize) -> Option<usize> {
    if pdf[..at].ends_with(b"end") {
        return None;
    }
    let after = at + b"stream".len();
    match pdf.get(after..)? {
        [b'\r', b'\n', ..] => Some(after + 2),
        [b'\n' | b'\r', ..] => Some(after + 1),
        _ => None,
    }
}

/// The start of the dictionary of the stream whose keyword is at `at`: just after the last
/// `obj` before it (the object's own header), within [`DICT_WINDOW`].
fn dict_start(pdf: &[u8], at: usize) -> usize {
    let from = at.saturating_sub(DICT_WINDOW);
    memmem::rfind(&pdf[from..at], b"obj").map_or(from, |i| from + i + 3)
}

/// The number of `FlateDecode` layers when the stream's filters are all Flate; `None` for
/// no filter or any other.
fn flate_layers(dict: &[u8]) -> Option<usize> {
    let at = memmem::rfind(dict, b"/Filter")?;
    let rest = &dict[at + b"/Filter".len()..];
    // The filter value: one name, or an array of names.
    let rest = trim_start(rest);
    let value = if rest.first() == Some(&b'[') {
        &rest[1..rest.iter().position(|&b| b == b']')?]
    } else {
        let end = rest
            .iter()
            .skip(1)
            .position(|&b| b == b'/' || b == b'>' || b.is_ascii_whitespace())
            .map_or(rest.len(), |i| i + 1);
        &rest[..end]
    };
    let names: Vec<&[u8]> = value
        .split(|&b| b == b'/' || b.is_ascii_whitespace())
        .filter(|n| !n.is_empty())
        .collect();
    if names.is_empty() || !names.iter().all(|n| *n == b"FlateDecode" || *n == b"Fl") {
        return None;
    }
    Some(names.len().min(MAX_LAYERS))
}

fn trim_start(bytes: &[u8]) -> &[u8] {
    let skip = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    &bytes[skip..]
}

fn is_image(dict: &[u8]) -> bool {
    memmem::find_iter(dict, b"/Subtype").any(|at| {
        let rest = trim_start(&dict[at + b"/Subtype".len()..]);
        rest.starts_with(b"/Image")
    })
}

/// What `data` inflates to through `layers` zlib layers, counted up to `cap`. As lopdf does,
/// a first layer whose zlib header is bad (nothing comes out) is read again as raw deflate.
fn layered_size(data: &[u8], layers: usize, cap: u64) -> u64 {
    let zlib = count(chain(Box::new(ZlibDecoder::new(data)), layers), cap);
    if zlib > 0 || data.len() <= 2 {
        return zlib;
    }
    count(
        chain(Box::new(DeflateDecoder::new(&data[2..])), layers),
        cap,
    )
}

fn chain<'a>(first: Box<dyn Read + 'a>, layers: usize) -> Box<dyn Read + 'a> {
    (1..layers).fold(first, |inner, _| Box::new(ZlibDecoder::new(inner)))
}

/// Bytes read from `reader` until its end, an error (lopdf keeps what came before one), or
/// `cap`.
fn count(reader: Box<dyn Read + '_>, cap: u64) -> u64 {
    let mut sink = Counter(0);
    let _ = io::copy(&mut reader.take(cap), &mut sink);
    sink.0
}

/// A sink that only counts.
struct Counter(u64);

impl io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
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

    use super::*;

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut e = ZlibEncoder::new(Vec::new(), Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn object(dict: &str, data: &[u8]) -> Vec<u8> {
        let mut out =
            format!("7 0 obj\n<< /Length {} {dict} >>\nstream\r\n", data.len()).into_bytes();
        out.extend_from_slice(data);
        out.extend_from_slice(b"\nendstream\nendobj\n");
        out
    }

    #[test]
    fn counts_each_flate_layer_and_skips_images_and_other_filters() {
        let mb = vec![b' '; 1 << 20];
        let one = object("/Filter /FlateDecode", &zlib(&mb));
        assert_eq!(inflated_size(&one, u64::MAX - 1), 1 << 20);
        let two = object("/Filter [/FlateDecode /Fl]", &zlib(&zlib(&mb)));
        assert_eq!(inflated_size(&two, u64::MAX - 1), 1 << 20);
        let image = object("/Subtype /Image /Filter /FlateDecode", &zlib(&mb));
        assert_eq!(inflated_size(&image, u64::MAX - 1), 0);
        let other = object("/Filter [/ASCII85Decode /FlateDecode]", &zlib(&mb));
        assert_eq!(inflated_size(&other, u64::MAX - 1), 0);
        let plain = object("", &mb);
        assert_eq!(inflated_size(&plain, u64::MAX - 1), 0);
        let all = [one, two, image, plain].concat();
        assert_eq!(inflated_size(&all, u64::MAX - 1), 2 << 20);
    }

    #[test]
    fn a_bad_zlib_header_is_read_as_raw_deflate_as_lopdf_does() {
        let mut e = DeflateEncoder::new(Vec::new(), Compression::fast());
        e.write_all(&[b'x'; 5000]).unwrap();
        let data = [b"\0\0".as_slice(), &e.finish().unwrap()].concat();
        let bad = object("/Filter /FlateDecode", &data);
        assert_eq!(inflated_size(&bad, u64::MAX - 1), 5000);
    }

    #[test]
    fn counting_stops_just_past_the_limit() {
        let big = object("/Filter /FlateDecode", &zlib(&vec![0; 4 << 20]));
        let pdf = [big.clone(), big].concat();
        assert_eq!(inflated_size(&pdf, 1000), 1001);
        assert_eq!(inflated_size(&pdf, (5 << 20) - 1), 5 << 20);
    }
}
