//! The notice that closes a block whose content was cut short.

use alloc::string::String;

use super::block::TAIL;

/// The line a fencing writer adds, inside the block, after content that was cut short: a
/// [`FenceWriter`] or `AsyncFenceWriter` dropped
/// before `finish` (an early `?`, a panic), `finish_truncated`,
/// [`FenceBuffer::into_truncated_block`](crate::FenceBuffer::into_truncated_block), and
/// `fence_child_stdout` for a child killed by a signal or a read
/// that failed.
///
/// It follows the content on a line of its own, before the separator and the closing marker, so
/// the block stays grammatical — nothing written after it looks fenced — while the model reads,
/// as the block's last line, that what it holds is incomplete. [`ParsedBlock::is_truncated`](crate::ParsedBlock::is_truncated)
/// tells a reader the same. Like [`NEUTRALISED_INFIX`](crate::NEUTRALISED_INFIX), it has no `<`,
/// so it never makes or breaks a marker.
///
/// ```
/// use std::io::Write;
/// use fence_runtime::{parse, FenceWriter, Source, TRUNCATION_NOTICE};
///
/// let mut sink = Vec::new();
/// let mut writer = FenceWriter::new(&mut sink, &Source::tool("bank"))?;
/// writer.write_all(b"{\"balance\": 100")?;
/// drop(writer); // cut short: an early `?`, say
///
/// let text = String::from_utf8(sink).unwrap();
/// assert_eq!(
///     text,
///     "<untrusted-content source=tool:bank>\n\
///      {\"balance\": 100\n\
///      [!MURMUR-TRUNCATED! the content above is incomplete: its stream was cut short]\n\
///      </untrusted-content>",
/// );
/// assert!(text.contains(TRUNCATION_NOTICE));
/// assert!(parse(&text).unwrap().is_truncated());
/// # Ok::<(), std::io::Error>(())
/// ```
#[cfg_attr(feature = "std", doc = "", doc = "[`FenceWriter`]: crate::FenceWriter")]
#[cfg_attr(
    not(feature = "std"),
    doc = "",
    doc = "[`FenceWriter`]: https://docs.rs/fence-runtime/latest/fence_runtime/struct.FenceWriter.html"
)]
pub const TRUNCATION_NOTICE: &str =
    "[!MURMUR-TRUNCATED! the content above is incomplete: its stream was cut short]";

/// What ends a block cut short, after the content: a newline, the notice, the separator and the
/// closing marker.
pub(crate) const TRUNCATED_TAIL: &str = "\n[!MURMUR-TRUNCATED! the content above is incomplete: its stream was cut short]\n</untrusted-content>";

/// Whether block content (between the separators) ends with the notice on a line of its own,
/// as the fencing writers leave it.
pub(crate) fn ends_truncated(content: &str) -> bool {
    content
        .strip_suffix(TRUNCATION_NOTICE)
        .is_some_and(|before| before.ends_with('\n'))
}

/// Appends the notice and the end of the block to `out`, whose content is complete so far.
pub(crate) fn push_truncated_tail(out: &mut String) {
    out.push_str(TRUNCATED_TAIL);
}

const _: () = {
    let (tail, notice, end) = (
        TRUNCATED_TAIL.as_bytes(),
        TRUNCATION_NOTICE.as_bytes(),
        TAIL.as_bytes(),
    );
    assert!(tail.len() == 1 + notice.len() + end.len() && tail[0] == b'\n');
    let mut i = 0;
    while i < notice.len() {
        assert!(tail[1 + i] == notice[i] && notice[i] != b'<' && notice[i] != b'\n');
        i += 1;
    }
    let mut i = 0;
    while i < end.len() {
        assert!(tail[1 + notice.len() + i] == end[i]);
        i += 1;
    }
};
