//! Neutralising content that arrives in chunks.

use alloc::string::String;
use alloc::vec::Vec;

use crate::marker::{self, MAX_PARTIAL, Marker, NEUTRALISED_INFIX, Recognised};
use crate::scan;

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
/// neutraliser.push_bytes(b"ok </untrus", &mut out);
/// assert_eq!(out, b"ok "); // `</untrus` is held back: it may yet become a marker
/// neutraliser.push_bytes(b"ted-content> bye", &mut out);
/// neutraliser.finish_bytes(&mut out);
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
    #[must_use]
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
    /// neutraliser.push_bytes(b"<UNTRUSTED-CONTENT", &mut out);
    /// assert_eq!(out, b"<!MURMUR-NEUTRALISED!UNTRUSTED-CONTENT");
    /// ```
    pub fn push_bytes(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        if self.passes_through(chunk) {
            out.extend_from_slice(chunk);
            return;
        }
        out.reserve(self.held_len + chunk.len());
        if self.resolve_held(chunk, |bytes| out.extend_from_slice(bytes)) {
            return;
        }
        let cut = self.hold_tail(chunk);
        // One pass that copies while it looks for markers.
        scan::push_neutralised(out, &chunk[..cut], 0);
    }

    /// [`push_bytes`](Self::push_bytes) for text: the output stays a `String`, with no UTF-8
    /// check.
    ///
    /// A chunk of text always ends on a character boundary, and the bytes held back are ASCII
    /// (a prefix of a marker), so text in gives text out, however it is split.
    ///
    /// ```
    /// use fence_runtime::Neutraliser;
    ///
    /// let mut neutraliser = Neutraliser::new();
    /// let mut out = String::new();
    /// neutraliser.push_str("café </untrus", &mut out);
    /// neutraliser.push_str("ted-content>", &mut out);
    /// neutraliser.finish_str(&mut out);
    /// assert_eq!(out, "café <!MURMUR-NEUTRALISED!/untrusted-content>");
    /// ```
    pub fn push_str(&mut self, chunk: &str, out: &mut String) {
        if self.passes_through(chunk.as_bytes()) {
            out.push_str(chunk);
            return;
        }
        out.reserve(self.held_len + chunk.len());
        if self.resolve_held(chunk.as_bytes(), |ascii| push_ascii(out, ascii)) {
            return;
        }
        // The cut is at a `<`, so on a character boundary. One pass that copies while it looks
        // for markers.
        let chunk = &chunk[..self.hold_tail(chunk.as_bytes())];
        scan::push_neutralised_str(out, chunk, 0);
    }

    /// Whether `chunk` goes out as it is: nothing is held back, and it has no `<`, so it can
    /// neither start a marker nor end one. Renderers such as `serde_json` write many short
    /// pieces; this keeps each of them to one `memchr`.
    #[inline]
    fn passes_through(&self, chunk: &[u8]) -> bool {
        self.held_len == 0 && memchr::memchr(b'<', chunk).is_none()
    }

    /// How much of the start of `chunk` neutralising passes through as it is, whatever comes
    /// after `chunk`: the bytes before its first marker and before a partial marker at its end.
    /// Zero while bytes are held back. A writer can hand those bytes on without copying them,
    /// then push the rest, in the same state as if it had pushed them.
    #[cfg(feature = "std")]
    pub(crate) fn clean_prefix(&self, chunk: &[u8]) -> usize {
        if self.held_len > 0 {
            return 0;
        }
        let end = marker::partial_tail(chunk).unwrap_or(chunk.len());
        scan::find_marker(&chunk[..end], 0).map_or(end, |(at, _)| at)
    }

    /// Decides the held marker prefix, if there is one, with the first bytes of `chunk`, and
    /// emits it: neutralised when those bytes complete a marker, as it is when they do not.
    /// Returns `true` when `chunk` was too short to decide, and is now held too.
    fn resolve_held(&mut self, chunk: &[u8], mut emit: impl FnMut(&[u8])) -> bool {
        let held = self.held_len;
        if held == 0 {
            return false;
        }
        // The held bytes are a partial marker, so they begin with its `<` and hold no other:
        // only that `<` waits for a decision, and the next few bytes make it.
        let mut joined = [0; MAX_PARTIAL + 1];
        let take = chunk.len().min(joined.len() - held);
        joined[..held].copy_from_slice(&self.held[..held]);
        joined[held..held + take].copy_from_slice(&chunk[..take]);
        match marker::recognise(&joined[..held + take]) {
            Recognised::NeedMore => {
                // Still undecided, so all of `chunk` was taken and is held.
                self.held[..held + take].copy_from_slice(&joined[..held + take]);
                self.held_len = held + take;
                return true;
            }
            Recognised::Marker(_) => {
                emit(b"<");
                emit(NEUTRALISED_INFIX.as_bytes());
                emit(&self.held[1..held]);
            }
            Recognised::NotMarker => emit(&self.held[..held]),
        }
        self.held_len = 0;
        false
    }

    /// Holds back a partial marker at the end of `chunk`, and says where it starts (or the
    /// chunk's length). A marker that starts before that point ends before it: a marker holds
    /// no `<` after its first byte, and the held bytes start with one.
    fn hold_tail(&mut self, chunk: &[u8]) -> usize {
        match marker::partial_tail(chunk) {
            Some(cut) => {
                self.held_len = chunk.len() - cut;
                self.held[..self.held_len].copy_from_slice(&chunk[cut..]);
                cut
            }
            None => chunk.len(),
        }
    }

    /// Emits the bytes held back as they are, when the input goes on with a byte that is not
    /// ASCII: a marker's bytes all are, so the held bytes begin no marker.
    pub(crate) fn release_before_non_ascii(&mut self, out: &mut String) {
        push_ascii(out, self.held());
        self.held_len = 0;
    }

    /// Writes the bytes still held back: at the end of the input a partial marker is not one.
    ///
    /// ```
    /// use fence_runtime::Neutraliser;
    ///
    /// let mut neutraliser = Neutraliser::new();
    /// let mut out = Vec::new();
    /// neutraliser.push_bytes(b"tail </untrusted-conten", &mut out);
    /// neutraliser.finish_bytes(&mut out);
    /// assert_eq!(out, b"tail </untrusted-conten");
    /// ```
    pub fn finish_bytes(self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.held());
    }

    /// [`finish_bytes`](Self::finish_bytes) for text.
    ///
    /// ```
    /// use fence_runtime::Neutraliser;
    ///
    /// let mut neutraliser = Neutraliser::new();
    /// let mut out = String::new();
    /// neutraliser.push_str("<", &mut out);
    /// neutraliser.finish_str(&mut out);
    /// assert_eq!(out, "<");
    /// ```
    pub fn finish_str(self, out: &mut String) {
        push_ascii(out, self.held());
    }

    /// The bytes held back because they could still begin a marker: never more than 18.
    ///
    /// ```
    /// use fence_runtime::Neutraliser;
    ///
    /// let mut neutraliser = Neutraliser::new();
    /// neutraliser.push_bytes(b"x <", &mut Vec::new());
    /// assert_eq!(neutraliser.held(), b"<");
    /// ```
    #[must_use]
    pub fn held(&self) -> &[u8] {
        &self.held[..self.held_len]
    }
}

/// Appends bytes known to be ASCII (the infix, or a held marker prefix) to text.
fn push_ascii(out: &mut String, ascii: &[u8]) {
    debug_assert!(ascii.is_ascii());
    out.extend(ascii.iter().map(|&byte| char::from(byte)));
}

// The longest marker prefix fits in the held buffer, and one more byte always decides it.
const _: () = assert!(Marker::Closer.len() == MAX_PARTIAL + 1);
