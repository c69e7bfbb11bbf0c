//! Fencing an async stream: [`AsyncFenceWriter`] wraps any tokio [`AsyncWrite`].

use core::fmt;
use core::pin::Pin;
use core::task::{Context, Poll, Waker, ready};
use std::io;

use tokio::io::AsyncWrite;

use super::fencing::{End, Fencing, FinishError, closed_error};
use crate::marker::MAX_PARTIAL;
use crate::source::Source;

/// Why `AsyncFenceWriter::inner` is always `Some` where it is read.
const TAKEN: &str = "the inner writer is only taken by methods that consume the writer";

/// Fences content that arrives in pieces, straight into a tokio [`AsyncWrite`]: the async
/// counterpart of [`FenceWriter`](crate::FenceWriter). Requires the `tokio` feature. (To fence
/// into a block in memory, write to a [`FenceBuffer`](crate::FenceBuffer): it is an
/// `AsyncWrite` too.)
///
/// [`new`](Self::new) queues the opening marker, which goes out with the first write or flush;
/// everything written is neutralised on its way to the inner writer, including markers split
/// across writes; [`finish`](Self::finish) (or [`shutdown`](tokio::io::AsyncWriteExt::shutdown))
/// writes the bytes held back, the separator and the closing marker. Whatever the writes are,
/// the inner writer receives exactly [`fence`](crate::fence) of everything written.
///
/// ```
/// use tokio::io::AsyncWriteExt;
/// use fence_runtime::{fence, AsyncFenceWriter, Source};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let source = Source::tool("peer");
/// let mut writer = AsyncFenceWriter::new(Vec::new(), &source);
/// writer.write_all(b"data: </untrus").await?;
/// writer.write_all(b"ted-content>\n").await?;
/// let bytes = writer.finish().await?;
/// assert_eq!(bytes, fence(&source, "data: </untrusted-content>\n").as_str().as_bytes());
/// # Ok(())
/// # }
/// ```
///
/// # Partial writes and backpressure
///
/// Output the inner writer has not accepted yet waits in a buffer of the writer's own, and is
/// written before anything else: while it waits, a write takes no new bytes and returns
/// `Pending`. A write takes at most 8 KiB of input beyond what the inner writer accepts at
/// once, so the buffer stays small however fast the content arrives. As with
/// [`FenceWriter`](crate::FenceWriter), an error the inner writer returns after a write has
/// taken its bytes comes back from the next call; nothing is dropped or repeated. A failed
/// [`finish`](Self::finish) gives the writer back inside its [`FinishError`], to retry. What a
/// write sends is decided on the bytes it took, so a caller may give up on the rest of a write
/// (a cancelled `write_all`) and write other bytes next.
///
/// # Content cut short
///
/// [`finish_truncated`](Self::finish_truncated) closes the block with the
/// [`TRUNCATION_NOTICE`](crate::TRUNCATION_NOTICE) on a line of its own before the separator and
/// the closing marker: for a producer that knows its content is incomplete.
///
/// Dropping an `AsyncFenceWriter` before `finish` or `shutdown` — an early `?`, a cancelled
/// future, a panic — does the same on a best-effort basis. A drop cannot wait, so it makes one
/// non-blocking attempt (with a no-op waker) to write the bytes held back or not yet accepted,
/// the notice and the closing marker, and flushes if that went through. A writer with room —
/// a `Vec`, a pipe or socket whose buffer is not full, a `DuplexStream` — takes it all; one that
/// pushes back or fails is left with the block open, without its closing marker, which
/// [`parse`](crate::parse) refuses. Drop writes nothing outside a tokio runtime (some of
/// tokio's writers panic there), nor after the inner writer's last call failed or panicked.
/// Call `finish` or `finish_truncated` to be sure, and to see errors.
///
/// ```
/// use tokio::io::AsyncWriteExt;
/// use fence_runtime::{parse, AsyncFenceWriter, Source};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let mut sink = Vec::new();
/// let mut writer = AsyncFenceWriter::new(&mut sink, &Source::tool("t"));
/// writer.write_all(b"cut short </untrus").await?;
/// drop(writer);
/// let text = String::from_utf8(sink).unwrap();
/// assert_eq!(
///     text,
///     "<untrusted-content source=tool:t>\n\
///      cut short </untrus\n\
///      [!MURMUR-TRUNCATED! the content above is incomplete: its stream was cut short]\n\
///      </untrusted-content>",
/// );
/// assert!(parse(&text).unwrap().is_truncated());
/// # Ok(())
/// # }
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub struct AsyncFenceWriter<W: AsyncWrite + Unpin> {
    /// `None` once `finish` has taken it.
    inner: Option<W>,
    fencing: Fencing,
    /// Set around every poll of `inner`, and left set when the poll fails or panics.
    inner_failed: bool,
}

