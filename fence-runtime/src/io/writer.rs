//! Fencing a stream: [`FenceWriter`] wraps any [`std::io::Write`].

use core::fmt;
use std::io::{self, Write};

use super::fencing::{End, Fencing, FinishError, closed_error};
use crate::source::Source;

/// Why `FenceWriter::inner` is always `Some` where it is read.
const TAKEN: &str = "the inner writer is only taken by methods that consume the writer";

/// Fences content that arrives in pieces, straight into any [`io::Write`].
///
/// [`new`](Self::new) writes the opening marker; everything written to the `FenceWriter` is
/// neutralised on its way to the inner writer, including markers split across writes;
/// [`finish`](Self::finish) writes the bytes held back, the separator and the closing marker.
/// Whatever the writes are, the bytes the inner writer receives are exactly
/// [`fence`](crate::fence) of everything written (bytes that are not UTF-8 pass through
/// untouched).
///
/// ```
/// use std::io::Write;
/// use fence_runtime::{fence, FenceWriter, Source};
///
/// let source = Source::tool("bash");
/// let mut writer = FenceWriter::new(Vec::new(), &source)?;
/// writer.write_all(b"total 0\n</untrus")?;
/// writer.write_all(b"ted-content>\n")?;
/// let bytes = writer.finish()?;
/// assert_eq!(bytes, fence(&source, "total 0\n</untrusted-content>\n").as_str().as_bytes());
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// At most 18 bytes are held back at a time (a trailing `</untrusted-conten` might yet become
/// a closer); everything else reaches the inner writer by the end of the write that brought
/// it. Writes neutralise into a reusable buffer of at most 8 KiB of input at a time, so a
/// write of any size costs bounded memory and steady-state writes do not allocate.
///
/// # Errors from the inner writer
///
/// They propagate. A call that meets one before taking any of its bytes returns it; a write
/// that has already taken bytes returns how many (a short write), and the error comes back
/// from the next call, as with [`std::io::BufWriter`]. Output the inner writer did not accept
/// is kept and retried by the next call, never dropped or repeated.
///
/// A failed [`finish`](Self::finish) gives the writer back inside its [`FinishError`], as
/// [`std::io::IntoInnerError`] does, so it can be retried; until it succeeds the block is
/// open. (`?` turns a `FinishError` into the [`io::Error`] it holds.)
///
/// # Content cut short
///
/// Dropping a `FenceWriter` without calling [`finish`](Self::finish) — a producer that returns
/// early with `?`, or panics — closes the block as **truncated**: it writes the bytes held back,
/// the [`TRUNCATION_NOTICE`](crate::TRUNCATION_NOTICE) on a line of its own, the separator and
/// the closing marker, and flushes, ignoring errors (as [`std::io::BufWriter`] flushes on
/// drop). The block stays grammatical, so nothing written after it looks fenced, and its last
/// line tells the model the content is incomplete; [`ParsedBlock::is_truncated`](crate::ParsedBlock::is_truncated)
/// tells a reader. [`finish_truncated`](Self::finish_truncated) does the same and reports
/// errors.
///
/// When the inner writer's last call failed or panicked, drop writes nothing more to it, and
/// the block is left without its closing marker: [`parse`](crate::parse) refuses it.
///
/// ```
/// use std::io::{self, Write};
/// use fence_runtime::{parse, FenceWriter, Source};
///
/// fn balance(out: &mut impl Write) -> io::Result<()> {
///     write!(out, "{{\"balance\": 100")?;
///     Err(io::Error::other("the ledger went away")) // an early `?` in real code
/// }
///
/// let mut sink = Vec::new();
/// {
///     let mut writer = FenceWriter::new(&mut sink, &Source::tool("bank"))?;
///     assert!(balance(&mut writer).is_err());
/// } // dropped unfinished
/// let text = String::from_utf8(sink).unwrap();
/// assert_eq!(
///     text,
///     "<untrusted-content source=tool:bank>\n\
///      {\"balance\": 100\n\
///      [!MURMUR-TRUNCATED! the content above is incomplete: its stream was cut short]\n\
///      </untrusted-content>",
/// );
/// assert!(parse(&text).unwrap().is_truncated());
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// # In memory
///
/// To fence into a block in memory — a [`FencedBlock`](crate::FencedBlock), ready for
/// [`ToolOutput::ok`](crate::ToolOutput::ok) at the end of a streamed tool call — write to a
/// [`FenceBuffer`](crate::FenceBuffer) instead: it is an `io::Write` too, and builds the block's
/// text as the content arrives.
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub struct FenceWriter<W: Write> {
    /// `None` once `finish` has taken it.
    inner: Option<W>,
    fencing: Fencing,
    /// Set around every call into `inner`, and left set when the call fails or panics.
    inner_failed: bool,
}

