//! A2A `artifact` frames: the JSON an SSE event's `data` carries.

mod read;
mod write;

pub(crate) use self::read::read_frame_bytes;
pub use self::read::{ParsedArtifact, ParsedFrame, read_frame};
pub use self::write::{ArtifactFrame, CallMeta};
