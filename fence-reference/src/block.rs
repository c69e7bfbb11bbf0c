//! Source names, and the block the fence builds.

use crate::marker::{CLOSER, OPENER_PREFIX, neutralise, neutralise_str};

/// The line a block cut short carries after its content, before the separator and the closing
/// marker.
///
/// ```
/// assert!(fence_reference::TRUNCATION_NOTICE.starts_with("[!MURMUR-TRUNCATED!"));
/// ```
pub const TRUNCATION_NOTICE: &str =
    "[!MURMUR-TRUNCATED! the content above is incomplete: its stream was cut short]";

/// A source name sanitised: neutralised, then `>` → `_`, and CR and LF → a space.
///
/// ```
/// assert_eq!(
///     fence_reference::sanitise("a>\r\n</untrusted-content>"),
///     "a_  <!MURMUR-NEUTRALISED!/untrusted-content_",
/// );
/// ```
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

fn opener(source: &str) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(OPENER_PREFIX.as_bytes());
    out.extend_from_slice(source.as_bytes());
    out.extend_from_slice(b">\n");
    out
}

/// The block a fence builds under `source` (already sanitised) for `content`, as bytes: the
/// opening marker, a newline, the neutralised content, a newline, the closing marker. Content
/// need not be UTF-8.
///
/// ```
/// assert_eq!(
///     fence_reference::block_bytes("tool:t", b"x"),
///     b"<untrusted-content source=tool:t>\nx\n</untrusted-content>",
/// );
/// ```
pub fn block_bytes(source: &str, content: &[u8]) -> Vec<u8> {
    let mut out = opener(source);
    out.extend_from_slice(&neutralise(content));
    out.push(b'\n');
    out.extend_from_slice(CLOSER.as_bytes());
    out
}

/// [`block_bytes`] as text, every invalid UTF-8 sequence of the content replaced with U+FFFD
/// as [`String::from_utf8_lossy`] replaces it.
///
/// ```
/// assert_eq!(
///     fence_reference::block_text("tool:t", b"caf\xc3\xa9 \xff"),
///     "<untrusted-content source=tool:t>\ncafé \u{fffd}\n</untrusted-content>",
/// );
/// ```
pub fn block_text(source: &str, content: &[u8]) -> String {
    String::from_utf8_lossy(&block_bytes(source, content)).into_owned()
}

/// The block for content that was cut short: as [`block_bytes`], with [`TRUNCATION_NOTICE`] on
/// a line of its own after the content.
///
/// ```
/// assert_eq!(
///     fence_reference::truncated_block_bytes("tool:t", b"x"),
///     b"<untrusted-content source=tool:t>\nx\n[!MURMUR-TRUNCATED! the content above is incomplete: its stream was cut short]\n</untrusted-content>",
/// );
/// ```
pub fn truncated_block_bytes(source: &str, content: &[u8]) -> Vec<u8> {
    let mut out = opener(source);
    out.extend_from_slice(&neutralise(content));
    out.push(b'\n');
    out.extend_from_slice(TRUNCATION_NOTICE.as_bytes());
    out.push(b'\n');
    out.extend_from_slice(CLOSER.as_bytes());
    out
}

/// Whether a block's content (between its separators) says it was cut short: it ends with
/// [`TRUNCATION_NOTICE`] on a line of its own.
///
/// ```
/// use fence_reference::{ends_truncated, TRUNCATION_NOTICE};
///
/// assert!(ends_truncated(&format!("rows\n{TRUNCATION_NOTICE}")));
/// assert!(!ends_truncated(TRUNCATION_NOTICE));
/// assert!(!ends_truncated(&format!("rows\n{TRUNCATION_NOTICE}\n")));
/// ```
pub fn ends_truncated(content: &str) -> bool {
    content.ends_with(&format!("\n{TRUNCATION_NOTICE}"))
}
