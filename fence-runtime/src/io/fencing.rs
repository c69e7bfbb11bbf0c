//! What both fencing writers share: the sans-I/O state machine that neutralises content into
//! the output the inner writer has not accepted yet, how a block ends, and the error of a
//! failed `finish`.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use std::io;

use crate::fence::{PIECE, TAIL, TRUNCATED_TAIL, opener_len, push_opener};
use crate::neutralise::Neutraliser;
use crate::source::Source;

/// What a fencing writer owes its inner writer, apart from the inner writer itself: the
/// neutraliser's state and the output the inner writer has not accepted yet. Shared by
/// [`FenceWriter`](crate::FenceWriter) and the `tokio` feature's `AsyncFenceWriter`.
#[derive(Clone, Debug)]
pub(crate) struct Fencing {
    neutraliser: Neutraliser,
    /// Output for the inner writer; it has accepted `out[..sent]`.
    out: Vec<u8>,
    sent: usize,
    /// Whether the end of the block (the held bytes, the separator and the closing marker) is
    /// queued.
    closed: bool,
    source: Source,
}

impl Fencing {
    /// Queues the opening marker and its separator.
    pub(crate) fn open(source: &Source) -> Fencing {
        let mut opener = String::with_capacity(opener_len(source));
        push_opener(&mut opener, source);
        Fencing {
            neutraliser: Neutraliser::new(),
            out: opener.into_bytes(),
            sent: 0,
            closed: false,
            source: source.clone(),
        }
    }

    /// How much the pending output can hold before it grows.
    #[cfg(test)]
    pub(super) fn capacity(&self) -> usize {
        self.out.capacity()
    }

    /// Output the inner writer has not accepted yet.
    pub(crate) fn unsent(&self) -> &[u8] {
        &self.out[self.sent..]
    }

    /// Records that the inner writer accepted the first `n` unsent bytes.
    pub(crate) fn advance(&mut self, n: usize) {
        debug_assert!(n <= self.unsent().len());
        self.sent += n;
        if self.sent == self.out.len() {
            self.out.clear();
            self.sent = 0;
        }
    }

    /// Neutralises a first piece of `buf` into the unsent output and says how many bytes of
    /// `buf` it took: at least one when `buf` is not empty.
    pub(crate) fn queue(&mut self, buf: &[u8]) -> usize {
        debug_assert!(!self.closed, "content queued after the closing marker");
        let piece = &buf[..buf.len().min(PIECE)];
        self.neutraliser.push_bytes(piece, &mut self.out);
        piece.len()
    }

    /// How much of the start of `buf` may go to the inner writer as it is, straight from `buf`:
    /// nothing is waiting to go out before it, and neutralising leaves it unchanged.
    pub(crate) fn clean_prefix(&self, buf: &[u8]) -> usize {
        if self.closed || !self.unsent().is_empty() {
            return 0;
        }
        self.neutraliser.clean_prefix(&buf[..buf.len().min(PIECE)])
    }

    /// Queues the end of the block, once: the held bytes, then — when the content was cut
    /// short — the truncation notice on a line of its own, the separator and the closing
    /// marker. Once it is queued, closing again only writes it out.
    pub(crate) fn queue_close(&mut self, end: End) {
        if !self.closed {
            self.closed = true;
            core::mem::take(&mut self.neutraliser).finish_bytes(&mut self.out);
            self.out.extend_from_slice(match end {
                End::Complete => TAIL.as_bytes(),
                End::Truncated => TRUNCATED_TAIL.as_bytes(),
            });
        }
    }

    /// Whether the end of the block is queued: nothing more may be written.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    pub(crate) fn held(&self) -> &[u8] {
        self.neutraliser.held()
    }

    pub(crate) fn source(&self) -> &Source {
        &self.source
    }
}

/// How a block ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// The content is whole.
    Complete,
    /// The content was cut short: the truncation notice follows it.
    Truncated,
}

/// The error for a write after the end of the block was queued.
pub(crate) fn closed_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::BrokenPipe,
        "the fenced block is already closed: start a new fencing writer for more content",
    )
}

/// A fencing writer's [`finish`](crate::FenceWriter::finish) (or `finish_truncated`) failed: the
/// error, and the writer, to retry with. Like [`std::io::IntoInnerError`]. Until a retry
/// succeeds, the block has no closing marker.
///
/// `T` is the fencing writer: [`FenceWriter`](crate::FenceWriter), or the `tokio` feature's
/// `AsyncFenceWriter`. `?` turns it into the [`io::Error`] it holds,
/// dropping the writer.
///
/// ```
/// use std::io::{self, Write};
/// use fence_runtime::{FenceWriter, Source};
///
/// #[derive(Debug)]
/// struct Unplugged;
/// impl Write for Unplugged {
///     fn write(&mut self, buf: &[u8]) -> io::Result<usize> { Ok(buf.len()) }
///     fn flush(&mut self) -> io::Result<()> { Err(io::Error::other("unplugged")) }
/// }
///
/// let err = FenceWriter::new(Unplugged, &Source::tool("t"))?.finish().unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "could not close the fenced block, which is still open: unplugged \
///      (`into_writer` gives back the writer to retry `finish` with)",
/// );
/// let err: io::Error = err.into(); // what `?` does
/// assert_eq!(err.to_string(), "unplugged");
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub struct FinishError<T> {
    error: io::Error,
    writer: T,
}

