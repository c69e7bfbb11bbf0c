//! Streaming neutralisation: content cut into chunks by the input's first bytes, through
//! `Neutraliser`, `ContentWriter` (a `Fenced` value rendering chunk by chunk) and, with `std`,
//! `FenceBuffer` (into a block in memory) and `FenceWriter` into a writer that takes a few bytes at a time and fails now and
//! then, and dropped unfinished (closed with the truncation notice).
//!
//! Input layout: `[n, trickle, fail, sizes[n % 8 + 1]…, content…]`.
//!
//! Invariants:
//! - after every chunk, the bytes held back are exactly the live marker prefix at the end of
//!   the input so far (never more than 18), and the output so far is the reference output of
//!   everything before them;
//! - at the end, the output equals the one-shot `neutralise_bytes` and the reference;
//! - every writer produces exactly the one-shot block: the inner writer receives
//!   `fence`'s bytes however its writes are cut short or fail (nothing dropped or repeated),
//!   and an in-memory block is that text with invalid UTF-8 replaced.
#![no_main]

use fence_runtime::{
    ContentWriter, Fenced, Neutraliser, RenderError, Source, fence_value, neutralise_bytes,
};
use fence_runtime_fuzz as reference;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (header, rest) = data.split_at(3.min(data.len()));
    let [n, trickle, fail] = [0, 1, 2].map(|i| header.get(i).copied().unwrap_or(0));
    let (sizes, content) = rest.split_at((usize::from(n % 8) + 1).min(rest.len()));
    let chunks = reference::split(content, sizes);

    let expected = reference::neutralise(content);
    assert_eq!(*neutralise_bytes(content), *expected);
    let markers = reference::markers(content);

    // The neutraliser, checked after every chunk.
    let mut neutraliser = Neutraliser::new();
    let mut out = Vec::new();
    let mut seen = 0;
    for chunk in &chunks {
        neutraliser.push_bytes(chunk, &mut out);
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
    writers::check(&chunks, content, &source, trickle, fail);
    #[cfg(not(feature = "std"))]
    let _ = (trickle, fail);
});

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
    use std::rc::Rc;

    use fence_runtime::{FenceBuffer, FenceWriter, Source};
    use fence_runtime_fuzz as reference;

    pub(crate) fn check(chunks: &[&[u8]], content: &[u8], source: &Source, trickle: u8, fail: u8) {
        let expected = reference::block_bytes(source.as_str(), content);

        // In memory: `FenceBuffer` checks the bytes as UTF-8 as they arrive. What it holds back
        // is the live marker prefix, or the start of a character not yet complete.
        let mut buffer = FenceBuffer::new(source);
        for chunk in chunks {
            buffer.push_bytes(chunk);
            assert!(buffer.held().len() <= 18);
        }
        assert_eq!(
            buffer.into_block().as_str(),
            reference::block_text(source.as_str(), content)
        );

        // Into a writer that takes at most `trickle % 32 + 1` bytes a call and, when `fail` is
        // not 0, fails every `fail % 8 + 2`th call (interrupted or not, by turns). The content
        // is driven with plain `write` calls, retried after every error.
        // A failure while the opening marker is written loses the writer, so failures start
        // once it is made.
        let failing = Rc::new(Cell::new(false));
        let flaky = Flaky {
            bytes: Vec::new(),
            most: usize::from(trickle % 32) + 1,
            fail_every: usize::from(fail % 8) + 2,
            calls: 0,
            failing: Rc::clone(&failing),
        };
        let mut writer = FenceWriter::new(flaky, source).expect("not failing yet");
        failing.set(fail != 0);
        let mut seen = 0;
        for chunk in chunks {
            let mut rest = *chunk;
            let mut tries = 0;
            loop {
                // An error means none of `rest` was taken.
                if let Ok(n) = writer.write(rest) {
                    assert!(n <= rest.len());
                    assert!(n > 0 || rest.is_empty(), "a write took nothing");
                    rest = &rest[n..];
                    seen += n;
                }
                assert!(writer.held().len() <= reference::MAX_HELD);
                assert_eq!(writer.held(), reference::partial_tail(&content[..seen]));
                if rest.is_empty() {
                    break;
                }
                tries += 1;
                assert!(tries < 100_000, "no progress");
            }
        }
        failing.set(false);
        let inner = writer
            .finish()
            .map_err(|err| err.into_error())
            .expect("finish with a writer that no longer fails");
        assert_eq!(inner.bytes, expected, "the inner writer got other bytes");

        // Dropped unfinished: the block is closed as cut short, the notice on its own line
        // before the separator and the closing marker.
        let mut sink = Vec::new();
        {
            let mut writer = FenceWriter::new(&mut sink, source).expect("a Vec never fails");
            for chunk in chunks {
                writer.write_all(chunk).expect("a Vec never fails");
            }
        }
        let tail = b"\n</untrusted-content>";
        let mut truncated = expected[..expected.len() - tail.len()].to_vec();
        truncated.extend_from_slice(b"\n");
        truncated.extend_from_slice(fence_runtime::TRUNCATION_NOTICE.as_bytes());
        truncated.extend_from_slice(tail);
        assert_eq!(sink, truncated, "dropping an unfinished writer");
    }

    struct Flaky {
        bytes: Vec<u8>,
        most: usize,
        fail_every: usize,
        calls: usize,
        failing: Rc<Cell<bool>>,
    }

    impl Write for Flaky {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.calls += 1;
            if self.failing.get() && self.calls.is_multiple_of(self.fail_every) {
                let kind = if (self.calls / self.fail_every).is_multiple_of(2) {
                    io::ErrorKind::Interrupted
                } else {
                    io::ErrorKind::Other
                };
                return Err(io::Error::new(kind, "flaky"));
            }
            let n = buf.len().min(self.most);
            self.bytes.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
}