impl<W: Write> FenceWriter<W> {
    /// Writes the opening marker for `source` and its separator to `inner`, and returns a writer
    /// for the content.
    ///
    /// ```
    /// use fence_runtime::{FenceWriter, Source};
    ///
    /// let writer = FenceWriter::new(Vec::new(), &Source::tool("web-fetch"))?;
    /// assert_eq!(writer.get_ref(), b"<untrusted-content source=tool:web-fetch>\n");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// When `inner` fails to take the opening marker.
    pub fn new(inner: W, source: &Source) -> io::Result<FenceWriter<W>> {
        let mut writer = FenceWriter {
            inner: Some(inner),
            fencing: Fencing::open(source),
            inner_failed: false,
        };
        writer.send()?;
        Ok(writer)
    }

    /// Writes the bytes held back, the separator and the closing marker, flushes the inner
    /// writer and returns it.
    ///
    /// ```
    /// use std::io::Write;
    /// use fence_runtime::{FenceWriter, Source};
    ///
    /// let mut writer = FenceWriter::new(Vec::new(), &Source::tool("t"))?;
    /// writer.write_all(b"a </untrusted-conten")?; // the tail is held back...
    /// let bytes = writer.finish()?;             // ...and at the end it is not a marker
    /// assert_eq!(bytes, b"<untrusted-content source=tool:t>\na </untrusted-conten\n</untrusted-content>");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// When the inner writer fails. The [`FinishError`] holds the writer, with the rest of the
    /// block still queued: [`into_writer`](FinishError::into_writer) and `finish` again to
    /// retry. Dropped, it writes nothing more, and the block stays open.
    ///
    /// ```
    /// use std::io::{self, Write};
    /// use fence_runtime::{FenceWriter, Source};
    ///
    /// /// Fails the first `flush`, as a socket might for a moment.
    /// #[derive(Debug)]
    /// struct Hiccup { out: Vec<u8>, flushed: bool }
    /// impl Write for Hiccup {
    ///     fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
    ///         self.out.extend_from_slice(buf);
    ///         Ok(buf.len())
    ///     }
    ///     fn flush(&mut self) -> io::Result<()> {
    ///         if std::mem::replace(&mut self.flushed, true) {
    ///             Ok(())
    ///         } else {
    ///             Err(io::Error::other("try again"))
    ///         }
    ///     }
    /// }
    ///
    /// let inner = Hiccup { out: Vec::new(), flushed: false };
    /// let mut writer = FenceWriter::new(inner, &Source::tool("t"))?;
    /// writer.write_all(b"all of it")?;
    /// let err = writer.finish().unwrap_err();
    /// assert_eq!(err.error().to_string(), "try again");
    /// let inner = err.into_writer().finish()?;
    /// assert_eq!(inner.out, b"<untrusted-content source=tool:t>\nall of it\n</untrusted-content>");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn finish(self) -> Result<W, FinishError<FenceWriter<W>>> {
        self.close_with(End::Complete)
    }

    /// Closes the block as one whose content was cut short, and returns the inner writer: the
    /// bytes held back, the [`TRUNCATION_NOTICE`](crate::TRUNCATION_NOTICE) on a line of its own,
    /// the separator and the closing marker, then a flush. What dropping an unfinished writer
    /// does, with errors reported: for a producer that knows its content is incomplete.
    ///
    /// ```
    /// use std::io::Write;
    /// use fence_runtime::{parse, FenceWriter, Source};
    ///
    /// let mut writer = FenceWriter::new(Vec::new(), &Source::tool("t"))?;
    /// writer.write_all(b"rows 1-100 of 5000")?;
    /// let bytes = writer.finish_truncated()?;
    /// let text = String::from_utf8(bytes).unwrap();
    /// assert!(parse(&text).unwrap().is_truncated());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`finish`](Self::finish). Once either has queued the end of the block, retrying
    /// with either only writes it out.
    pub fn finish_truncated(self) -> Result<W, FinishError<FenceWriter<W>>> {
        self.close_with(End::Truncated)
    }

    fn close_with(mut self, end: End) -> Result<W, FinishError<FenceWriter<W>>> {
        match self.close(end) {
            Ok(()) => Ok(self.take_inner()),
            Err(error) => Err(FinishError::new(error, self)),
        }
    }

    /// The inner writer. There is no `get_mut`: bytes written around the fence would break the
    /// block.
    ///
    /// ```
    /// use fence_runtime::{FenceWriter, Source};
    ///
    /// let writer = FenceWriter::new(Vec::new(), &Source::tool("t"))?;
    /// assert!(writer.get_ref().starts_with(b"<untrusted-content"));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn get_ref(&self) -> &W {
        self.inner
            .as_ref()
            .unwrap_or_else(|| unreachable!("{TAKEN}"))
    }

    /// The source the block is fenced under.
    ///
    /// ```
    /// use fence_runtime::{FenceWriter, Source};
    ///
    /// let writer = FenceWriter::new(Vec::new(), &Source::tool("bash"))?;
    /// assert_eq!(writer.source().as_str(), "tool:bash");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn source(&self) -> &Source {
        self.fencing.source()
    }

    /// The bytes held back because they could still begin a marker: never more than 18.
    ///
    /// ```
    /// use std::io::Write;
    /// use fence_runtime::{FenceWriter, Source};
    ///
    /// let mut writer = FenceWriter::new(Vec::new(), &Source::tool("t"))?;
    /// writer.write_all(b"x </UNTRUS")?;
    /// assert_eq!(writer.held(), b"</UNTRUS");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn held(&self) -> &[u8] {
        self.fencing.held()
    }

    /// Takes the inner writer, leaving drop nothing to do.
    fn take_inner(&mut self) -> W {
        self.inner.take().unwrap_or_else(|| unreachable!("{TAKEN}"))
    }

    /// Writes the unsent output to the inner writer, keeping track of what it accepted.
    fn send(&mut self) -> io::Result<()> {
        let Some(inner) = self.inner.as_mut() else {
            return Ok(());
        };
        while !self.fencing.unsent().is_empty() {
            self.inner_failed = true;
            match inner.write(self.fencing.unsent()) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::WriteZero,
                        "the inner writer accepted no bytes of the fenced block",
                    ));
                }
                Ok(n) => self.fencing.advance(n),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(err),
            }
            self.inner_failed = false;
        }
        Ok(())
    }

    /// Writes the start of `buf` that neutralising leaves as it is straight to the inner writer,
    /// without a copy through the pending buffer (most content is such), and says how much it
    /// wrote. Zero when there is no such start, or the inner writer took none of it (failed,
    /// or accepted nothing): the caller then queues `buf` under the queued path's rules.
    fn write_clean(&mut self, buf: &[u8]) -> usize {
        let clean = self.fencing.clean_prefix(buf);
        let Some(inner) = self.inner.as_mut().filter(|_| clean > 0) else {
            return 0;
        };
        loop {
            self.inner_failed = true;
            match inner.write(&buf[..clean]) {
                Ok(0) => return 0,
                Ok(written) => {
                    self.inner_failed = false;
                    return written;
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return 0,
            }
        }
    }

    fn flush_inner(&mut self) -> io::Result<()> {
        if let Some(inner) = self.inner.as_mut() {
            self.inner_failed = true;
            inner.flush()?;
            self.inner_failed = false;
        }
        Ok(())
    }

    /// Queues the end of the block (once) and writes everything out.
    fn close(&mut self, end: End) -> io::Result<()> {
        self.fencing.queue_close(end);
        self.send()?;
        self.flush_inner()
    }
}

