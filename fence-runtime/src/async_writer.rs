//! Fencing an async stream: [`AsyncFenceWriter`] wraps any tokio [`AsyncWrite`].

use core::fmt;
use core::pin::Pin;
use core::task::{Context, Poll, ready};
use std::io;

use tokio::io::AsyncWrite;

use crate::source::Source;
use crate::writer::Fencing;

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
/// taken its bytes comes back from the next call; nothing is dropped or repeated.
///
/// # Dropping an unfinished writer
///
/// A drop cannot wait for the inner writer, so dropping an `AsyncFenceWriter` before
/// [`finish`](Self::finish) or `shutdown` writes nothing more: the block stays open, and the
/// bytes held back or not yet accepted are discarded. (A non-blocking attempt could leave half
/// a closing marker, and polling an I/O object outside its task is a surprise.) Finish every
/// writer; [`fence_child_stdout`](crate::fence_child_stdout) always does.
///
/// ```
/// use tokio::io::AsyncWriteExt;
/// use fence_runtime::{AsyncFenceWriter, Source};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let mut sink = Vec::new();
/// let mut writer = AsyncFenceWriter::new(&mut sink, &Source::tool("t"));
/// writer.write_all(b"cut short </untrus").await?;
/// drop(writer);
/// assert_eq!(sink, b"<untrusted-content source=tool:t>\ncut short ");
/// # Ok(())
/// # }
/// ```
pub struct AsyncFenceWriter<W> {
    inner: W,
    fencing: Fencing,
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
    pub fn new(inner: W, source: &Source) -> AsyncFenceWriter<W> {
        AsyncFenceWriter {
            inner,
            fencing: Fencing::open(source),
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
    /// When the inner writer fails.
    pub async fn finish(mut self) -> io::Result<W> {
        core::future::poll_fn(|cx| self.poll_close(cx, false)).await?;
        Ok(self.inner)
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
        &self.inner
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

    /// Writes the unsent output to the inner writer, keeping track of what it accepted.
    fn poll_send(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.fencing.unsent().is_empty() {
            match ready!(Pin::new(&mut self.inner).poll_write(cx, self.fencing.unsent())) {
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
    fn poll_close(&mut self, cx: &mut Context<'_>, shutdown: bool) -> Poll<io::Result<()>> {
        self.fencing.queue_close();
        ready!(self.poll_send(cx))?;
        let inner = Pin::new(&mut self.inner);
        if shutdown {
            inner.poll_shutdown(cx)
        } else {
            inner.poll_flush(cx)
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
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the fenced block is already closed",
            )));
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
                match Pin::new(&mut this.inner).poll_write(cx, &buf[taken..taken + clean]) {
                    Poll::Ready(Ok(written @ 1..)) => {
                        taken += written;
                        continue;
                    }
                    Poll::Pending if taken == 0 => return Poll::Pending,
                    Poll::Pending => break,
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
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    /// Closes the block — the bytes held back, the separator and the closing marker — and
    /// shuts the inner writer down.
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_close(cx, true)
    }
}

impl<W: fmt::Debug> fmt::Debug for AsyncFenceWriter<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFenceWriter")
            .field("inner", &self.inner)
            .field("source", &self.fencing.source().as_str())
            .field("held", &self.fencing.held())
            .field("unsent", &self.fencing.unsent().len())
            .finish_non_exhaustive()
    }
}
