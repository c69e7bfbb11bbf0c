//! The A2A stream: artifact frames as Server-Sent Events, written and read.

mod read;
mod write;

pub use self::read::{SseReader, StreamFrame, StreamReport, read_sse};
pub use self::write::SseEncoder;
