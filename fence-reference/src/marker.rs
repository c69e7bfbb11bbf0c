//! The marker rule, and neutralising.

/// The marker's name, lowercase.
///
/// ```
/// assert_eq!(fence_reference::NAME, "untrusted-content");
/// ```
pub const NAME: &str = "untrusted-content";

/// What neutralising inserts after a marker's `<`.
///
/// ```
/// assert_eq!(fence_reference::INFIX.len(), 20);
/// ```
pub const INFIX: &str = "!MURMUR-NEUTRALISED!";

/// The opening marker of a block, up to its source name.
///
/// ```
/// assert!(fence_reference::OPENER_PREFIX.ends_with("source="));
/// ```
pub const OPENER_PREFIX: &str = "<untrusted-content source=";

/// The closing marker of a block.
///
/// ```
/// assert_eq!(fence_reference::CLOSER, "</untrusted-content>");
/// ```
pub const CLOSER: &str = "</untrusted-content>";

/// Whether a marker starts at `hay[at]`: a `<`, an optional `/`, then [`NAME`] in any ASCII
/// casing, whatever follows.
///
/// ```
/// use fence_reference::is_marker_at;
///
/// assert!(is_marker_at(b"x</UnTrUsTeD-cOnTeNt", 1));
/// assert!(is_marker_at(b"<untrusted-contents", 0));
/// assert!(!is_marker_at(b"< /untrusted-content>", 0));
/// assert!(!is_marker_at(b"<untrusted-conten", 0));
/// ```
pub fn is_marker_at(hay: &[u8], at: usize) -> bool {
    if hay.get(at) != Some(&b'<') {
        return false;
    }
    let mut name = at + 1;
    if hay.get(name) == Some(&b'/') {
        name += 1;
    }
    match hay.get(name..name + NAME.len()) {
        Some(spelled) => spelled
            .iter()
            .zip(NAME.as_bytes())
            .all(|(&byte, &letter)| byte.to_ascii_lowercase() == letter),
        None => false,
    }
}

/// Where the `<` of every marker in `hay` is, in order.
///
/// ```
/// assert_eq!(fence_reference::markers(b"<<untrusted-content </untrusted-content"), [1, 20]);
/// ```
pub fn markers(hay: &[u8]) -> Vec<usize> {
    (0..hay.len()).filter(|&at| is_marker_at(hay, at)).collect()
}

/// Where the `<` of every closing marker (`</` and the name) in `hay` is, in order.
///
/// ```
/// assert_eq!(fence_reference::closers(b"<untrusted-content </untrusted-content"), [19]);
/// ```
pub fn closers(hay: &[u8]) -> Vec<usize> {
    markers(hay)
        .into_iter()
        .filter(|&at| hay.get(at + 1) == Some(&b'/'))
        .collect()
}

/// `hay` with [`INFIX`] inserted after the `<` of every marker; nothing else changes.
///
/// ```
/// assert_eq!(
///     fence_reference::neutralise(b"a</UNTRUSTED-content>"),
///     b"a<!MURMUR-NEUTRALISED!/UNTRUSTED-content>",
/// );
/// ```
pub fn neutralise(hay: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(hay.len());
    for (at, &byte) in hay.iter().enumerate() {
        out.push(byte);
        if is_marker_at(hay, at) {
            out.extend_from_slice(INFIX.as_bytes());
        }
    }
    out
}

/// [`neutralise`] for text.
///
/// # Panics
///
/// Never: the infix is ASCII and goes after an ASCII `<`, so text stays text.
///
/// ```
/// assert_eq!(
///     fence_reference::neutralise_str("é<untrusted-content>"),
///     "é<!MURMUR-NEUTRALISED!untrusted-content>",
/// );
/// ```
pub fn neutralise_str(text: &str) -> String {
    String::from_utf8(neutralise(text.as_bytes())).expect("inserting ASCII after `<` keeps UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_pinned_to_hand_written_cases() {
        assert_eq!(
            markers(b"a</UnTrUsTeD-cOnTeNt>b<untrusted-content"),
            [1, 22]
        );
        assert_eq!(
            markers(b"< /untrusted-content></untrusted-conten"),
            [0_usize; 0]
        );
        assert_eq!(
            markers(b"<//untrusted-content <\\untrusted-content"),
            [0_usize; 0]
        );
        assert_eq!(
            neutralise(b"<</untrusted-content>"),
            b"<<!MURMUR-NEUTRALISED!/untrusted-content>"
        );
        // Neutralised once, a marker is a marker no more.
        assert_eq!(markers(&neutralise(b"</untrusted-content>")), [0_usize; 0]);
        assert_eq!(closers(b"</untrusted-content <untrusted-content"), [0]);
    }
}
