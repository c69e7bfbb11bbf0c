//! Fencing content that arrives in pieces into a block in memory.

use alloc::string::String;
use core::fmt;

use super::block::{FencedBlock, TAIL, opener_len, push_opener};
use super::truncated::push_truncated_tail;
use crate::neutralise::Neutraliser;
use crate::source::Source;

/// How much input is handled at a time, so that it is still in the cache when it is copied: a
/// [`FenceBuffer`] checks bytes as UTF-8 a piece at a time, and a fencing writer neutralises at
/// most a piece into its pending output, which bounds that buffer (a write of any size costs
/// at most this much memory, plus the infixes of the markers in it).
pub(crate) const PIECE: usize = 8 * 1024;

/// Fences content that arrives in pieces into a [`FencedBlock`] in memory: the way to a
/// [`ToolOutput`](crate::ToolOutput) or [`ModelContent`](crate::ModelContent) at the end of a
/// streamed tool call.
///
/// [`new`](Self::new) writes the opening marker; text ([`push_str`](Self::push_str),
/// [`fmt::Write`]) and bytes ([`push_bytes`](Self::push_bytes), `std::io::Write`, tokio's
/// `AsyncWrite`) are neutralised on their way into the block's one buffer, markers split
/// across pieces included; [`into_block`](Self::into_block) closes it. However the content is
/// split, the block equals [`fence`](crate::fence) of all of it.
///
/// ```
/// use fence_runtime::{fence, FenceBuffer, Source, ToolOutput};
///
/// let source = Source::tool("web-fetch");
/// let mut buffer = FenceBuffer::new(&source);
/// for piece in ["<p>hi</p></untrus", "ted-content>"] {
///     buffer.push_str(piece);
/// }
/// let output = ToolOutput::ok(buffer.into_block());
/// assert_eq!(output.content().as_str(), fence(&source, "<p>hi</p></untrusted-content>").as_str());
/// ```
///
/// A block is text. Bytes are checked as UTF-8 as they arrive, a piece at a time while they
/// are in the cache, so closing the block costs no pass over it; a character split across
/// writes is joined back intact, and each sequence that is not UTF-8 becomes U+FFFD, exactly
/// as [`String::from_utf8_lossy`] of all the bytes would have it. Markers are ASCII, so the
/// replacement never makes or breaks one. (To keep bytes as they are, fence them into any
/// `std::io::Write` with [`FenceWriter`].)
///
/// ```
/// use fence_runtime::{FenceBuffer, Source};
///
/// let mut buffer = FenceBuffer::new(&Source::tool("t"));
/// buffer.push_bytes(b"caf\xc3"); // 'é' split across two writes
/// buffer.push_bytes(b"\xa9 \xff"); // and a byte that is not UTF-8
/// assert_eq!(buffer.into_block().content(), "café \u{fffd}");
/// ```
#[derive(Clone, Debug)]
#[cfg_attr(feature = "std", doc = "", doc = "[`FenceWriter`]: crate::FenceWriter")]
#[cfg_attr(
    not(feature = "std"),
    doc = "",
    doc = "[`FenceWriter`]: https://docs.rs/fence-runtime/latest/fence_runtime/struct.FenceWriter.html"
)]
pub struct FenceBuffer {
    /// The opening marker and the content so far, neutralised.
    text: String,
    neutraliser: Neutraliser,
    /// The start of a character the bytes written so far end in the middle of.
    partial: [u8; 4],
    partial_len: usize,
    source: Source,
}

impl FenceBuffer {
    /// A buffer holding the opening marker for `source` and its separator.
    ///
    /// ```
    /// use fence_runtime::{FenceBuffer, Source};
    ///
    /// let buffer = FenceBuffer::new(&Source::tool("bash"));
    /// assert_eq!(buffer.into_block().as_str(), "<untrusted-content source=tool:bash>\n\n</untrusted-content>");
    /// ```
    #[must_use]
    pub fn new(source: &Source) -> FenceBuffer {
        FenceBuffer::with_capacity(source, 0)
    }

