//! The portable path: one `memchr` for `<` at a time, each `<` decided by the marker rule.
//!
//! Every target can run it. Targets other than x86-64 take it, and so does x86-64 under
//! `--cfg fence_portable`. Elsewhere the tests hold the vector paths to the same oracle.

use alloc::vec::Vec;

use crate::marker::{self, Marker, NEUTRALISED_INFIX};

/// Room for a few markers' infixes when a rewrite starts, and what a kernel asks for beyond the
/// rest of the content whenever the output must grow.
///
/// A rewrite is one pass that grows the output as it goes. Counting the markers first, for an
/// exact size, costs a second pass: about 30% of the time on marker-dense input. (The room also
/// covers the closing separator and marker `fence` appends after the content.)
pub(crate) const ROOM: usize = 4 * NEUTRALISED_INFIX.len();

/// [`find_marker`](super::find_marker) one `<` at a time.
#[cfg_attr(
    all(target_arch = "x86_64", not(fence_portable)),
    allow(dead_code, reason = "x86-64 uses it only in tests, as the reference")
)]
pub(crate) fn find_marker(hay: &[u8], mut from: usize) -> Option<(usize, Marker)> {
    while let Some(offset) = memchr::memchr(b'<', &hay[from..]) {
        let at = from + offset;
        if let Some(kind) = marker::marker_at(hay, at) {
            return Some((at, kind));
        }
        from = at + 1;
    }
    None
}

/// [`push_neutralised`](super::push_neutralised) one marker at a time.
#[cfg_attr(
    all(target_arch = "x86_64", not(fence_portable)),
    allow(dead_code, reason = "x86-64 uses it only in tests, as the reference")
)]
pub(crate) fn push_neutralised(out: &mut Vec<u8>, hay: &[u8], from: usize) {
    let mut copied = from;
    while let Some((at, kind)) = find_marker(hay, copied) {
        out.extend_from_slice(&hay[copied..=at]);
        out.extend_from_slice(NEUTRALISED_INFIX.as_bytes());
        // The name holds no `<`, so no marker starts inside it.
        out.extend_from_slice(&hay[at + 1..at + kind.len()]);
        copied = at + kind.len();
    }
    out.extend_from_slice(&hay[copied..]);
}
