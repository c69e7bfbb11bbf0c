//! Fencing into a writer as content arrives: however it is split, the block is what one-shot
//! [`fence`](crate::fence) gives.
//!
//! - `fencing`: the sans-I/O state both writers drive. It holds the neutraliser, the output the
//!   inner writer has not accepted yet, and how the block ends. [`FinishError`] is here too.
//! - `writer`: [`FenceWriter`], for any `std::io::Write`.
//! - `async_writer` (`tokio`): `AsyncFenceWriter`, for tokio's `AsyncWrite`.
//! - `child` (`tokio`): `fence_child_stdout`, a subprocess's stdout fenced into a
//!   [`FenceBuffer`](crate::FenceBuffer).
//!
//! The module needs `std`.

#[cfg(feature = "tokio")]
mod async_writer;
#[cfg(feature = "tokio")]
mod child;
mod fencing;
mod writer;

#[cfg(feature = "tokio")]
pub use self::async_writer::AsyncFenceWriter;
#[cfg(feature = "tokio")]
pub use self::child::{ChildOutputError, fence_child_stdout};
pub use self::fencing::FinishError;
pub use self::writer::FenceWriter;
