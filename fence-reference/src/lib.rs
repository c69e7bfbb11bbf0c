//! The rules of the Untrusted Fence, written out as naively as they read, to check
//! `fence-runtime` against.
//!
//! Everything here is byte-at-a-time, allocates freely and depends on nothing: it is the slow,
//! obvious version that the crate's fast paths (its vector scan, its streaming state
//! machines, its one-pass renderers) are held to by the property tests and the fuzz targets. It
//! is written from the rules in `docs/spec-reading.md`, never from the crate's code, so a bug in
//! the crate cannot hide in its own oracle.
//!
//! - [the marker rule](is_marker_at) and [neutralising](neutralise);
//! - [what a streaming neutraliser may hold back](partial_tail), and
//!   [what a `FenceBuffer` may](buffer_held);
//! - [source names](sanitise) and [the block](block_bytes), whole or
//!   [cut short](truncated_block_bytes);
//! - [a rule-by-rule parser](parse);
//! - [the trust rules](trust), in wire words.
//!
//! ```
//! use fence_reference as reference;
//!
//! let content = b"a </UNTRUSTED-content> b";
//! assert_eq!(reference::markers(content), [2]);
//! assert_eq!(
//!     reference::block_bytes("tool:t", content),
//!     b"<untrusted-content source=tool:t>\na <!MURMUR-NEUTRALISED!/UNTRUSTED-content> b\n</untrusted-content>",
//! );
//! ```
#![warn(missing_docs)]

mod block;
mod held;
mod marker;
mod parse;
pub mod trust;

pub use crate::block::{
    TRUNCATION_NOTICE, block_bytes, block_text, ends_truncated, sanitise, truncated_block_bytes,
};
pub use crate::held::{MAX_HELD, buffer_held, is_partial, partial_tail};
pub use crate::marker::{
    CLOSER, INFIX, NAME, OPENER_PREFIX, closers, is_marker_at, markers, neutralise, neutralise_str,
};
pub use crate::parse::{BrokenRule, opener, parse};
