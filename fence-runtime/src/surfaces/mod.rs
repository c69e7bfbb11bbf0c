//! The surfaces that carry a fence — A2A `artifact` frames, `conversation.jsonl` lines and
//! `trace.jsonl` events — written from [`ModelContent`], and verified on read.
//!
//! The spec promises that no surface strips the fence, and that the two labelled surfaces label
//! it, on purpose, differently: an artifact frame's `fence_source` is on every frame (`null` when
//! unfenced), a record line's `fence` is absent when unfenced. This module makes both promises
//! hold for a runtime written with the toolkit, and checkable for records written by any
//! runtime.
//!
//! # Writing
//!
//! The writing types borrow a [`ToolOutput`] or a [`ModelContent`] and take `content` and its
//! label from that one value, so they cannot disagree; their fields are private. Keys are
//! written in the wire order of the field lists, with serde.
//!
//! - [`ArtifactFrame`] — every key present, `null` where it does not apply; [`SseEncoder`]
//!   writes it as `event: artifact`, `id: N`, `data: <json>` and a blank line.
//! - [`RecordLine`] and [`RecordHeader`] — optional keys absent when unset, `fence` only on a
//!   fenced line.
//! - [`ToolCallEvent`] and [`SkillCallEvent`] — `output_bytes` computed from the content, fence
//!   markers included; a `skill_call` is built from a skill's `skill.md` text and cannot carry
//!   fenced content.
//!
//! ```
//! use fence_runtime::{fence, Source, ToolOutput};
//! use fence_runtime::surfaces::{ArtifactFrame, CallMeta, RecordLine, SseEncoder};
//!
//! let output = ToolOutput::ok(fence(&Source::tool("bash"), "hello\n"));
//! let frame = ArtifactFrame::tool_result("tsk_1", "bash", &output, CallMeta::new("toolu_01", 12).exit_code(0));
//! let line = RecordLine::tool_result("toolu_01", &output);
//! assert_eq!(frame.fence_source(), Some("tool:bash"));
//! assert_eq!(line.fence(), Some("tool:bash"));
//! assert!(SseEncoder::new().encode(&frame).starts_with("event: artifact\nid: 1\ndata: {\"id\":\"tsk_1\""));
//! ```
//!
//! # Reading
//!
//! [`read_sse`] (or the incremental [`SseReader`]), [`read_frame`], [`read_record`] and
//! [`read_trace`] read into owned, tolerant types: unknown keys are ignored, and an absent label
//! is told apart from a `null` one ([`Label`]). Reading never panics and never stops early: a
//! malformed line becomes a [`LineError`] carrying its 1-based line number, and every [`Report`]
//! says how many units it read, skipped and failed.
//!
//! [`ModelContent`]: crate::ModelContent
//! [`ToolOutput`]: crate::ToolOutput

mod artifact;
mod read;
mod record;
mod sse;
mod trace;

pub use self::artifact::{ArtifactFrame, CallMeta, ParsedArtifact, ParsedFrame, read_frame};
pub use self::read::{Counts, Label, LineError, Located, Nullable, ReadError, Report};
pub use self::record::{ParsedMessage, Part, RecordHeader, RecordLine, RecordReport, read_record};
pub use self::sse::{SseEncoder, SseReader, StreamFrame, StreamReport, read_sse};
pub use self::trace::{
    EventMeta, ParsedEvent, ParsedSkillCall, ParsedToolCall, SkillCallEvent, StateEffect, Status,
    ToolCallEvent, TraceReport, read_trace,
};

use crate::content::ModelContent;

/// Text and the label that goes with it, taken together from one value. The writing types
/// build their `content` and `fence_source` / `fence` keys from one of these, and only the two
/// constructors below make one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Labelled<'a> {
    text: &'a str,
    fence: Option<&'a str>,
}

impl<'a> Labelled<'a> {
    /// The content's text and its fence source.
    fn of(content: &'a ModelContent) -> Labelled<'a> {
        Labelled {
            text: content.as_str(),
            fence: content.fence_source(),
        }
    }

    /// Text that is one of the spec's never-fenced exemptions (a skill's `skill.md`, a hook
    /// artifact), as [`ModelContent::skill_doc`] and [`ModelContent::hook_artifact`] build it.
    fn exempt(text: &'a str) -> Labelled<'a> {
        Labelled { text, fence: None }
    }
}
