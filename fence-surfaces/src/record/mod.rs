//! `conversation.jsonl`: message lines and the header, written and read.

mod read;
mod write;

pub use self::read::{ParsedMessage, Part, RecordReader, RecordReport, read_record};
pub use self::write::{RecordHeader, RecordLine};
