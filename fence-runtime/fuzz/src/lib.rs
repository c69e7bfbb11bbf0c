//! What the fuzz targets share: a deliberately naive reference for the marker rule (DESIGN §2),
//! written from the rule and not from the crate's code, and ways to cut an input into chunks.
//!
//! Everything here is byte-at-a-time and allocates freely: it is the slow, obvious version the
//! fast paths of fence-runtime are held to.

use std::borrow::Cow;

/// The marker name, lowercase.
pub const NAME: &[u8] = b"untrusted-content";
/// What neutralising inserts after a marker's `<`.
pub const INFIX: &[u8] = b"!MURMUR-NEUTRALISED!";
/// The opening marker up to the source name.
pub const OPENER_PREFIX: &str = "<untrusted-content source=";
/// The closing marker.
pub const CLOSER: &str = "</untrusted-content>";
/// The longest proper prefix of a marker: `</untrusted-conten`.
pub const MAX_HELD: usize = 18;

/// Whether a marker starts at `hay[at]`: a `<`, an optional `/`, then `untrusted-content` in any
/// ASCII casing, whatever follows.
pub fn is_marker_at(hay: &[u8], at: usize) -> bool {
    if hay.get(at) != Some(&b'<') {
        return false;
    }
    let mut name = at + 1;
    if hay.get(name) == Some(&b'/') {
        name += 1;
    }
    hay.get(name..name + NAME.len())
        .is_some_and(|spelled| spelled.eq_ignore_ascii_case(NAME))
}

/// Where every marker's `<` is, in order.
pub fn markers(hay: &[u8]) -> Vec<usize> {
    (0..hay.len()).filter(|&at| is_marker_at(hay, at)).collect()
}

/// `hay` with [`INFIX`] inserted after the `<` of every marker.
pub fn neutralise(hay: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(hay.len());
    for (at, &byte) in hay.iter().enumerate() {
        out.push(byte);
        if is_marker_at(hay, at) {
            out.extend_from_slice(INFIX);
        }
    }
    out
}

/// [`neutralise`] for text.
///
/// # Panics
///
/// Never: the infix is ASCII and goes after an ASCII `<`, so text stays text.
pub fn neutralise_str(text: &str) -> String {
    String::from_utf8(neutralise(text.as_bytes())).expect("inserting ASCII after `<` keeps UTF-8")
}

/// Whether `tail` could still become a marker: a proper prefix of `<untrusted-content` or
/// `</untrusted-content` in any ASCII casing.
pub fn is_partial(tail: &[u8]) -> bool {
    [&b"<untrusted-content"[..], b"</untrusted-content"]
        .iter()
        .any(|marker| tail.len() < marker.len() && tail.eq_ignore_ascii_case(&marker[..tail.len()]))
}

/// The end of `hay` that could still become a marker when more input arrives: what a streaming
/// neutraliser must hold back, and nothing more.
pub fn partial_tail(hay: &[u8]) -> &[u8] {
    (hay.len().saturating_sub(MAX_HELD)..hay.len())
        .map(|start| &hay[start..])
        .find(|tail| is_partial(tail))
        .unwrap_or(&[])
}

/// A source name as DESIGN §2 sanitises it: neutralised, then `>` → `_`, CR and LF → space.
pub fn sanitise(name: &str) -> String {
    neutralise_str(name)
        .chars()
        .map(|c| match c {
            '>' => '_',
            '\r' | '\n' => ' ',
            c => c,
        })
        .collect()
}

/// The block `fence` must build, as bytes (content need not be UTF-8).
pub fn block_bytes(source: &str, content: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(OPENER_PREFIX.as_bytes());
    out.extend_from_slice(source.as_bytes());
    out.extend_from_slice(b">\n");
    out.extend_from_slice(&neutralise(content));
    out.push(b'\n');
    out.extend_from_slice(CLOSER.as_bytes());
    out
}

/// The block as text, each invalid UTF-8 sequence replaced with U+FFFD.
pub fn block_text(source: &str, content: &[u8]) -> String {
    match String::from_utf8_lossy(&block_bytes(source, content)) {
        Cow::Borrowed(text) => text.to_owned(),
        Cow::Owned(text) => text,
    }
}

/// How long a chunk a size byte asks for: mostly 0 to 23 bytes (around a marker's length, empty
/// chunks included), sometimes whole multiples of the prefilter's 64-byte block.
pub fn chunk_len(size: u8) -> usize {
    match size {
        0..=191 => usize::from(size % 24),
        _ => 64 * usize::from(size - 191),
    }
}

/// `data` cut into chunks whose lengths cycle through `sizes` (see [`chunk_len`]); empty chunks
/// are kept. The chunks concatenate to `data`.
pub fn split<'a>(data: &'a [u8], sizes: &[u8]) -> Vec<&'a [u8]> {
    let lens: Vec<usize> = sizes.iter().map(|&size| chunk_len(size)).collect();
    let lens = if lens.iter().all(|&len| len == 0) {
        vec![1]
    } else {
        lens
    };
    let mut chunks = Vec::new();
    let mut rest = data;
    let mut next = 0;
    while !rest.is_empty() {
        let (chunk, after) = rest.split_at(lens[next % lens.len()].min(rest.len()));
        chunks.push(chunk);
        rest = after;
        next += 1;
    }
    chunks
}

/// `data` split at its first `0xFF` bytes (a byte that never occurs in UTF-8) into at most `n`
/// parts, each read as text with invalid sequences replaced.
pub fn text_parts(data: &[u8], n: usize) -> Vec<String> {
    data.splitn(n, |&byte| byte == 0xFF)
        .map(|part| String::from_utf8_lossy(part).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_follows_the_rule() {
        assert_eq!(
            neutralise(b"a</UNTRUSTED-contentx<untrusted-conten"),
            b"a<!MURMUR-NEUTRALISED!/UNTRUSTED-contentx<untrusted-conten"
        );
        assert_eq!(markers(b"< /untrusted-content <//untrusted-content"), []);
        assert_eq!(partial_tail(b"x</untrusted-conten"), b"</untrusted-conten");
        assert_eq!(partial_tail(b"x</untrusted-content"), b"");
        assert_eq!(partial_tail(b"x<"), b"<");
        assert_eq!(partial_tail(b"x<a"), b"");
        assert_eq!(
            sanitise("a>\r\n</untrusted-content>"),
            "a_  <!MURMUR-NEUTRALISED!/untrusted-content_"
        );
    }

    #[test]
    fn split_keeps_every_byte() {
        let data: Vec<u8> = (0..=255).collect();
        for sizes in [&[][..], &[0], &[0, 5], &[200, 1, 0], &[23, 255]] {
            assert_eq!(split(&data, sizes).concat(), data);
        }
    }
}
