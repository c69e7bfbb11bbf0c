//! Streaming neutralisation: content cut into chunks by the input's first bytes, through
//! `Neutraliser`, `ContentWriter` (a `Fenced` value rendering chunk by chunk) and, with `std`,
//! `FenceBuffer` (fed by every way in), and `FenceWriter` into a writer that takes a few bytes
//! at a time and fails now and then, finished, finished as cut short, retried, or dropped.
//!
//! Input layout: `[n, trickle, fail, ways, sizes[n % 8 + 1]…, content…]`.
//!
//! Invariants:
//! - after every chunk, the neutraliser holds back exactly the reference's
//!   [`partial_tail`](fence_reference::partial_tail) of the input so far (never more than 18
//!   bytes), and its output so far is the reference output of everything before them; at the
//!   end, the output equals the one-shot `neutralise_bytes` and the reference;
//! - a value rendered chunk by chunk through `ContentWriter` (which batches small writes, 2 KiB
//!   at a time) fences exactly the reference block of its bytes, markers across a batch
//!   boundary included;
//! - `FenceBuffer`, fed each chunk the way two bits of `ways` choose (`push_bytes`, `push_str`
//!   or `fmt::Write` when the chunk is text, `push_bytes` between two empty `push_str`, or
//!   tokio's `AsyncWrite`), holds back after every call exactly the reference's
//!   [`buffer_held`](fence_reference::buffer_held) — a character begun at the end, or else a
//!   marker prefix — has everything else in the block, and ends as the reference block of the
//!   bytes read as lossy UTF-8, whole or cut short;
//! - `FenceWriter` holds back, after every write, exactly what the bytes it took call for, and
//!   its inner writer receives exactly the reference block of those bytes (or the block cut
//!   short, for `finish_truncated`) however its writes are cut short or fail, with a failed
//!   `finish` retried, and whether the caller offers the rest of a partly taken write again
//!   or not; given up after a failed `finish` and dropped, it writes nothing more, leaving an
//!   open block `parse` refuses; dropped unfinished, it receives the block cut short.

use fence_reference as reference;
use fence_runtime::neutralise_bytes;
use fence_runtime::{ContentWriter, Fenced, Neutraliser, RenderError, Source, fence_value};

use crate::api::push_bytes;
use crate::input::split;

/// Checks every invariant on `data`; panics on the first that fails.
///
/// # Panics
///
/// When an invariant does not hold: the fuzzer reports the input.
///
/// ```
/// // Three chunks — the start of 🦀, nothing, its end — each pushed as text when it is text.
/// fence_checks::stream::check(b"\x02\x00\x00\x55\x02\x00\x02\xf0\x9f\xa6\x80");
/// ```
pub fn check(data: &[u8]) {
    let (header, rest) = data.split_at(4.min(data.len()));
    let [n, trickle, fail, ways] = [0, 1, 2, 3].map(|i| header.get(i).copied().unwrap_or(0));
    let (sizes, content) = rest.split_at((usize::from(n % 8) + 1).min(rest.len()));
    let chunks = split(content, sizes);

    let expected = reference::neutralise(content);
    assert_eq!(*neutralise_bytes(content), *expected);
    let markers = reference::markers(content);

    // The neutraliser, checked after every chunk.
    let mut neutraliser = Neutraliser::new();
    let mut out = Vec::new();
    let mut seen = 0;
    for chunk in &chunks {
        push_bytes(&mut neutraliser, chunk, &mut out);
        seen += chunk.len();
        let held = neutraliser.held();
        assert!(held.len() <= reference::MAX_HELD);
        assert_eq!(
            held,
            reference::partial_tail(&content[..seen]),
            "held the wrong bytes"
        );
        // Everything before the held bytes is out, neutralised: no marker starts in the held
        // bytes and ends before them, so the output is a prefix of the whole output.
        let written = seen - held.len();
        let markers_written = markers.partition_point(|&at| at < written);
        assert_eq!(
            out.len(),
            written + reference::INFIX.len() * markers_written
        );
        assert!(expected.starts_with(&out), "streamed output diverged");
    }
    neutraliser.finish_bytes(&mut out);
    assert_eq!(out, expected, "streamed output differs from one-shot");

    // A `Fenced` value rendering chunk by chunk into the block's own buffer.
    let source = Source::tool("fuzz");
    let block = fence_value(&source, &Chunked(&chunks)).expect("rendering never fails");
    assert_eq!(block.as_str(), reference::block_text("tool:fuzz", content));

    #[cfg(feature = "std")]
    writers::check(&chunks, content, &source, [trickle, fail, ways]);
    #[cfg(not(feature = "std"))]
    let _ = (trickle, fail, ways);
}

