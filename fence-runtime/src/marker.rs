//! The one place that says what a marker is.
//!
//! The neutraliser, the streaming neutraliser, the parser and every checker call
//! [`recognise`]: two lists of what counts as a marker that disagree are how sanitisers get
//! bypassed. The rule (DESIGN §2): a `<`, an optional `/`, then `untrusted-content` compared
//! ASCII-case-insensitively, whatever follows the name.

/// The marker name, lowercase.
pub(crate) const NAME: &[u8; 17] = b"untrusted-content";

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
    let seen = name.len().min(NAME.len());
    if !name[..seen].eq_ignore_ascii_case(&NAME[..seen]) {
        Recognised::NotMarker
    } else if seen < NAME.len() {
        Recognised::NeedMore
    } else {
        Recognised::Marker(kind)
    }
}

/// The marker starting at `hay[at]` (a `<`), treating the end of `hay` as the end of input.
#[inline]
pub(crate) fn marker_at(hay: &[u8], at: usize) -> Option<Marker> {
    match recognise(&hay[at..]) {
        Recognised::Marker(kind) => Some(kind),
        Recognised::NotMarker | Recognised::NeedMore => None,
    }
}

/// The position of the first marker's `<` at or after `from`.
#[inline]
pub(crate) fn next_marker(hay: &[u8], mut from: usize) -> Option<(usize, Marker)> {
    while let Some(offset) = memchr::memchr(b'<', &hay[from..]) {
        let at = from + offset;
        if let Some(kind) = marker_at(hay, at) {
            return Some((at, kind));
        }
        from = at + 1;
    }
    None
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

/// Number of markers in `hay` at or after `from`.
pub(crate) fn count_markers(hay: &[u8], mut from: usize) -> usize {
    let mut count = 0;
    while let Some((at, kind)) = next_marker(hay, from) {
        count += 1;
        from = at + kind.len();
    }
    count
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
    fn max_partial_is_the_longest_need_more() {
        assert_eq!(MAX_PARTIAL, b"</untrusted-conten".len());
        assert_eq!(
            recognise(&b"</untrusted-content"[..MAX_PARTIAL]),
            Recognised::NeedMore
        );
        assert_eq!(Marker::Closer.len(), MAX_PARTIAL + 1);
    }

    #[test]
    fn finds_markers_forwards_and_backwards() {
        let hay = b"a<b</untrusted-content> <UNTRUSTED-CONTENT x";
        assert_eq!(next_marker(hay, 0), Some((3, Marker::Closer)));
        assert_eq!(next_marker(hay, 4), Some((24, Marker::Opener)));
        assert_eq!(prev_marker(hay, hay.len()), Some((24, Marker::Opener)));
        assert_eq!(prev_marker(hay, 24), Some((3, Marker::Closer)));
        assert_eq!(prev_marker(hay, 3), None);
        assert_eq!(count_markers(hay, 0), 2);
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