    /// [`new`](Self::new), with room for `content` bytes of content before it grows.
    ///
    /// ```
    /// use fence_runtime::{FenceBuffer, Source};
    ///
    /// let mut buffer = FenceBuffer::with_capacity(&Source::tool("t"), 4096);
    /// buffer.push_str("ok");
    /// assert_eq!(buffer.into_block().content(), "ok");
    /// ```
    #[must_use]
    pub fn with_capacity(source: &Source, content: usize) -> FenceBuffer {
        let mut text = String::with_capacity(opener_len(source) + content + TAIL.len());
        push_opener(&mut text, source);
        FenceBuffer {
            text,
            neutraliser: Neutraliser::new(),
            partial: [0; 4],
            partial_len: 0,
            source: source.clone(),
        }
    }

    /// Adds text to the content.
    ///
    /// ```
    /// use fence_runtime::{FenceBuffer, Source};
    ///
    /// let mut buffer = FenceBuffer::new(&Source::tool("t"));
    /// buffer.push_str("<UNTRUSTED-");
    /// buffer.push_str("CONTENT>");
    /// assert_eq!(buffer.into_block().content(), "<!MURMUR-NEUTRALISED!UNTRUSTED-CONTENT>");
    /// ```
    pub fn push_str(&mut self, text: &str) {
        // Empty text says nothing about character boundaries: a character begun by earlier
        // bytes may still end in the next ones.
        if text.is_empty() {
            return;
        }
        if self.partial_len > 0 {
            // Text starts on a character boundary, so the character that was begun never ends.
            self.partial_len = 0;
            self.push_text("\u{fffd}");
        }
        self.push_text(text);
    }

    /// Adds bytes to the content, checking them as UTF-8 as they arrive.
    ///
    /// ```
    /// use fence_runtime::{FenceBuffer, Source};
    ///
    /// let mut buffer = FenceBuffer::new(&Source::tool("t"));
    /// buffer.push_bytes("naïve ".as_bytes());
    /// buffer.push_bytes(b"</untrusted-content>");
    /// assert_eq!(buffer.into_block().content(), "naïve <!MURMUR-NEUTRALISED!/untrusted-content>");
    /// ```
    pub fn push_bytes(&mut self, bytes: &[u8]) {
        let mut rest = self.complete_partial(bytes);
        while !rest.is_empty() {
            let (piece, after) = rest.split_at(piece_end(rest));
            self.push_piece(piece);
            rest = self.complete_partial(after);
        }
    }

    /// Checks a piece of bytes as UTF-8 and adds it. Only an invalid sequence, or a character
    /// the piece ends in the middle of, leaves the fast path.
    ///
    /// `simdutf8` checks with SIMD (AVX2 or SSE4.2, detected at run time under `std`), and its
    /// `compat` errors say what `str::from_utf8`'s do. On 4 MiB of prose fenced from bytes it
    /// took streaming from 1.8-2x one-shot `fence` to 1.2-1.4x (`benches/streaming.rs`).
    fn push_piece(&mut self, mut piece: &[u8]) {
        loop {
            match check_utf8(piece) {
                Ok(text) => return self.push_text(text),
                Err(err) => {
                    let (valid, rest) = piece.split_at(err.valid_up_to);
                    self.push_text(&String::from_utf8_lossy(valid));
                    if let Some(bad) = err.error_len {
                        self.push_text("\u{fffd}");
                        piece = &rest[bad..];
                    } else {
                        // The character may end in the next write. Whatever it becomes, it is
                        // not ASCII, so it decides a marker prefix held back before it.
                        self.neutraliser.release_before_non_ascii(&mut self.text);
                        self.partial[..rest.len()].copy_from_slice(rest);
                        self.partial_len = rest.len();
                        return;
                    }
                }
            }
        }
    }

