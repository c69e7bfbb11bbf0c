//! The one place that says what a marker is, and the constants it spells.
//!
//! The rule: a `<`, an optional `/`, then `untrusted-content` compared ASCII-case-insensitively,
//! whatever follows the name. The neutraliser, the streaming neutraliser, the parser and every
//! checker call [`marker_at`] or [`recognise`]. Two lists of what counts as a marker that
//! disagree are how sanitisers get bypassed. The scan only proposes candidates; this module
//! decides.

/// The marker name, lowercase.
pub(crate) const NAME: &[u8; 17] = b"untrusted-content";

/// The text inserted directly after the `<` of a marker found in content.
///
/// ```
/// assert_eq!(fence_runtime::NEUTRALISED_INFIX, "!MURMUR-NEUTRALISED!");
/// ```
pub const NEUTRALISED_INFIX: &str = "!MURMUR-NEUTRALISED!";

/// The opening marker up to its source name: a block starts with this, the source, `>` and a
/// newline.
///
/// ```
/// let block = fence_runtime::fence(&fence_runtime::Source::tool("t"), "x");
/// assert!(block.as_str().starts_with(fence_runtime::OPENING_MARKER_PREFIX));
/// ```
pub const OPENING_MARKER_PREFIX: &str = "<untrusted-content source=";

/// The closing marker: a block ends with a newline and this.
///
/// ```
/// let block = fence_runtime::fence(&fence_runtime::Source::tool("t"), "x");
/// assert!(block.as_str().ends_with(fence_runtime::CLOSING_MARKER));
/// ```
pub const CLOSING_MARKER: &str = "</untrusted-content>";

/// The longest prefix of a marker that is not yet a marker (`</untrusted-conten`): the most a
/// streaming neutraliser ever has to hold back.
pub(crate) const MAX_PARTIAL: usize = 2 + NAME.len() - 1;

/// Which marker a `<` starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Marker {
    /// `<untrusted-content…`
    Opener,
    /// `</untrusted-content…`
    Closer,
}

impl Marker {
    /// Bytes from the `<` to the end of the name.
    pub(crate) const fn len(self) -> usize {
        match self {
            Marker::Opener => 1 + NAME.len(),
            Marker::Closer => 2 + NAME.len(),
        }
    }
}

/// Which marker a live marker is: what [`live_markers`](crate::live_markers) reports.
///
/// ```
/// assert_eq!(fence_runtime::MarkerKind::Closer.to_string(), "closing");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MarkerKind {
    /// `<untrusted-content…`
    Opener,
    /// `</untrusted-content…`
    Closer,
}

impl core::fmt::Display for MarkerKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            MarkerKind::Opener => "opening",
            MarkerKind::Closer => "closing",
        })
    }
}

impl From<Marker> for MarkerKind {
    fn from(marker: Marker) -> MarkerKind {
        match marker {
            Marker::Opener => MarkerKind::Opener,
            Marker::Closer => MarkerKind::Closer,
        }
    }
}

/// What the bytes starting at a `<` are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Recognised {
    /// A marker, whatever follows its name.
    Marker(Marker),
    /// Not a marker, whatever follows.
    NotMarker,
    /// A proper prefix of a marker: the bytes that follow decide.
    NeedMore,
}

/// Classifies the bytes of `at_lt`, which start with a `<`.
#[inline]
pub(crate) fn recognise(at_lt: &[u8]) -> Recognised {
    debug_assert_eq!(at_lt.first(), Some(&b'<'));
    let (kind, name) = match at_lt.get(1) {
        None => return Recognised::NeedMore,
        Some(b'/') => (Marker::Closer, &at_lt[2..]),
        Some(_) => (Marker::Opener, &at_lt[1..]),
    };
    if let Some(whole) = name.first_chunk::<{ NAME.len() }>() {
        return if is_name(whole) {
            Recognised::Marker(kind)
        } else {
            Recognised::NotMarker
        };
    }
    if name.eq_ignore_ascii_case(&NAME[..name.len()]) {
        Recognised::NeedMore
    } else {
        Recognised::NotMarker
    }
}

/// `bytes.eq_ignore_ascii_case(NAME)`, sixteen bytes at a time.
#[inline]
fn is_name(bytes: &[u8; NAME.len()]) -> bool {
    name_difference(bytes) == 0
}

/// Zero exactly when `bytes.eq_ignore_ascii_case(NAME)`: every byte of the name but its `-` is a
/// letter, and `byte | 0x20` equals a lowercase letter exactly when `byte` is that letter in
/// either case. One value, not a chain of `&&`, so that deciding costs no branch.
#[inline]
fn name_difference(bytes: &[u8; NAME.len()]) -> u128 {
    const HEAD: u128 = u128::from_le_bytes(*b"untrusted-conten");
    const FOLD: u128 = {
        let mut fold = [0x20; 16];
        fold[b"untrusted".len()] = 0; // the `-` is compared as it is
        u128::from_le_bytes(fold)
    };
    let (head, last) = bytes.split_first_chunk::<16>().expect("seventeen bytes");
    ((u128::from_le_bytes(*head) | FOLD) ^ HEAD) | u128::from((last[0] | 0x20) ^ NAME[16])
}