struct Chunked<'a>(&'a [&'a [u8]]);

impl Fenced for Chunked<'_> {
    fn render(&self, out: &mut ContentWriter<'_>) -> Result<(), RenderError> {
        for chunk in self.0 {
            out.push_bytes(chunk);
        }
        Ok(())
    }
}

#[cfg(feature = "std")]
mod writers {
    use std::cell::Cell;
    use std::io::{self, Write};
    use std::pin::Pin;
    use std::rc::Rc;
    use std::task::{Context, Poll, Waker};

    use fence_reference as reference;
    use fence_runtime::{FenceBuffer, FenceWriter, FinishError, Source, parse};

    pub(crate) fn check(
        chunks: &[&[u8]],
        content: &[u8],
        source: &Source,
        [trickle, fail, ways]: [u8; 3],
    ) {
        buffer(chunks, content, source, ways);
        flaky(chunks, source, trickle, fail);
        dropped(chunks, content, source);
    }

    /// `FenceBuffer` fed every way in: it checks bytes as UTF-8 as they arrive, so it holds
    /// back a marker prefix or the start of a character.
    fn buffer(chunks: &[&[u8]], content: &[u8], source: &Source, ways: u8) {
        let mut buffer = FenceBuffer::new(source);
        let mut seen = 0;
        for (i, chunk) in chunks.iter().enumerate() {
            let text = std::str::from_utf8(chunk).ok();
            match (ways >> (2 * (i % 4)) & 3, text) {
                (0, _) | (1, None) => buffer.push_bytes(chunk),
                (1, Some(text)) if i % 2 == 0 => buffer.push_str(text),
                (1, Some(text)) => std::fmt::Write::write_fmt(&mut buffer, format_args!("{text}"))
                    .expect("a FenceBuffer never fails"),
                (2, _) => {
                    buffer.push_str("");
                    buffer.push_bytes(chunk);
                    buffer.push_str("");
                }
                _ => {
                    let mut cx = Context::from_waker(Waker::noop());
                    let polled =
                        tokio::io::AsyncWrite::poll_write(Pin::new(&mut buffer), &mut cx, chunk);
                    assert!(matches!(polled, Poll::Ready(Ok(n)) if n == chunk.len()));
                }
            }
            seen += chunk.len();
            let held = reference::buffer_held(&content[..seen]);
            assert_eq!(buffer.held(), held, "FenceBuffer held the wrong bytes");
            let before = String::from_utf8_lossy(&content[..seen - held.len()]);
            assert_eq!(
                buffer.content_len(),
                reference::neutralise_str(&before).len(),
                "FenceBuffer's content so far"
            );
        }
        let lossy = String::from_utf8_lossy(content);
        assert_eq!(
            buffer.clone().into_truncated_block().as_str().as_bytes(),
            reference::truncated_block_bytes(source.as_str(), lossy.as_bytes()),
            "FenceBuffer cut short"
        );
        assert_eq!(
            buffer.into_block().as_str(),
            reference::block_text(source.as_str(), content),
            "FenceBuffer"
        );
    }