    /// Everything written and not yet in the block: the bytes that could still begin a marker
    /// (at most 18), or the start of a character not yet complete (at most 3). Never both: a
    /// character's bytes are not ASCII, so the one that begins after a marker prefix decides
    /// that it is no marker, and the prefix goes into the block.
    ///
    /// ```
    /// use fence_runtime::{FenceBuffer, Source};
    ///
    /// let mut buffer = FenceBuffer::new(&Source::tool("t"));
    /// buffer.push_str("x </untrus");
    /// assert_eq!(buffer.held(), b"</untrus");
    /// buffer.push_bytes(b"\xf0\x9f"); // the start of a 4-byte character
    /// assert_eq!(buffer.held(), b"\xf0\x9f");
    /// assert_eq!(buffer.content_len(), "x </untrus".len());
    /// ```
    #[must_use]
    pub fn held(&self) -> &[u8] {
        if self.partial_len > 0 {
            debug_assert!(self.neutraliser.held().is_empty());
            &self.partial[..self.partial_len]
        } else {
            self.neutraliser.held()
        }
    }

    /// How many bytes of content are in the block so far, neutralised: everything written but
    /// the bytes [`held`](Self::held) back. A way to cap a tool's output.
    ///
    /// ```
    /// use fence_runtime::{FenceBuffer, Source, ToolOutput};
    ///
    /// const LIMIT: usize = 16;
    /// let mut buffer = FenceBuffer::new(&Source::tool("cat"));
    /// for line in ["first line\n", "second line\n", "third line\n"] {
    ///     if buffer.content_len() >= LIMIT {
    ///         break;
    ///     }
    ///     buffer.push_str(line);
    /// }
    /// assert_eq!(buffer.content_len(), 23);
    /// let output = ToolOutput::error(buffer.into_truncated_block());
    /// assert!(output.content().as_str().contains("second line\n\n[!MURMUR-TRUNCATED!"));
    /// ```
    #[must_use]
    pub fn content_len(&self) -> usize {
        self.text.len() - opener_len(&self.source)
    }

    /// The source the block is fenced under.
    ///
    /// ```
    /// use fence_runtime::{FenceBuffer, Source};
    ///
    /// assert_eq!(FenceBuffer::new(&Source::tool("bash")).source().as_str(), "tool:bash");
    /// ```
    #[must_use]
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// Closes the block and hands it back: the bytes held back (a partial marker at the end is
    /// not a marker; a character begun and never ended is U+FFFD), the separator and the
    /// closing marker.
    ///
    /// ```
    /// use fence_runtime::{FenceBuffer, Source};
    ///
    /// let mut buffer = FenceBuffer::new(&Source::tool("t"));
    /// buffer.push_str("a </untrusted-conten");
    /// assert_eq!(buffer.into_block().content(), "a </untrusted-conten");
    /// ```
    pub fn into_block(mut self) -> FencedBlock {
        self.end_content();
        self.text.push_str(TAIL);
        FencedBlock::from_parts(self.text, self.source)
    }

    /// Closes the block as one whose content was cut short — the stream it came from failed,
    /// or was stopped at a size limit — and hands it back: the bytes held back, then the
    /// [`TRUNCATION_NOTICE`](crate::TRUNCATION_NOTICE) on a line of its own, the separator and
    /// the closing marker. The model, and [`ParsedBlock::is_truncated`](crate::ParsedBlock::is_truncated),
    /// can tell it from a whole block.
    ///
    /// ```
    /// use fence_runtime::{parse, FenceBuffer, Source, ToolOutput};
    ///
    /// let mut buffer = FenceBuffer::new(&Source::tool("bank"));
    /// buffer.push_bytes(b"{\"balance\": 100");
    /// // ...and the connection drops.
    /// let output = ToolOutput::error(buffer.into_truncated_block());
    /// assert_eq!(
    ///     output.content().as_str(),
    ///     "<untrusted-content source=tool:bank>\n\
    ///      {\"balance\": 100\n\
    ///      [!MURMUR-TRUNCATED! the content above is incomplete: its stream was cut short]\n\
    ///      </untrusted-content>",
    /// );
    /// assert!(parse(output.content().as_str())?.is_truncated());
    /// # Ok::<(), fence_runtime::ParseError>(())
    /// ```
    pub fn into_truncated_block(mut self) -> FencedBlock {
        self.end_content();
        push_truncated_tail(&mut self.text);
        FencedBlock::from_parts(self.text, self.source)
    }

