//! Reading a block back, one rule of the grammar at a time.

use crate::marker::{CLOSER, OPENER_PREFIX};

/// The rule of the block grammar a message broke, in the order the rules are read.
///
/// ```
/// use fence_reference::{parse, BrokenRule};
///
/// assert_eq!(parse("hello"), Err(BrokenRule::NoOpener));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BrokenRule {
    /// The message does not start with [`OPENER_PREFIX`] in some ASCII casing.
    NoOpener,
    /// The source name meets a CR or LF, or the end, before a `>`.
    SourceNotTerminated,
    /// No newline right after the opening marker's `>`.
    MissingSeparatorAfterOpener,
    /// No closing marker starts after the opening marker's newline.
    NoCloser,
    /// The last closing marker is not the end of the message.
    TextAfterCloser,
    /// No newline of its own right before the closing marker.
    MissingSeparatorBeforeCloser,
}

/// The source of an opening marker at the very start of `message`: [`OPENER_PREFIX`] in any
/// ASCII casing, then a name that runs to the first `>`, with no CR or LF before it.
///
/// # Errors
///
/// [`BrokenRule::NoOpener`] or [`BrokenRule::SourceNotTerminated`].
///
/// ```
/// use fence_reference::{opener, BrokenRule};
///
/// assert_eq!(opener("<UNTRUSTED-CONTENT SOURCE=tool:x>rest"), Ok("tool:x"));
/// assert_eq!(opener("<untrusted-content source=tool:x\n>"), Err(BrokenRule::SourceNotTerminated));
/// ```
pub fn opener(message: &str) -> Result<&str, BrokenRule> {
    let bytes = message.as_bytes();
    let prefix = OPENER_PREFIX.as_bytes();
    if !bytes
        .get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
    {
        return Err(BrokenRule::NoOpener);
    }
    let rest = &message[prefix.len()..];
    match rest.find(['>', '\r', '\n']) {
        Some(end) if rest.as_bytes()[end] == b'>' => Ok(&rest[..end]),
        _ => Err(BrokenRule::SourceNotTerminated),
    }
}

/// Reads `message` as exactly one block: its source and its content (still neutralised).
///
/// The block ends at the *final* closing marker (`</untrusted-content>` in any casing) that
/// starts after the opener's newline; the content is everything between the two newlines.
///
/// # Errors
///
/// The first rule, in the grammar's order, that `message` breaks.
///
/// ```
/// use fence_reference::{parse, BrokenRule};
///
/// let message = "<untrusted-content source=tool:t>\na\n</untrusted-content>\n</UNTRUSTED-CONTENT>";
/// assert_eq!(parse(message), Ok(("tool:t", "a\n</untrusted-content>")));
/// assert_eq!(parse("<untrusted-content source=t>\nx</untrusted-content>"), Err(BrokenRule::MissingSeparatorBeforeCloser));
/// ```
pub fn parse(message: &str) -> Result<(&str, &str), BrokenRule> {
    let source = opener(message)?;
    let bytes = message.as_bytes();
    let opener_end = OPENER_PREFIX.len() + source.len() + 1;
    if bytes.get(opener_end) != Some(&b'\n') {
        return Err(BrokenRule::MissingSeparatorAfterOpener);
    }
    let content_start = opener_end + 1;
    let closer = (content_start..=bytes.len().saturating_sub(CLOSER.len()))
        .rev()
        .find(|&at| {
            bytes
                .get(at..at + CLOSER.len())
                .is_some_and(|spelled| spelled.eq_ignore_ascii_case(CLOSER.as_bytes()))
        })
        .ok_or(BrokenRule::NoCloser)?;
    if closer + CLOSER.len() != bytes.len() {
        return Err(BrokenRule::TextAfterCloser);
    }
    if closer == content_start || bytes[closer - 1] != b'\n' {
        return Err(BrokenRule::MissingSeparatorBeforeCloser);
    }
    Ok((source, &message[content_start..closer - 1]))
}