    /// Into a writer that takes at most `trickle % 32 + 1` bytes a call and, when `fail % 32`
    /// is not 0, fails every `fail % 8 + 2`th call (interrupted or not, by turns). The content
    /// is driven with plain `write` calls, retried after every error; bit 5 of `fail` gives up
    /// on the rest of a chunk after a write that took only part of it (the block is then the
    /// bytes taken). Bit 7 ends the block as cut short; bit 6 gives up after a failed `finish`
    /// and drops the writer.
    fn flaky(chunks: &[&[u8]], source: &Source, trickle: u8, fail: u8) {
        let abandon = fail & 0x20 != 0;
        let truncate = fail & 0x80 != 0;
        let give_up = fail & 0x40 != 0;
        let failing = Rc::new(Cell::new(false));
        let bytes = Rc::new(Cell::new(Vec::new()));
        let flaky = Flaky {
            bytes: Rc::clone(&bytes),
            most: usize::from(trickle % 32) + 1,
            fail_every: usize::from(fail % 8) + 2,
            calls: 0,
            failing: Rc::clone(&failing),
        };
        // A failure while the opening marker is written loses the writer, so failures start
        // once it is made.
        let mut writer = FenceWriter::new(flaky, source).expect("not failing yet");
        failing.set(fail % 32 != 0);
        let mut taken = Vec::new();
        for chunk in chunks {
            let mut rest = *chunk;
            let mut tries = 0;
            loop {
                // An error means none of `rest` was taken.
                if let Ok(n) = writer.write(rest) {
                    assert!(n <= rest.len());
                    assert!(n > 0 || rest.is_empty(), "a write took nothing");
                    taken.extend_from_slice(&rest[..n]);
                    rest = if abandon { &[] } else { &rest[n..] };
                }
                assert_eq!(writer.held(), reference::partial_tail(&taken));
                if rest.is_empty() {
                    break;
                }
                tries += 1;
                assert!(tries < 100_000, "no progress");
            }
        }
        let expected = if truncate {
            reference::truncated_block_bytes(source.as_str(), &taken)
        } else {
            reference::block_bytes(source.as_str(), &taken)
        };
        let mut tries = 0;
        let mut result = if truncate {
            writer.finish_truncated()
        } else {
            writer.finish()
        };
        loop {
            match result {
                Ok(_) => {
                    assert_eq!(take(&bytes), expected, "the inner writer got other bytes");
                    return;
                }
                Err(err) if give_up => {
                    // `finish` failed on the inner writer's last call, so dropping the writer
                    // writes nothing more: the block stays open, and `parse` refuses it.
                    let before = take(&bytes);
                    drop(FinishError::into_writer(err));
                    let got = take(&bytes);
                    assert_eq!(got, before, "a writer dropped after a failure wrote more");
                    assert!(
                        expected.starts_with(&got),
                        "the inner writer got other bytes"
                    );
                    assert_ne!(got, expected, "a failed finish had written the whole block");
                    let text = String::from_utf8_lossy(&got);
                    assert!(parse(&text).is_err(), "an unclosed block parses");
                    return;
                }
                // Retried, `finish` writes out the end either call queued.
                Err(err) => result = err.into_writer().finish(),
            }
            tries += 1;
            assert!(tries < 100_000, "finish makes no progress");
        }
    }

    /// Dropped unfinished: the block is closed as cut short, the notice on its own line before
    /// the separator and the closing marker.
    fn dropped(chunks: &[&[u8]], content: &[u8], source: &Source) {
        let mut sink = Vec::new();
        {
            let mut writer = FenceWriter::new(&mut sink, source).expect("a Vec never fails");
            for chunk in chunks {
                writer.write_all(chunk).expect("a Vec never fails");
            }
        }
        assert_eq!(
            sink,
            reference::truncated_block_bytes(source.as_str(), content),
            "dropping an unfinished writer"
        );
    }

    fn take(bytes: &Cell<Vec<u8>>) -> Vec<u8> {
        let got = bytes.take();
        bytes.set(got.clone());
        got
    }

    struct Flaky {
        bytes: Rc<Cell<Vec<u8>>>,
        most: usize,
        fail_every: usize,
        calls: usize,
        failing: Rc<Cell<bool>>,
    }

    impl Write for Flaky {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.calls += 1;
            if self.failing.get() && self.calls % self.fail_every == 0 {
                let kind = if (self.calls / self.fail_every) % 2 == 0 {
                    io::ErrorKind::Interrupted
                } else {
                    io::ErrorKind::Other
                };
                return Err(io::Error::new(kind, "flaky"));
            }
            let n = buf.len().min(self.most);
            let mut bytes = self.bytes.take();
            bytes.extend_from_slice(&buf[..n]);
            self.bytes.set(bytes);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
}