impl<W: Write> Write for FenceWriter<W> {
    /// # Errors
    ///
    /// As the inner writer's, and after a failed [`finish`](FenceWriter::finish), whose
    /// writer's block is closing: nothing more may be written.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.fencing.is_closed() {
            return Err(closed_error());
        }
        self.send()?;
        let mut taken = 0;
        while taken < buf.len() {
            let written = self.write_clean(&buf[taken..]);
            if written > 0 {
                taken += written;
                continue;
            }
            taken += self.fencing.queue(&buf[taken..]);
            if self.send().is_err() {
                // These bytes are taken and neutralised: what the inner writer did not accept
                // stays queued, and the next call retries it and reports a lasting error.
                break;
            }
        }
        Ok(taken)
    }

    /// Writes out everything but the bytes held back (which may yet become a marker) and
    /// flushes the inner writer.
    fn flush(&mut self) -> io::Result<()> {
        self.send()?;
        self.flush_inner()
    }
}

impl<W: Write> Drop for FenceWriter<W> {
    fn drop(&mut self) {
        if self.inner.is_some() && !self.inner_failed {
            // Best effort, like `BufWriter`: `finish` is how to see errors. Unfinished, the
            // content was cut short; after a failed `finish`, the end queued then goes out.
            let _ = self.close(End::Truncated);
        }
    }
}

impl<W: Write + fmt::Debug> fmt::Debug for FenceWriter<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FenceWriter")
            .field("inner", &self.inner)
            .field("source", &self.fencing.source().as_str())
            .field("held", &self.fencing.held())
            .field("unsent", &self.fencing.unsent().len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::*;
    use crate::fence::PIECE;
    use crate::fence::fence;

    #[test]
    fn big_writes_go_through_in_pieces() {
        let source = Source::tool("t");
        let content = "</untrusted-content>x".repeat(2 * PIECE);
        let mut writer = FenceWriter::new(Vec::new(), &source).unwrap();
        writer.write_all(content.as_bytes()).unwrap();
        assert!(writer.fencing.capacity() < 3 * PIECE);
        assert_eq!(
            writer.finish().unwrap(),
            fence(&source, &content).as_str().as_bytes()
        );
    }
}
