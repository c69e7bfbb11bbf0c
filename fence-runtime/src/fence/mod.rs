//! The block: the markers the fence writes around content, whole or cut short.
//!
//! - `block`: [`fence`] and [`FencedBlock`], for content in one piece.
//! - `truncated`: the notice that closes a block whose content was cut short.
//! - `buffer`: [`FenceBuffer`], for content that arrives in pieces, fenced in memory.

mod block;
mod buffer;
mod truncated;

pub(crate) use self::block::CLOSER;
pub use self::block::{FencedBlock, fence};
pub use self::buffer::FenceBuffer;
pub use self::truncated::TRUNCATION_NOTICE;
pub(crate) use self::truncated::ends_truncated;
// What the writers of `io` build on.
#[cfg(feature = "std")]
pub(crate) use self::{
    block::{TAIL, opener_len, push_opener},
    buffer::PIECE,
    truncated::TRUNCATED_TAIL,
};