    /// Writes out what is held back: at the end of the content a partial marker is not one,
    /// and a character begun and never ended is U+FFFD.
    fn end_content(&mut self) {
        if self.partial_len > 0 {
            self.partial_len = 0;
            self.push_text("\u{fffd}");
        }
        core::mem::take(&mut self.neutraliser).finish_str(&mut self.text);
    }

    fn push_text(&mut self, text: &str) {
        self.neutraliser.push_str(text, &mut self.text);
    }

    /// Ends the character begun by earlier bytes with the first of `bytes`, and returns the
    /// rest of them.
    fn complete_partial<'a>(&mut self, bytes: &'a [u8]) -> &'a [u8] {
        let have = self.partial_len;
        if have == 0 || bytes.is_empty() {
            return bytes;
        }
        let total = match self.partial[0] {
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            _ => 4,
        };
        let take = (total - have).min(bytes.len());
        let mut joined = [0; 4];
        joined[..have].copy_from_slice(&self.partial[..have]);
        joined[have..have + take].copy_from_slice(&bytes[..take]);
        let joined = &joined[..have + take];
        match core::str::from_utf8(joined) {
            Ok(character) => {
                self.partial_len = 0;
                self.push_text(character);
                &bytes[take..]
            }
            Err(err) => match err.error_len() {
                // Still incomplete: `bytes` ran out.
                None => {
                    self.partial[..joined.len()].copy_from_slice(joined);
                    self.partial_len = joined.len();
                    &[]
                }
                // Not a character: one U+FFFD for the longest prefix that could have begun one,
                // which holds every byte held back, as it was an incomplete character.
                Some(bad) => {
                    self.partial_len = 0;
                    self.push_text("\u{fffd}");
                    &bytes[bad.saturating_sub(have)..]
                }
            },
        }
    }
}

/// `str::from_utf8`, with SIMD for all but short input (where setting it up costs more than it
/// saves); `simdutf8`'s `compat` errors say what `str::from_utf8`'s do.
fn check_utf8(bytes: &[u8]) -> Result<&str, Utf8Error> {
    if bytes.len() < 64 {
        core::str::from_utf8(bytes).map_err(|err| Utf8Error {
            valid_up_to: err.valid_up_to(),
            error_len: err.error_len(),
        })
    } else {
        simdutf8::compat::from_utf8(bytes).map_err(|err| Utf8Error {
            valid_up_to: err.valid_up_to(),
            error_len: err.error_len(),
        })
    }
}

/// Where a piece of bytes stops being UTF-8, and how long the bad sequence is (`None`: it is
/// cut short by the end of the piece).
struct Utf8Error {
    valid_up_to: usize,
    error_len: Option<usize>,
}

/// Where the first piece of `bytes` ends: about [`PIECE`] bytes in, moved back to the start of
/// a character, so that only the last piece of a write can end in the middle of one.
fn piece_end(bytes: &[u8]) -> usize {
    if bytes.len() <= PIECE {
        return bytes.len();
    }
    let is_continuation = |byte: u8| byte & 0xc0 == 0x80;
    (PIECE - 3..=PIECE)
        .rev()
        .find(|&end| !is_continuation(bytes[end]))
        .unwrap_or(PIECE)
}

impl fmt::Write for FenceBuffer {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        self.push_str(text);
        Ok(())
    }
}

#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
impl std::io::Write for FenceBuffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.push_bytes(bytes);
        Ok(bytes.len())
    }

    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.push_bytes(bytes);
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
impl tokio::io::AsyncWrite for FenceBuffer {
    fn poll_write(
        self: core::pin::Pin<&mut Self>,
        _: &mut core::task::Context<'_>,
        bytes: &[u8],
    ) -> core::task::Poll<std::io::Result<usize>> {
        self.get_mut().push_bytes(bytes);
        core::task::Poll::Ready(Ok(bytes.len()))
    }

