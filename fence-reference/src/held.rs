//! What a streaming fence may hold back: the bytes it cannot decide yet.

use crate::marker::NAME;

/// The longest proper prefix of a marker, `</untrusted-conten`: the most a streaming
/// neutraliser ever holds back.
///
/// ```
/// assert_eq!(fence_reference::MAX_HELD, "</untrusted-conten".len());
/// ```
pub const MAX_HELD: usize = 18;

/// Whether `tail` could still grow into a marker: a `<`, an optional `/`, then a proper prefix
/// of [`NAME`] in any ASCII casing.
///
/// ```
/// use fence_reference::is_partial;
///
/// assert!(is_partial(b"<"));
/// assert!(is_partial(b"</UNTRUSTED-conten"));
/// assert!(!is_partial(b"</untrusted-content")); // already a marker
/// assert!(!is_partial(b"<x"));
/// assert!(!is_partial(b"x<"));
/// ```
pub fn is_partial(tail: &[u8]) -> bool {
    let Some(rest) = tail.strip_prefix(b"<") else {
        return false;
    };
    let name = rest.strip_prefix(b"/").unwrap_or(rest);
    name.len() < NAME.len()
        && name
            .iter()
            .zip(NAME.as_bytes())
            .all(|(&byte, &letter)| byte.to_ascii_lowercase() == letter)
}

/// The longest suffix of `hay` that could still begin a marker when more input arrives: what a
/// streaming neutraliser that has seen `hay` must hold back, and nothing more. A marker
/// prefix is shorter than a marker, so only the last [`MAX_HELD`] bytes are looked at.
///
/// ```
/// use fence_reference::partial_tail;
///
/// assert_eq!(partial_tail(b"x</untrusted-conten"), b"</untrusted-conten");
/// assert_eq!(partial_tail(b"x</untrusted-content"), b"");
/// assert_eq!(partial_tail(b"a<b<"), b"<");
/// assert_eq!(partial_tail(b"x<a"), b"");
/// ```
pub fn partial_tail(hay: &[u8]) -> &[u8] {
    (hay.len().saturating_sub(MAX_HELD)..hay.len())
        .map(|start| &hay[start..])
        .find(|tail| is_partial(tail))
        .unwrap_or(&[])
}

/// What a fence that checks bytes as UTF-8 (a `FenceBuffer`) must hold back once it has been
/// given `seen`: the start of a character not yet complete at the very end, or else
/// [`partial_tail`]. Never both: the bytes of a character are not ASCII, so one that begins
/// after a marker prefix decides that the prefix is no marker.
///
/// ```
/// use fence_reference::buffer_held;
///
/// assert_eq!(buffer_held(b"x </untrus"), b"</untrus");
/// assert_eq!(buffer_held(b"x </untrus\xf0\x9f"), b"\xf0\x9f");
/// assert_eq!(buffer_held(b"\xf0\x9f<"), b"<");
/// assert_eq!(buffer_held(b"\xf0\x9f\xa6\x80"), b"");
/// assert_eq!(buffer_held(b"\xf0\x9f!"), b"");
/// assert_eq!(buffer_held(b"\xff"), b"");
/// ```
pub fn buffer_held(seen: &[u8]) -> &[u8] {
    if let Some(last) = seen.utf8_chunks().last() {
        let invalid = last.invalid();
        // `utf8_chunks` gives a sequence cut short by the end of the input whole, as the
        // invalid part of the last chunk; `from_utf8` says whether more bytes could end it.
        let incomplete =
            matches!(std::str::from_utf8(invalid), Err(err) if err.error_len().is_none());
        if !invalid.is_empty() && incomplete {
            return &seen[seen.len() - invalid.len()..];
        }
    }
    partial_tail(seen)
}
