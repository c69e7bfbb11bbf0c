//! `trace.jsonl`: `tool_call` and `skill_call` events, written and read.

mod read;
mod write;

pub use self::read::{
    ParsedEvent, ParsedSkillCall, ParsedToolCall, TraceReader, TraceReport, read_trace,
};
pub use self::write::{EventMeta, SkillCallEvent, StateEffect, Status, ToolCallEvent};
