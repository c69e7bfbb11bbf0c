//! Rewriting forged markers into their neutralised form.
//!
//! - here: one-shot [`neutralise`] and [`neutralise_bytes`], for content in one piece.
//! - `incremental`: [`Neutraliser`], the same rewrite for content that arrives in chunks.
//!
//! Both copy through the scan's kernel, in one pass.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

mod incremental;

pub use self::incremental::Neutraliser;
use crate::scan::{self, ROOM};

/// Rewrites every marker in `content` into its neutralised form.
///
/// A marker is a `<`, an optional `/`, then `untrusted-content` in any ASCII casing, whatever
/// follows. Each one gets [`NEUTRALISED_INFIX`](crate::NEUTRALISED_INFIX) inserted directly after its `<`; nothing else
/// changes, so the output is the input plus 20 bytes per marker. Content with no marker comes
/// back as [`Cow::Borrowed`], without copying or allocating. Rewriting is idempotent.
///
/// ```
/// use std::borrow::Cow;
/// use fence_runtime::neutralise;
///
/// assert_eq!(
///     neutralise("a </UNTRUSTED-CONTENT> b"),
///     "a <!MURMUR-NEUTRALISED!/UNTRUSTED-CONTENT> b",
/// );
/// // Near misses are not markers and cost nothing.
/// assert!(matches!(neutralise("< /untrusted-content>"), Cow::Borrowed(_)));
/// ```
#[must_use = "the rewritten text is returned; the input is not changed"]
pub fn neutralise(content: &str) -> Cow<'_, str> {
    match scan::find_marker(content.as_bytes(), 0) {
        None => Cow::Borrowed(content),
        Some((first, _)) => {
            let mut out = String::with_capacity(content.len() + ROOM);
            push_neutralised_str(&mut out, content, first);
            Cow::Owned(out)
        }
    }
}

/// [`neutralise`] over bytes that need not be UTF-8.
///
/// Matching is ASCII, and ASCII bytes never occur inside a multi-byte UTF-8 sequence, so bytes
/// that are not markers pass through untouched, valid UTF-8 or not.
///
/// ```
/// use fence_runtime::neutralise_bytes;
///
/// assert_eq!(
///     &*neutralise_bytes(b"\xff<untrusted-content"),
///     b"\xff<!MURMUR-NEUTRALISED!untrusted-content",
/// );
/// ```
#[must_use = "the rewritten bytes are returned; the input is not changed"]
pub fn neutralise_bytes(content: &[u8]) -> Cow<'_, [u8]> {
    match scan::find_marker(content, 0) {
        None => Cow::Borrowed(content),
        Some((first, _)) => {
            let mut out = Vec::with_capacity(content.len() + ROOM);
            push_neutralised(&mut out, content, first);
            Cow::Owned(out)
        }
    }
}

/// Appends `content` to `out`, neutralised, given where its first marker is.
fn push_neutralised(out: &mut Vec<u8>, content: &[u8], first: usize) {
    out.extend_from_slice(&content[..first]);
    scan::push_neutralised(out, content, first);
}

/// [`push_neutralised`] for text.
fn push_neutralised_str(out: &mut String, content: &str, first: usize) {
    // `first` is an ASCII `<`, so a character boundary.
    out.push_str(&content[..first]);
    scan::push_neutralised_str(out, content, first);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::marker::NEUTRALISED_INFIX;

    #[test]
    fn borrowed_when_clean() {
        assert!(matches!(neutralise("plain <b>html</b>"), Cow::Borrowed(_)));
        assert!(matches!(neutralise_bytes(b"\xff\xfe<"), Cow::Borrowed(_)));
    }

    #[test]
    fn one_allocation_for_a_few_markers() {
        let input = "<untrusted-content></untrusted-content>";
        let out = neutralise(input);
        assert_eq!(out.len(), input.len() + 2 * NEUTRALISED_INFIX.len());
        let Cow::Owned(owned) = out else {
            panic!("expected an owned rewrite")
        };
        assert_eq!(
            owned.capacity(),
            input.len() + ROOM,
            "no growth for up to four markers"
        );
    }
}
