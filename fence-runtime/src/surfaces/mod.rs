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
//! # Verifying
//!
//! [`verify_stream`], [`verify_record`], [`verify_trace`] and [`verify_frame`] return typed
//! [`Finding`]s. Every check for live markers goes through the crate's one marker matcher
//! ([`read_markers`]).
//!
//! ```
//! use fence_runtime::surfaces::{read_sse, verify_stream, FindingKind, VerifyContext};
//!
//! let capture = b"event: artifact\nid: 1\ndata: {\"id\":\"t\",\"artifact\":{\"tool_name\":\"web-fetch\",\"content\":\"<untrusted-content source=tool:web-fetch>\\n{}\\n</untrusted-content>\",\"fence_source\":null,\"tool_call_id\":\"c1\",\"is_error\":false,\"duration_ms\":4,\"exit_code\":null,\"truncated\":false}}\n\n";
//! let findings = verify_stream(&read_sse(capture), &VerifyContext::new());
//! assert_eq!(findings.len(), 1);
//! assert_eq!(findings[0].kind.name(), "fence-without-label");
//! assert_eq!(findings[0].location.frame_id.as_deref(), Some("1"));
//! ```
//!
//! ## Absent labels
//!
//! - A frame with no `fence_source` key in a stream where **no** frame carries it, and a record
//!   where **no** line carries a `fence` key, come from a runtime older than the key: they are
//!   *unlabelled*, read from their markers, and an absent label there is not a finding.
//!   ([`verify_frame`] checks a frame on its own, so it always reads an absent key this way.)
//! - In a stream where some frame carries `fence_source`, or a record where some line carries
//!   `fence`, the surface is labelled: a fenced unit with the key absent is
//!   [`FindingKind::FenceWithoutLabel`] (as is a fenced unit labelled `null`, anywhere). One
//!   runtime writes a whole stream or record, so the key missing from one of its units is a
//!   bug, not an older version. An *unfenced* frame missing the key in a labelled stream breaks
//!   "present on every frame" but hides nothing, and is not reported.
//! - A record line's `fence: null` is read as a present key, so it makes the record labelled.
//!
//! ## Classifying a unit
//!
//! Whether a unit must be fenced depends on what it is ([`ResultKind`]), decided from its own
//! fields and a [`VerifyContext`] (declared skills, declared tools, call ids):
//!
//! | Surface | Rule, first match wins | Kind |
//! |---|---|---|
//! | frame | `tool_call_id` and `duration_ms` both `null` (absent is not `null`) | hook artifact |
//! | frame | `tool_name` is a declared skill | skill result |
//! | frame | `exit_code` non-null (a subprocess ran), or `is_error` not `true` | tool result |
//! | record | `role` other than `tool` | not a result |
//! | record | `tool_call_id` went to a declared skill | skill result |
//! | record | `is_error` not `true` | tool result |
//! | trace | `skill_call`, or a `tool_call` whose `tool_name` is a declared skill | skill result |
//! | trace | `tool_call` with `status` `"ok"` | tool result |
//! | any | failed, and the name is neither a declared tool nor skill (tools declared) | dispatch failure |
//! | any | failed, otherwise | failed call: fenced or not, both accepted |
//!
//! A failed call with no other evidence may be a tool that ran and failed (fenced) or a refusal
//! or dispatch failure (unfenced), so it is not checked for a fence either way. Undeclared
//! names decide a dispatch failure only for *failed* calls: a successful call to a tool the
//! context does not list (such as the runtime's own peer-handoff tools) is still a tool result.
//! A record line learns its call's name from the context ([`VerifyContext::with_call`],
//! [`VerifyContext::learn_calls_from_stream`]) or from the record's own `tool_use` parts.
//!
//! A `skill_call` event has no `output` key on the wire, so a fence on one can only be seen when
//! a runtime writes `output` anyway; the reader keeps it if it does.
//!
//! ## Findings
//!
//! Per unit, in this order: a label that disagrees with the markers
//! ([`LabelMismatch`](FindingKind::LabelMismatch)); a label on content that is not a valid block
//! ([`LabelOnInvalidBlock`](FindingKind::LabelOnInvalidBlock)); fenced content with a `null` or
//! missing label ([`FenceWithoutLabel`](FindingKind::FenceWithoutLabel)); a live marker inside a
//! block ([`LiveMarkerInBlock`](FindingKind::LiveMarkerInBlock)); a tool result that is not a
//! valid block ([`UnfencedToolResult`](FindingKind::UnfencedToolResult)); a skill result, hook
//! artifact or dispatch failure holding any live marker
//! ([`FenceOnExempt`](FindingKind::FenceOnExempt)); `output_bytes` that differs from the byte
//! length of `output` ([`OutputBytesMismatch`](FindingKind::OutputBytesMismatch)); a source that
//! is neither `tool:` nor `task:<known origin>`
//! ([`UnknownSourceKind`](FindingKind::UnknownSourceKind), the one finding that is not an
//! error).
//!
//! [`ModelContent`]: crate::ModelContent
//! [`ToolOutput`]: crate::ToolOutput

mod artifact;
mod classify;
mod finding;
mod read;
mod record;
mod sse;
mod trace;
mod verify;

pub use self::artifact::{ArtifactFrame, CallMeta, ParsedArtifact, ParsedFrame, read_frame};
pub use self::classify::{ResultKind, VerifyContext};
pub use self::finding::{Finding, FindingKind, Location, MarkerKind, MissingLabel, Surface};
pub use self::read::{Counts, Label, LineError, Located, Nullable, ReadError, Report};
pub use self::record::{ParsedMessage, Part, RecordHeader, RecordLine, RecordReport, read_record};
pub use self::sse::{SseEncoder, SseReader, StreamFrame, StreamReport, read_sse};
pub use self::trace::{
    EventMeta, ParsedEvent, ParsedSkillCall, ParsedToolCall, SkillCallEvent, StateEffect, Status,
    ToolCallEvent, TraceReport, read_trace,
};
pub use self::verify::{
    Markers, read_markers, verify_frame, verify_record, verify_stream, verify_trace,
};

use crate::content::ModelContent;

/// Text and the label that goes with it, taken together from one value. The writing types
/// build their `content` and `fence_source` / `fence` keys from one of these, and only
/// [`Labelled::of`] makes one.
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
}