impl<T> FinishError<T> {
    pub(crate) fn new(error: io::Error, writer: T) -> FinishError<T> {
        FinishError { error, writer }
    }

    /// Why the block could not be closed.
    ///
    /// ```
    /// # use std::io::{self, Write};
    /// # #[derive(Debug)]
    /// # struct Unplugged;
    /// # impl Write for Unplugged {
    /// #     fn write(&mut self, buf: &[u8]) -> io::Result<usize> { Ok(buf.len()) }
    /// #     fn flush(&mut self) -> io::Result<()> { Err(io::Error::other("unplugged")) }
    /// # }
    /// use fence_runtime::{FenceWriter, Source};
    ///
    /// let err = FenceWriter::new(Unplugged, &Source::tool("t"))?.finish().unwrap_err();
    /// assert_eq!(err.error().to_string(), "unplugged");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn error(&self) -> &io::Error {
        &self.error
    }

    /// The fencing writer, with the end of the block still queued: call `finish` on it to
    /// retry. (Writing more content to it is an error: the block is closing.)
    ///
    /// ```
    /// use std::io::{self, Write};
    /// use fence_runtime::{FenceWriter, Source};
    ///
    /// /// Fails the first flush only.
    /// #[derive(Debug)]
    /// struct Hiccup(bool);
    /// impl Write for Hiccup {
    ///     fn write(&mut self, buf: &[u8]) -> io::Result<usize> { Ok(buf.len()) }
    ///     fn flush(&mut self) -> io::Result<()> {
    ///         if std::mem::replace(&mut self.0, true) { Ok(()) } else { Err(io::Error::other("hiccup")) }
    ///     }
    /// }
    ///
    /// let err = FenceWriter::new(Hiccup(false), &Source::tool("t"))?.finish().unwrap_err();
    /// let mut writer = err.into_writer();
    /// assert!(writer.write_all(b"more").is_err());
    /// writer.finish()?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn into_writer(self) -> T {
        self.writer
    }

    /// The error, dropping the writer (which writes nothing more).
    ///
    /// ```
    /// # use std::io::{self, Write};
    /// # #[derive(Debug)]
    /// # struct Unplugged;
    /// # impl Write for Unplugged {
    /// #     fn write(&mut self, buf: &[u8]) -> io::Result<usize> { Ok(buf.len()) }
    /// #     fn flush(&mut self) -> io::Result<()> { Err(io::Error::other("unplugged")) }
    /// # }
    /// use fence_runtime::{FenceWriter, Source};
    ///
    /// let err = FenceWriter::new(Unplugged, &Source::tool("t"))?.finish().unwrap_err();
    /// assert_eq!(err.into_error().kind(), std::io::ErrorKind::Other);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn into_error(self) -> io::Error {
        self.error
    }

    /// The error and the writer.
    ///
    /// ```
    /// # use std::io::{self, Write};
    /// # #[derive(Debug)]
    /// # struct Unplugged;
    /// # impl Write for Unplugged {
    /// #     fn write(&mut self, buf: &[u8]) -> io::Result<usize> { Ok(buf.len()) }
    /// #     fn flush(&mut self) -> io::Result<()> { Err(io::Error::other("unplugged")) }
    /// # }
    /// use fence_runtime::{FenceWriter, Source};
    ///
    /// let err = FenceWriter::new(Unplugged, &Source::tool("t"))?.finish().unwrap_err();
    /// let (error, writer) = err.into_parts();
    /// assert_eq!(error.to_string(), "unplugged");
    /// assert_eq!(writer.source().as_str(), "tool:t");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn into_parts(self) -> (io::Error, T) {
        (self.error, self.writer)
    }
}

impl<T> fmt::Display for FinishError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "could not close the fenced block, which is still open: {} \
             (`into_writer` gives back the writer to retry `finish` with)",
            self.error
        )
    }
}

impl<T: fmt::Debug> std::error::Error for FinishError<T> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.error.source()
    }
}

impl<T> From<FinishError<T>> for io::Error {
    fn from(err: FinishError<T>) -> io::Error {
        err.error
    }
}