impl<W: AsyncWrite + Unpin> AsyncFenceWriter<W> {
    /// A writer fencing under `source` into `inner`; the opening marker is queued, and goes out
    /// with the first write or flush.
    ///
    /// ```
    /// use fence_runtime::{AsyncFenceWriter, Source};
    ///
    /// let writer = AsyncFenceWriter::new(tokio::io::sink(), &Source::tool("t"));
    /// assert_eq!(writer.source().as_str(), "tool:t");
    /// ```
    #[must_use = "the writer only queues the opening marker: write the content to it, then finish it"]
    pub fn new(inner: W, source: &Source) -> AsyncFenceWriter<W> {
        AsyncFenceWriter {
            inner: Some(inner),
            fencing: Fencing::open(source),
            inner_failed: false,
        }
    }

    /// Writes the bytes held back, the separator and the closing marker, flushes the inner
    /// writer and returns it (without shutting it down).
    ///
    /// ```
    /// use tokio::io::AsyncWriteExt;
    /// use fence_runtime::{AsyncFenceWriter, Source};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let mut writer = AsyncFenceWriter::new(Vec::new(), &Source::tool("t"));
    /// writer.write_all(b"tail <").await?;
    /// let bytes = writer.finish().await?;
    /// assert_eq!(bytes, b"<untrusted-content source=tool:t>\ntail <\n</untrusted-content>");
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// When the inner writer fails. The [`FinishError`] holds the writer, with the rest of the
    /// block still queued: [`into_writer`](FinishError::into_writer) and `finish` again to
    /// retry. (`?` turns it into the [`io::Error`] it holds.)
    pub async fn finish(self) -> Result<W, FinishError<AsyncFenceWriter<W>>> {
        self.close_with(End::Complete).await
    }