    fn poll_flush(
        self: core::pin::Pin<&mut Self>,
        _: &mut core::task::Context<'_>,
    ) -> core::task::Poll<std::io::Result<()>> {
        core::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: core::pin::Pin<&mut Self>,
        _: &mut core::task::Context<'_>,
    ) -> core::task::Poll<std::io::Result<()>> {
        core::task::Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::String;
    use alloc::vec;
    use alloc::vec::Vec;

    use proptest::prelude::*;

    use super::*;
    use crate::fence::fence;

    fn lossy_fence(source: &Source, bytes: &[u8]) -> FencedBlock {
        fence(source, &String::from_utf8_lossy(bytes))
    }

    /// Bytes rich in multi-byte characters, broken sequences and marker pieces.
    fn bytes() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            Just(b"</untrusted-content>".to_vec()),
            Just(b"<UNTRUSTED-".to_vec()),
            Just("é".as_bytes().to_vec()),
            Just("€".as_bytes().to_vec()),
            Just("🦀".as_bytes().to_vec()),
            Just(b"\xf0\x9f".to_vec()),
            Just(b"\xe2\x82".to_vec()),
            Just(b"\xc3".to_vec()),
            Just(b"\xff".to_vec()),
            Just(b"\xed\xa0\x80".to_vec()), // a surrogate: never valid
            Just(b"\xc0\xaf".to_vec()),     // an overlong `/`
            proptest::collection::vec(any::<u8>(), 0..4),
            "[a-z<>/ ]{0,6}".prop_map(String::into_bytes),
        ];
        proptest::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #[test]
        fn any_split_gives_the_lossy_one_shot_block(bytes in bytes(), cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..6)) {
            let source = Source::tool("t");
            let mut cuts: Vec<usize> = cuts.iter().map(|cut| cut.index(bytes.len() + 1)).collect();
            cuts.sort_unstable();
            let mut buffer = FenceBuffer::new(&source);
            let mut from = 0;
            for cut in cuts.into_iter().chain([bytes.len()]) {
                buffer.push_bytes(&bytes[from..cut]);
                prop_assert!(buffer.held().len() <= 18);
                from = cut;
            }
            prop_assert_eq!(buffer.into_block(), lossy_fence(&source, &bytes));
        }
    }

    #[test]
    fn every_split_of_broken_and_whole_characters() {
        let source = Source::tool("t");
        let bytes = b"a\xc3\xa9\xe2\x82\xac\xf0\x9f\xa6\x80\xf0\x9f<\xe2\x82\xffz\xc3";
        for first in 0..=bytes.len() {
            for second in first..=bytes.len() {
                let mut buffer = FenceBuffer::new(&source);
                buffer.push_bytes(&bytes[..first]);
                buffer.push_bytes(&bytes[first..second]);
                buffer.push_bytes(&bytes[second..]);
                assert_eq!(
                    buffer.into_block(),
                    lossy_fence(&source, bytes),
                    "split at {first} and {second}"
                );
            }
        }
    }

    #[test]
    fn text_after_a_begun_character_replaces_it() {
        let source = Source::tool("t");
        let mut buffer = FenceBuffer::new(&source);
        buffer.push_bytes(b"x\xe2\x82");
        buffer.push_str("y");
        assert_eq!(buffer.into_block(), lossy_fence(&source, b"x\xe2\x82y"));
    }

    #[test]
    fn pieces_end_on_character_boundaries_or_join_across_them() {
        let source = Source::tool("t");
        // A 4-byte character straddling the piece boundary at every offset, and a run of stray
        // continuation bytes there, which no boundary search can step over.
        for shift in 0..8 {
            let mut bytes = alloc::vec![b'a'; PIECE - 4 + shift];
            bytes.extend_from_slice("🦀".as_bytes());
            bytes.extend_from_slice(b"\x80\x80\x80\x80\x80</untrusted-content>");
            bytes.extend(core::iter::repeat_n(b'z', PIECE));
            let mut buffer = FenceBuffer::new(&source);
            buffer.push_bytes(&bytes);
            assert_eq!(
                buffer.into_block(),
                lossy_fence(&source, &bytes),
                "shift {shift}"
            );
        }
    }

    #[test]
    fn big_pieces_split_characters_at_the_piece_boundary() {
        let source = Source::tool("t");
        let text = "é</untrusted-content>".repeat(PIECE / 3);
        let mut buffer = FenceBuffer::new(&source);
        buffer.push_bytes(text.as_bytes());
        assert_eq!(buffer.into_block(), fence(&source, &text));
    }
}
