//! Finding markers, and copying content with its markers neutralised: the neutraliser's kernel.
//!
//! Every marker starts with `<u` or `</u` in some casing. So the vector paths look for a hit: a
//! `<` or `/` followed by `u` or `U`. Markup with many `<` (HTML has one every ~30 bytes) rarely
//! has one. A hit is only a candidate: the marker rule,
//! [`marker_at`](crate::marker::marker_at), decides each.
//!
//! Two kernels do the work. [`find_marker`] only reads. [`push_neutralised`] copies as it reads,
//! so fencing is one pass over the content, and the output grows only when a marker appears.
//!
//! - `generic`: the portable path, one `memchr` for `<` at a time.
//! - `vector`: the vector algorithm, written once over a `Vector` trait.
//! - `sse2`, `avx2`: the trait for each x86-64 vector, and the kernels it makes.
//! - `dispatch`: the kernel chosen once per process, under `std`.
//! - `tests`: every path against `fence-reference`, the naive oracle.
//!
//! x86-64 takes the vector paths: SSE2 (always present), or AVX2 when `std` can detect it.
//! Every other target takes the portable path, and so does x86-64 under `--cfg fence_portable`.
//! These files hold the crate's only `unsafe` code.

use alloc::string::String;
use alloc::vec::Vec;

#[cfg(all(target_arch = "x86_64", not(fence_portable)))]
mod avx2;
#[cfg(all(target_arch = "x86_64", not(fence_portable), feature = "std"))]
mod dispatch;
mod generic;
#[cfg(all(target_arch = "x86_64", not(fence_portable)))]
mod sse2;
#[cfg(test)]
mod tests;
#[cfg(all(target_arch = "x86_64", not(fence_portable)))]
mod vector;

pub(crate) use self::generic::ROOM;
use crate::marker::{Marker, MarkerKind};

/// The first marker at or after `from`: the position of its `<`, and its kind.
#[inline]
pub(crate) fn find_marker(hay: &[u8], from: usize) -> Option<(usize, Marker)> {
    #[cfg(all(target_arch = "x86_64", not(fence_portable), feature = "std"))]
    {
        dispatch::find_marker(hay, from)
    }
    // Without `std` there is no run-time detection: SSE2, always present, does the work.
    #[cfg(all(target_arch = "x86_64", not(fence_portable), not(feature = "std")))]
    {
        sse2::find(hay, from)
    }
    #[cfg(not(all(target_arch = "x86_64", not(fence_portable))))]
    {
        generic::find_marker(hay, from)
    }
}

/// Appends `hay[from..]` to `out` with every marker neutralised.
///
/// A marker is decided on `hay[at..]` alone, so where `from` lies does not change which bytes
/// are markers. `out` grows only when a marker appears: with room for the rest of `hay`, `out`
/// is never reallocated for content without one.
#[inline]
pub(crate) fn push_neutralised(out: &mut Vec<u8>, hay: &[u8], from: usize) {
    #[cfg(all(target_arch = "x86_64", not(fence_portable), feature = "std"))]
    {
        dispatch::push_neutralised(out, hay, from);
    }
    #[cfg(all(target_arch = "x86_64", not(fence_portable), not(feature = "std")))]
    {
        sse2::push(out, hay, from);
    }
    #[cfg(not(all(target_arch = "x86_64", not(fence_portable))))]
    {
        generic::push_neutralised(out, hay, from);
    }
}

/// [`push_neutralised`] for text.
///
/// # Panics
///
/// When `from` is not on a character boundary of `content`.
pub(crate) fn push_neutralised_str(out: &mut String, content: &str, from: usize) {
    /// Puts the string back as it was if neutralising panics half way.
    struct Restore<'a> {
        bytes: &'a mut Vec<u8>,
        len: usize,
    }
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            self.bytes.truncate(self.len);
        }
    }

    assert!(
        content.is_char_boundary(from),
        "neutralising must start on a character boundary"
    );
    // SAFETY: what `push_neutralised` appends is `content[from..]`, valid UTF-8 because `from`
    // is a character boundary of a `str`, with the ASCII infix inserted directly after some of
    // its ASCII `<` bytes, which keeps it valid UTF-8. Should anything panic before it is done,
    // `Restore` truncates the string back to the length it had, a character boundary.
    #[allow(unsafe_code, reason = "the kernels write bytes; this is text")]
    let bytes = unsafe { out.as_mut_vec() };
    let restore = Restore {
        len: bytes.len(),
        bytes,
    };
    push_neutralised(restore.bytes, content.as_bytes(), from);
    core::mem::forget(restore);
}
/// Where the live markers of `text` are, in order: the byte offset of each one's `<`, and which
/// marker it is. A neutralised marker is not live, and is not listed.
///
/// The fence's own matcher: a marker is a `<`, an optional `/`, then `untrusted-content` in any
/// ASCII casing, whatever follows. A fenced block has exactly two live markers, its opener at
/// offset 0 and its closer at the end. Any other live marker is content that was not
/// neutralised, or a block's boundary out of place.
///
/// ```
/// use fence_runtime::{live_markers, MarkerKind};
///
/// let text = "<untrusted-content source=tool:t>\nhi </UNTRUSTED-CONTENT> <!MURMUR-NEUTRALISED!/untrusted-content>\n</untrusted-content>";
/// let found: Vec<_> = live_markers(text).collect();
/// assert_eq!(found, [(0, MarkerKind::Opener), (37, MarkerKind::Closer), (99, MarkerKind::Closer)]);
/// assert_eq!(live_markers("plain text").count(), 0);
/// ```
#[must_use]
pub fn live_markers(text: &str) -> LiveMarkers<'_> {
    LiveMarkers {
        text: text.as_bytes(),
        from: 0,
    }
}

/// The live markers of a text, in order: see [`live_markers`].
#[derive(Clone, Debug)]
pub struct LiveMarkers<'a> {
    text: &'a [u8],
    from: usize,
}

impl Iterator for LiveMarkers<'_> {
    type Item = (usize, MarkerKind);

    fn next(&mut self) -> Option<(usize, MarkerKind)> {
        let (at, kind) = find_marker(self.text, self.from)?;
        self.from = at + 1;
        Some((at, kind.into()))
    }
}

impl core::iter::FusedIterator for LiveMarkers<'_> {}