    /// Closes the block as one whose content was cut short, flushes the inner writer and
    /// returns it: the bytes held back, the [`TRUNCATION_NOTICE`](crate::TRUNCATION_NOTICE) on
    /// a line of its own, the separator and the closing marker.
    ///
    /// ```
    /// use tokio::io::AsyncWriteExt;
    /// use fence_runtime::{parse, AsyncFenceWriter, Source};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let mut writer = AsyncFenceWriter::new(Vec::new(), &Source::tool("t"));
    /// writer.write_all(b"the first 100 rows").await?;
    /// let bytes = writer.finish_truncated().await?;
    /// assert!(parse(std::str::from_utf8(&bytes).unwrap()).unwrap().is_truncated());
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`finish`](Self::finish). Once either has queued the end of the block, retrying
    /// with either only writes it out.
    pub async fn finish_truncated(self) -> Result<W, FinishError<AsyncFenceWriter<W>>> {
        self.close_with(End::Truncated).await
    }

    async fn close_with(mut self, end: End) -> Result<W, FinishError<AsyncFenceWriter<W>>> {
        match core::future::poll_fn(|cx| self.poll_close(cx, end, false)).await {
            Ok(()) => Ok(self.inner.take().unwrap_or_else(|| unreachable!("{TAKEN}"))),
            Err(error) => Err(FinishError::new(error, self)),
        }
    }

    /// The inner writer. There is no `get_mut`: bytes written around the fence would break the
    /// block.
    ///
    /// ```
    /// use fence_runtime::{AsyncFenceWriter, Source};
    ///
    /// let writer = AsyncFenceWriter::new(Vec::new(), &Source::tool("t"));
    /// assert!(writer.get_ref().is_empty()); // the opening marker is still queued
    /// ```
    pub fn get_ref(&self) -> &W {
        self.inner
            .as_ref()
            .unwrap_or_else(|| unreachable!("{TAKEN}"))
    }

    /// The source the block is fenced under.
    ///
    /// ```
    /// use fence_runtime::{AsyncFenceWriter, Source};
    ///
    /// let writer = AsyncFenceWriter::new(tokio::io::sink(), &Source::tool("bash"));
    /// assert_eq!(writer.source().as_str(), "tool:bash");
    /// ```
    pub fn source(&self) -> &Source {
        self.fencing.source()
    }

    /// The bytes held back because they could still begin a marker: never more than 18.
    ///
    /// ```
    /// use tokio::io::AsyncWriteExt;
    /// use fence_runtime::{AsyncFenceWriter, Source};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> std::io::Result<()> {
    /// let mut writer = AsyncFenceWriter::new(Vec::new(), &Source::tool("t"));
    /// writer.write_all(b"x <untrusted").await?;
    /// assert_eq!(writer.held(), b"<untrusted");
    /// # Ok(())
    /// # }
    /// ```
    pub fn held(&self) -> &[u8] {
        self.fencing.held()
    }

    /// Polls the inner writer with `poll`, keeping `inner_failed` set unless it returns
    /// without an error.
    fn poll_inner<T>(
        &mut self,
        poll: impl FnOnce(Pin<&mut W>, &[u8]) -> Poll<io::Result<T>>,
        buf: Option<&[u8]>,
    ) -> Poll<io::Result<T>> {
        let inner = self
            .inner
            .as_mut()
            .unwrap_or_else(|| unreachable!("{TAKEN}"));
        self.inner_failed = true;
        let polled = poll(
            Pin::new(inner),
            buf.unwrap_or_else(|| self.fencing.unsent()),
        );
        self.inner_failed = matches!(polled, Poll::Ready(Err(_)));
        polled
    }

    /// Writes the unsent output to the inner writer, keeping track of what it accepted.
    fn poll_send(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.fencing.unsent().is_empty() {
            match ready!(self.poll_inner(|inner, unsent| inner.poll_write(cx, unsent), None)) {
                Ok(0) => {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::WriteZero,
                        "the inner writer accepted no bytes of the fenced block",
                    )));
                }
                Ok(n) => self.fencing.advance(n),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Poll::Ready(Err(err)),
            }
        }
        Poll::Ready(Ok(()))
    }

    /// Queues the end of the block (once), writes everything out, and flushes or shuts down
    /// the inner writer.
    fn poll_close(
        &mut self,
        cx: &mut Context<'_>,
        end: End,
        shutdown: bool,
    ) -> Poll<io::Result<()>> {
        self.fencing.queue_close(end);
        ready!(self.poll_send(cx))?;
        if shutdown {
            self.poll_inner(|inner, _| inner.poll_shutdown(cx), Some(&[]))
        } else {
            self.poll_inner(|inner, _| inner.poll_flush(cx), Some(&[]))
        }
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for AsyncFenceWriter<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.fencing.is_closed() {
            return Poll::Ready(Err(closed_error()));
        }
        ready!(this.poll_send(cx))?;
        let mut taken = 0;
        while taken < buf.len() {
            // Content that neutralising leaves as it is goes straight from `buf` to the inner
            // writer, without a copy through the pending buffer (see `FenceWriter`). When the
            // inner writer fails or takes nothing, the bytes are queued instead, under the
            // queued path's rules.
            let clean = this.fencing.clean_prefix(&buf[taken..]);
            if clean > 0 {
                let piece = &buf[taken..taken + clean];
                match this.poll_inner(|inner, piece| inner.poll_write(cx, piece), Some(piece)) {
                    Poll::Ready(Ok(written @ 1..)) => {
                        taken += written;
                        continue;
                    }
                    Poll::Pending if taken == 0 => return Poll::Pending,
                    Poll::Pending => {
                        // What went out was judged clean on the bytes after it (`</` is no
                        // marker when `untrus<` follows), which the caller need not offer
                        // again: take the few that decided it too, so the judgement stands.
                        let decided = buf.len().min(taken + MAX_PARTIAL);
                        taken += this.fencing.queue(&buf[taken..decided]);
                        break;
                    }
                    Poll::Ready(_) => {}
                }
            }
            taken += this.fencing.queue(&buf[taken..]);
            // These bytes are taken: what the inner writer does not accept now waits for the
            // next call, which also reports a lasting error.
            if !matches!(this.poll_send(cx), Poll::Ready(Ok(()))) {
                break;
            }
        }
        Poll::Ready(Ok(taken))
    }

    /// Writes out everything but the bytes held back (which may yet become a marker) and
    /// flushes the inner writer.
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_send(cx))?;
        this.poll_inner(|inner, _| inner.poll_flush(cx), Some(&[]))
    }

    /// Closes the block — the bytes held back, the separator and the closing marker — and
    /// shuts the inner writer down.
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_close(cx, End::Complete, true)
    }
}

impl<W: AsyncWrite + Unpin> Drop for AsyncFenceWriter<W> {
    fn drop(&mut self) {
        if self.inner.is_none()
            || self.inner_failed
            || tokio::runtime::Handle::try_current().is_err()
        {
            return;
        }
        // One non-blocking attempt: unfinished, the content was cut short; after a failed or
        // cancelled `finish`, the end queued then goes out.
        let mut cx = Context::from_waker(Waker::noop());
        let _ = self.poll_close(&mut cx, End::Truncated, false);
    }
}

impl<W: AsyncWrite + Unpin + fmt::Debug> fmt::Debug for AsyncFenceWriter<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFenceWriter")
            .field("inner", &self.inner)
            .field("source", &self.fencing.source().as_str())
            .field("held", &self.fencing.held())
            .field("unsent", &self.fencing.unsent().len())
            .finish_non_exhaustive()
    }
}
