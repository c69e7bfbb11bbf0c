//! Neutralising content that arrives in chunks.

use alloc::vec::Vec;

use crate::marker::{self, MAX_PARTIAL, Marker, Recognised};
use crate::neutralise::{NEUTRALISED_INFIX, push_neutralised};

/// An incremental neutraliser for content that arrives in chunks.
///
/// A forged marker can be split across chunks (`</untrus` + `ted-content>`), and neutralising
/// each chunk on its own misses it. A `Neutraliser` holds back only the bytes that could still
/// begin a marker — at most 18, the length of `</untrusted-conten` — and writes everything else
/// at once. However the input is split, the concatenated output equals
/// [`neutralise_bytes`](crate::neutralise_bytes) of the whole input.
///
/// ```
/// use fence_runtime::{Neutraliser, neutralise_bytes};
///
/// let mut neutraliser = Neutraliser::new();
/// let mut out = Vec::new();
/// neutraliser.push(b"ok </untrus", &mut out);
/// assert_eq!(out, b"ok "); // `</untrus` is held back: it may yet become a marker
/// neutraliser.push(b"ted-content> bye", &mut out);
/// neutraliser.finish(&mut out);
/// assert_eq!(out, &*neutralise_bytes(b"ok </untrusted-content> bye"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Neutraliser {
    held: [u8; MAX_PARTIAL],
    held_len: usize,
}

impl Neutraliser {
    /// A neutraliser at the start of its input.
    ///
    /// ```
    /// assert!(fence_runtime::Neutraliser::new().held().is_empty());
    /// ```
    pub const fn new() -> Neutraliser {
        Neutraliser {
            held: [0; MAX_PARTIAL],
            held_len: 0,
        }
    }

    /// Neutralises the next chunk of input into `out`, holding back a trailing partial marker.
    ///
    /// ```
    /// use fence_runtime::Neutraliser;
    ///
    /// let mut neutraliser = Neutraliser::new();
    /// let mut out = Vec::new();
    /// neutraliser.push(b"<UNTRUSTED-CONTENT", &mut out);
    /// assert_eq!(out, b"<!MURMUR-NEUTRALISED!UNTRUSTED-CONTENT");
    /// ```
    pub fn push(&mut self, mut chunk: &[u8], out: &mut Vec<u8>) {
        out.reserve(self.held_len + chunk.len());
        if self.held_len > 0 {
            // The held bytes are a partial marker, so they begin with its `<` and hold no other:
            // only that `<` waits for a decision, and the next few bytes make it.
            let mut joined = [0; MAX_PARTIAL + 1];
            let held = self.held_len;
            let take = chunk.len().min(joined.len() - held);
            joined[..held].copy_from_slice(&self.held[..held]);
            joined[held..held + take].copy_from_slice(&chunk[..take]);
            match marker::recognise(&joined[..held + take]) {
                Recognised::NeedMore => {
                    // Still undecided, so all of `chunk` was taken and is held.
                    self.held[..held + take].copy_from_slice(&joined[..held + take]);
                    self.held_len = held + take;
                    return;
                }
                Recognised::Marker(_) => {
                    out.push(b'<');
                    out.extend_from_slice(NEUTRALISED_INFIX.as_bytes());
                    out.extend_from_slice(&self.held[1..held]);
                }
                Recognised::NotMarker => out.extend_from_slice(&self.held[..held]),
            }
            self.held_len = 0;
        }
        if let Some(cut) = marker::partial_tail(chunk) {
            self.held_len = chunk.len() - cut;
            self.held[..self.held_len].copy_from_slice(&chunk[cut..]);
            chunk = &chunk[..cut];
        }
        // A marker that starts before `cut` ends before it: a marker holds no `<` after its first
        // byte, and `chunk[cut]` is one.
        match marker::next_marker(chunk, 0) {
            None => out.extend_from_slice(chunk),
            Some((first, _)) => push_neutralised(out, chunk, first),
        }
    }

    /// Writes the bytes still held back: at the end of the input a partial marker is not one.
    ///
    /// ```
    /// use fence_runtime::Neutraliser;
    ///
    /// let mut neutraliser = Neutraliser::new();
    /// let mut out = Vec::new();
    /// neutraliser.push(b"tail </untrusted-conten", &mut out);
    /// neutraliser.finish(&mut out);
    /// assert_eq!(out, b"tail </untrusted-conten");
    /// ```
    pub fn finish(self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.held());
    }

    /// The bytes held back because they could still begin a marker: never more than 18.
    ///
    /// ```
    /// use fence_runtime::Neutraliser;
    ///
    /// let mut neutraliser = Neutraliser::new();
    /// neutraliser.push(b"x <", &mut Vec::new());
    /// assert_eq!(neutraliser.held(), b"<");
    /// ```
    pub fn held(&self) -> &[u8] {
        &self.held[..self.held_len]
    }
}

// The longest marker prefix fits in the held buffer, and one more byte always decides it.
const _: () = assert!(Marker::Closer.len() == MAX_PARTIAL + 1);