/// The longest a marker is: `</untrusted-content`. Its first [`WINDOW`] bytes decide whether
/// any marker starts at a position.
pub(crate) const WINDOW: usize = 2 + NAME.len();

/// The marker at the start of `window`, if one starts there.
///
/// Computed as one difference, without a branch on the `<`, the `/` or the name: the vector
/// kernels call this on candidates in random order (openers and closers, markers and near
/// misses), where every branch mispredicts.
#[inline]
pub(crate) fn marker_in(window: &[u8; WINDOW]) -> Option<Marker> {
    let slash = window[1] == b'/';
    let start = 1 + usize::from(slash);
    let name = window[start..]
        .first_chunk::<{ NAME.len() }>()
        .expect("the window holds the name after an optional `/`");
    let difference = name_difference(name) | u128::from(window[0] ^ b'<');
    (difference == 0).then_some(if slash {
        Marker::Closer
    } else {
        Marker::Opener
    })
}

/// The marker starting at `hay[at]`, if one does, treating the end of `hay` as the end of
/// input.
#[inline]
pub(crate) fn marker_at(hay: &[u8], at: usize) -> Option<Marker> {
    if let Some(window) = hay.get(at..).and_then(<[u8]>::first_chunk) {
        return marker_in(window);
    }
    if hay.get(at) != Some(&b'<') {
        return None;
    }
    match recognise(&hay[at..]) {
        Recognised::Marker(kind) => Some(kind),
        Recognised::NotMarker | Recognised::NeedMore => None,
    }
}

/// The position of the last marker's `<` that starts before `end`.
#[inline]
pub(crate) fn prev_marker(hay: &[u8], mut end: usize) -> Option<(usize, Marker)> {
    while let Some(at) = memchr::memrchr(b'<', &hay[..end]) {
        if let Some(kind) = marker_at(hay, at) {
            return Some((at, kind));
        }
        end = at;
    }
    None
}

/// Where a partial marker starts in the last [`MAX_PARTIAL`] bytes of `hay`, if one does: the
/// bytes from there on could still become a marker when more input arrives.
pub(crate) fn partial_tail(hay: &[u8]) -> Option<usize> {
    let window = hay.len().saturating_sub(MAX_PARTIAL);
    // A partial marker holds no `<` after its first byte, so only the last `<` can start one.
    let at = window + memchr::memrchr(b'<', &hay[window..])?;
    (recognise(&hay[at..]) == Recognised::NeedMore).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_both_markers_whatever_follows() {
        assert_eq!(
            recognise(b"<untrusted-content"),
            Recognised::Marker(Marker::Opener)
        );
        assert_eq!(
            recognise(b"</UnTrusted-Contents"),
            Recognised::Marker(Marker::Closer)
        );
        assert_eq!(recognise(b"</untrusted-conten"), Recognised::NeedMore);
        assert_eq!(recognise(b"<"), Recognised::NeedMore);
        assert_eq!(recognise(b"</"), Recognised::NeedMore);
        assert_eq!(recognise(b"< /untrusted-content"), Recognised::NotMarker);
        assert_eq!(recognise(b"<untrusted_content"), Recognised::NotMarker);
        assert_eq!(
            recognise(b"<!MURMUR-NEUTRALISED!/untrusted-content"),
            Recognised::NotMarker
        );
    }

    #[test]
    fn is_name_is_ascii_case_insensitive_equality() {
        // Every byte value at every position of the name: only the name's own letter, in
        // either case, or the `-` itself, may pass.
        for at in 0..NAME.len() {
            for byte in 0..=u8::MAX {
                let mut name = *NAME;
                name[at] = byte;
                assert_eq!(
                    is_name(&name),
                    name.eq_ignore_ascii_case(NAME),
                    "byte {byte:#04x} at {at}"
                );
            }
        }
    }

    #[test]
    fn max_partial_is_the_longest_need_more() {
        assert_eq!(MAX_PARTIAL, b"</untrusted-conten".len());
        assert_eq!(
            recognise(&b"</untrusted-content"[..MAX_PARTIAL]),
            Recognised::NeedMore
        );
        assert_eq!(Marker::Closer.len(), MAX_PARTIAL + 1);
    }

    #[test]
    fn finds_markers_backwards() {
        let hay = b"a<b</untrusted-content> <UNTRUSTED-CONTENT x";
        assert_eq!(prev_marker(hay, hay.len()), Some((24, Marker::Opener)));
        assert_eq!(prev_marker(hay, 24), Some((3, Marker::Closer)));
        assert_eq!(prev_marker(hay, 3), None);
    }

    #[test]
    fn partial_tail_finds_only_a_live_prefix() {
        assert_eq!(partial_tail(b"abc</untrus"), Some(3));
        assert_eq!(partial_tail(b"abc<"), Some(3));
        assert_eq!(partial_tail(b"abc</untrusted-content"), None);
        assert_eq!(partial_tail(b"abc<x"), None);
        assert_eq!(partial_tail(b"</untrusted-conten"), Some(0));
    }
}
