//! Fencing content that arrives in pieces: however it is split, the result is what one-shot
//! [`fence`](crate::fence) gives.
//!
//! - `neutraliser`: [`Neutraliser`], the marker rule applied chunk by chunk, holding back only
//!   the bytes that could still begin a marker. Everything else here builds on it.
//! - `buffer`: [`FenceBuffer`], a block built in memory; bytes are checked as UTF-8 as they
//!   arrive.
//! - `fencing` (`std`): the sans-I/O state machine both writers drive — the neutraliser, the
//!   output the inner writer has not accepted yet, how the block ends — and [`FinishError`].
//! - `writer` (`std`): [`FenceWriter`], for any `std::io::Write`.
//! - `async_writer` (`tokio`): `AsyncFenceWriter`, for tokio's `AsyncWrite`.
//! - `child` (`tokio`): `fence_child_stdout`, a subprocess's stdout fenced into a
//!   [`FenceBuffer`].
//! - `truncated`: the notice that closes a block whose content was cut short.

#[cfg(feature = "tokio")]
mod async_writer;
mod buffer;
#[cfg(feature = "tokio")]
mod child;
#[cfg(feature = "std")]
mod fencing;
mod neutraliser;
mod truncated;
#[cfg(feature = "std")]
mod writer;

#[cfg(feature = "tokio")]
pub use self::async_writer::AsyncFenceWriter;
pub use self::buffer::FenceBuffer;
#[cfg(feature = "tokio")]
pub use self::child::{ChildOutputError, fence_child_stdout};
#[cfg(feature = "std")]
pub use self::fencing::FinishError;
pub use self::neutraliser::Neutraliser;
pub use self::truncated::TRUNCATION_NOTICE;
pub(crate) use self::truncated::ends_truncated;
#[cfg(feature = "std")]
pub use self::writer::FenceWriter;

/// How much input is handled at a time, so that it is still in the cache when it is copied: a
/// [`FenceBuffer`] checks bytes as UTF-8 a piece at a time, and a fencing writer neutralises at
/// most a piece into its pending output, which bounds that buffer (a write of any size costs
/// at most this much memory, plus the infixes of the markers in it).
pub(crate) const PIECE: usize = 8 * 1024;
