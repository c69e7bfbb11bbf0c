//! Read, write and verify the wire formats that carry a fence: A2A `artifact` frames over SSE,
//! `conversation.jsonl` lines and `trace.jsonl` events.
//!
//! This crate is for auditors. It reads surfaces written by any runtime, in any version, and
//! says where a fence is missing, forged or mislabelled. It also writes the surfaces for a
//! runtime built with [`fence_runtime`], so its labels cannot disagree with its bytes.
//!
//! [`fence_runtime`] is the stable fence: `ModelContent`, the marker rule, `parse`. This crate
//! follows third-party formats, so it moves on its own schedule. It uses only
//! `fence_runtime`'s public API.
//!
//! The spec promises that no surface strips the fence. The two labelled surfaces label it
//! differently, on purpose:
//! - an artifact frame's `fence_source` is on every frame, `null` when unfenced;
//! - a record line's `fence` is absent when unfenced.
//!
//! This crate makes both promises hold for a runtime written with the toolkit, and checkable
//! for surfaces written by any runtime.
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
//!   markers included; a `skill_call` records only the byte length of the skill's doc.
//!
//! Exempt text is written from the exemption's own [`ModelContent`] too
//! ([`ModelContent::skill_doc`] for [`ArtifactFrame::skill_result`],
//! [`RecordLine::skill_result`] and [`SkillCallEvent::new`], [`ModelContent::hook_artifact`] for
//! [`ArtifactFrame::hook_artifact`]), never from a raw `&str`: every piece of text a surface
//! carries went through a greppable constructor. A writer handed content of another kind (a
//! fenced block to `skill_result`, say) still takes the label from the content, so the bytes
//! and the label always agree, and the verifier reports what is wrong (here, a fence on a skill
//! result).
//!
//! ```
//! use fence_runtime::{fence, ModelContent, Source, ToolOutput};
//! use fence_surfaces::{ArtifactFrame, CallMeta, RecordLine, SseEncoder};
//!
//! let output = ToolOutput::ok(fence(&Source::tool("bash"), "hello\n"));
//! let frame = ArtifactFrame::tool_result("tsk_1", "bash", &output, CallMeta::new("toolu_01", 12).with_exit_code(0));
//! let line = RecordLine::tool_result("toolu_01", &output);
//! assert_eq!(frame.fence_source(), Some("tool:bash"));
//! assert_eq!(line.fence(), Some("tool:bash"));
//! assert!(SseEncoder::new().encode(&frame).starts_with("event: artifact\nid: 1\ndata: {\"id\":\"tsk_1\""));
//!
//! let doc = ModelContent::skill_doc("# Triage\n");
//! assert_eq!(ArtifactFrame::skill_result("tsk_1", "triage", &doc, "toolu_02", 1).fence_source(), None);
//! ```
//!
//! # Reading
//!
//! [`read_sse`], [`read_frame`], [`read_record`] and [`read_trace`] read into owned, tolerant
//! types: unknown keys are ignored, and an absent label is told apart from a `null` one
//! ([`Label`]). Reading never panics and never stops early: a malformed line becomes a
//! [`LineError`] carrying its 1-based line number, and every [`Report`] says how many units it
//! read, skipped and failed.
//!
//! A surface too large to hold — a record of a gigabyte, a live stream — is read incrementally.
//! [`SseReader`] reads a stream; one [`JsonlReader`] reads both JSONL surfaces, as
//! [`RecordReader`] and [`TraceReader`]. Each takes bytes in chunks of any size. Each hands
//! over a [`Unit`] (an item, skipped, or failed) the moment it is complete, in memory bounded
//! by the largest unit. The whole-slice readers are these readers handed one chunk, so both
//! read exactly alike.
//!
//! Every unit — an SSE event's `data`, a record line, a trace line — is parsed by one reader
//! that refuses a key written twice in any object, at any depth, known key or not
//! ([`ReadError::DuplicateKey`]). JSON parsers disagree on which of two values wins, so a unit
//! with a duplicate key means one thing to the model's runtime and another to an auditor; no
//! surface here picks a winner.
//!
//! A record line's `content` is read part by part ([`Part`]): text under any spelling (`text`,
//! `input_text`, `output_text`, `refusal`, `thinking`), calls (`tool_use`, `function_call`),
//! tool results carried as parts (`tool_result`, `function_call_output`, with string or array
//! content), and parts with no text (images, audio). Anything else is kept as [`Part::Other`].
//! An assistant line's calls in the chat-completions format (`tool_calls`, outside `content`)
//! are read too ([`ParsedMessage::calls`]).
//!
//! A wrapped transcript line, as coding agents write theirs (Claude Code's
//! `{"type":"user","message":{"role":"user","content":[…]},"uuid":…}`, and its `assistant`
//! lines alike), is read as the message it wraps: a line with no string `role` whose `message`
//! is an object with one. The model was sent that message alone, so the wrapper's other keys
//! (a copy of a tool's raw output among them) are ignored, as a message line's unknown keys
//! are.
//!
//! A record line with no string `role` is read when it is a top-level item of the `OpenAI`
//! Responses API ([`ParsedMessage::item`]). Every item that carries a tool's output is a tool
//! result answering its call, read as a `tool` line with that output as its content: a
//! `function_call_output`, a `custom_tool_call_output`, a `local_shell_call_output`, a
//! `computer_call_output` (a screenshot: a part with no text, so no text to check) and an
//! `mcp_call` (a call to an MCP server's tool with its `output`, and its `error`, in one item).
//! A `function_call` or `custom_tool_call` names a call (read as an `assistant` line holding
//! it), as the parts of those types are read. A line that is not a JSON object (an array, a
//! string, a number) cannot be read.
//!
//! Every other unit is passed over — blank lines, the record header, record lines with no
//! string `role` that wrap no message (a transcript's summary line, a reasoning item), trace
//! events other than `tool_call` and `skill_call`, SSE events other than `artifact` — but never
//! unread: every string in it, keys included, is searched for a live marker (an SSE event's
//! data as text when it is not JSON), and one that holds one is handed over as
//! [`Unit::SkippedWithMarker`] and is a finding ([`FindingKind::LiveMarkerInSkippedUnit`]). A
//! unit passed over with no live marker, the header among them, is skipped without a word.
//!
//! # Verifying
//!
//! [`verify_stream`], [`verify_record`], [`verify_trace`] and [`verify_frame`] return typed
//! [`Finding`]s. Every check for live markers goes through the fence's one marker matcher
//! ([`read_markers`], [`live_markers`](fence_runtime::live_markers)). Nothing a reader read
//! vanishes from the verdict:
//! - a unit it could not read is a finding at its line ([`FindingKind::UnreadableUnit`]);
//! - so is a part of a record line that cannot be read ([`FindingKind::UnreadablePart`]).
//!
//! [`StreamVerifier`], [`RecordVerifier`] and [`TraceVerifier`] verify unit by unit, as an
//! incremental reader hands the units over. A stream's and a record's verdicts depend on facts
//! about the whole surface (whether it labels its units; which call a record's `tool_use` parts
//! name), so those two take two passes over the surface: one that learns, one that verifies.
//! The whole-surface functions are the same verifiers run over a collected [`Report`], so both
//! give the same findings in the same order.
//!
//! ```
//! use fence_surfaces::{read_sse, verify_stream, FindingKind, VerifyContext};
//!
//! let capture = b"event: artifact\nid: 1\ndata: {\"id\":\"t\",\"artifact\":{\"tool_name\":\"web-fetch\",\"content\":\"<untrusted-content source=tool:web-fetch>\\n{}\\n</untrusted-content>\",\"fence_source\":null,\"tool_call_id\":\"c1\",\"is_error\":false,\"duration_ms\":4,\"exit_code\":null,\"truncated\":false}}\n\n";
//! let findings = verify_stream(&read_sse(capture), &VerifyContext::new());
//! assert_eq!(findings.len(), 1);
//! assert_eq!(findings[0].kind.name(), "fence-without-label");
//! assert_eq!(findings[0].location.frame_id.as_deref(), Some("1"));
//! ```
//!
//! ## Exempt content carries no live marker
//!
//! Every constructor of an exemption neutralises markers in its text
//! ([`ModelContent::skill_doc`], [`hook_artifact`](ModelContent::hook_artifact),
//! [`dispatch_failure`](ModelContent::dispatch_failure), [`refusal`](ModelContent::refusal),
//! [`model_text`](ModelContent::model_text), and a trusted task through
//! [`ModelContent::task`]), so a [`ModelContent`] never carries a live marker except its own
//! fence's opener and final closer. Writer and verifier hold to the same rule: a skill doc that
//! merely mentions `</untrusted-content>` is written neutralised and verifies clean, and the
//! verifier reports any live marker in content that is never fenced as
//! [`FindingKind::FenceOnExempt`]:
//!
//! - a skill result, a hook artifact, a dispatch failure;
//! - the model's own text, an `assistant` line: the model may have copied a marker from a block
//!   it read, and replayed live it would open or close a fence in the next turn;
//! - a `user` line, a task: it is one valid block (an untrusted task, fenced) or text with no
//!   live marker at all (a trusted task); live markers that make no block are a finding, unless
//!   the line is labelled, in which case [`LabelOnInvalidBlock`](FindingKind::LabelOnInvalidBlock)
//!   already says it.
//!
//! Content that may be fenced or not — a failed call with no evidence that it ran, a line of a
//! role the verifier does not know (`ipython`, `System`) — is held to the same rule: it is one
//! valid block (whose only live markers are its own opener and final closer) or text with no
//! live marker at all; anything between the two is
//! [`LiveMarkerOutsideBlock`](FindingKind::LiveMarkerOutsideBlock), unless a label already
//! says it was meant to be fenced ([`LabelOnInvalidBlock`](FindingKind::LabelOnInvalidBlock)).
//! So no unit the model reads carries a live marker except its own fence's.
//!
//! `system` and `developer` lines are not checked: they are the operator's own instructions
//! (the runtime's, never a tool's or a peer's), which may explain the fence and so name its
//! markers.
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
//! - A tool result carried as a part has no label of its own: it is read from its markers. So
//!   is a top-level Responses item, unless it carries a `fence` key: that format has none.
//!
//! ## Classifying a unit
//!
//! Whether a unit must be fenced depends on what it is. That is decided from its own fields and
//! a [`VerifyContext`]: declared skills, declared tools, call ids.
//!
//! | Surface | Rule, first match wins | Kind |
//! |---|---|---|
//! | frame | `tool_call_id`, `duration_ms` and `exit_code` `null`, and `is_error` `false` (absent ids are not `null`) | hook artifact |
//! | frame | `exit_code` non-null (a subprocess ran), whatever the name | tool result |
//! | frame | `tool_name` is a declared skill | skill result |
//! | frame | `is_error` not `true` | tool result |
//! | record | `role` `assistant` | model text |
//! | record | `role` `user` | task |
//! | record | `role` `system` or `developer` | not checked |
//! | record | a `role` the verifier does not know | unknown role: one block or no live marker |
//! | record | a `tool` (or `function`) line, or a tool result part, whose call a surface says reached a tool (below), whatever its name | tool result; failed call when `is_error` is `true` |
//! | record | such a line or part whose call went to a declared skill | skill result |
//! | record | such a line or part whose `is_error` is not `true` | tool result |
//! | trace | `skill_call` | skill result |
//! | trace | `tool_call` whose `status` is not `"error"` (`"ok"`, or one the verifier does not know) | tool result |
//! | any | failed, and the name is neither a declared tool nor skill (tools declared) | dispatch failure |
//! | any | failed, otherwise | failed call: one block or no live marker |
//!
//! A record line's `role` is matched as the most lenient readers match it: `user`,
//! `assistant`, `tool` and `function` in any ASCII casing, with ASCII whitespace around them,
//! are the roles they spell (`Tool` is a `tool` line, its unfenced text an unfenced tool result),
//! and reported as [`RoleSpelledOtherwise`](FindingKind::RoleSpelledOtherwise), a note. Strict
//! readers refuse such a line, but a reader that folds roles hands it to the model as what it
//! spells. `system` and `developer` are left unchecked only as written: spelled otherwise,
//! they are a role the verifier does not know, and checked.
//!
//! A failed call with no other evidence may be a tool that ran and failed (fenced) or a refusal
//! or dispatch failure (unfenced), so either is accepted — but only either: exactly one valid
//! block, or text with no live marker. Undeclared
//! names decide a dispatch failure only for *failed* calls: a successful call to a tool the
//! context does not list (such as the runtime's own peer-handoff tools) is still a tool result.
//! The surface's word that a tool ran outranks a declared skill's name: a trace `tool_call`
//! (a skill's call is a `skill_call`) and a frame with a non-null `exit_code` are a tool's
//! result, checked as one, and a declared skill's name on one is
//! [`SkillCalledAsTool`](FindingKind::SkillCalledAsTool). A record says less of itself, so its
//! results take that word from where it is said: a result answering a call whose id a frame
//! with a non-null `exit_code` names ([`VerifyContext::learn_call_from_frame`]), or a call to
//! a name a trace calls as a tool (`tool_call`) and never as a skill (`skill_call`: a
//! runtime dispatches by name; [`VerifyContext::learn_calls_from_trace`]), and a
//! Responses item that is a tool's by its type (`mcp_call`, `local_shell_call_output`,
//! `computer_call_output`), is a tool's result too, and a declared skill's name on its call is
//! [`SkillCalledAsTool`](FindingKind::SkillCalledAsTool). A tool that shares a skill's name
//! cannot pass its unfenced output off as the skill's doc on any surface that says it ran.
//! (A record alone, whose call names a skill and nothing says a tool ran, is read as the
//! skill's doc: no byte of it says otherwise.)
//!
//! A record line learns its call's name from the context ([`VerifyContext::with_call`],
//! [`VerifyContext::learn_calls_from_stream`]), from the record's own `tool_use` and
//! `function_call` parts and `tool_calls` lists, or from its own `name` key; a tool result part answers the call its
//! `tool_use_id` (or `call_id`) names, or on a `tool` line with no id of its own, the line's.
//!
//! A call id is bound to one name. Wherever calls are learned — the context, a frame's
//! `tool_call_id` and `tool_name`, a record's call parts and `tool_calls` entries, a `tool`
//! line's own `name` beside its `tool_call_id` — a unit that names a call id that is bound
//! elsewhere to another name is [`CallIdReused`](FindingKind::CallIdReused) (once per id per
//! unit), and a result answering such a call is never taken for a skill's doc while one of its
//! names is not a declared skill ([`VerifyContext::call_name`]).
//!
//! A frame whose `tool_call_id` and `duration_ms` are `null` but which is not a hook artifact
//! (an `exit_code`, or an `is_error` other than `false`) is checked as a call, and reported as
//! [`FindingKind::NotAHookArtifact`]: the four fields of a hook artifact come together.
//!
//! A record line's own text is its text parts joined, checked as one unit under the line's
//! label; every tool result part is a unit of its own, located at its `content[i]`. A line
//! that carries only tool result parts (and parts with no text), and no label, has no text
//! unit of its own: an Anthropic-style `user` line of results is checked result by result.
//!
//! A tool's result (a tool result, or a failed call that is fenced) must be fenced under
//! `tool:<the tool's name>`, the name sanitised as [`Source::tool`](fence_runtime::Source::tool)
//! sanitises it, whenever the name is known: a frame's `tool_name`, a `tool_call`'s
//! `tool_name`, a record line's or part's call. A source of a kind the verifier does not know
//! (the reference runtime's `member:` or `delegation:` for a hand-off's reply) is not tied to
//! the name; it is reported as [`FindingKind::UnknownSourceKind`].
//!
//! A `skill_call` event has no `output` key on the wire, so a fence on one can only be seen when
//! a runtime writes `output` anyway; the reader keeps it if it does.
//!
//! ## Findings
//!
//! A unit that could not be read is one
//! [`UnreadableUnit`](FindingKind::UnreadableUnit), at the line of the unit (for an SSE event,
//! its first `data:` line, with its `id:`); a unit passed over whose text holds a live marker is
//! one [`LiveMarkerInSkippedUnit`](FindingKind::LiveMarkerInSkippedUnit), located alike.
//! Otherwise, per unit, in this order:
//!
//! 1. before the content, on a frame: one that looks like a hook artifact but is not one
//!    ([`NotAHookArtifact`](FindingKind::NotAHookArtifact)), a call id it names that is bound
//!    elsewhere to another name ([`CallIdReused`](FindingKind::CallIdReused)), a declared
//!    skill's name on a frame whose subprocess ran
//!    ([`SkillCalledAsTool`](FindingKind::SkillCalledAsTool)); on a record line: a role the
//!    verifier does not know ([`UnknownRole`](FindingKind::UnknownRole), not an error) or a
//!    known one spelled otherwise ([`RoleSpelledOtherwise`](FindingKind::RoleSpelledOtherwise),
//!    not an error), then a call id it names that is bound elsewhere to another name, then a
//!    declared skill's name on the call it answers, when a surface says that call reached a
//!    tool; on a trace event: a
//!    `tool_call` under a declared skill's name, then a `status` other than `ok` and `error`
//!    ([`UnknownStatus`](FindingKind::UnknownStatus));
//! 2. the content against its label: a label that disagrees with the markers
//!    ([`LabelMismatch`](FindingKind::LabelMismatch)); a label on content that is not a valid
//!    block ([`LabelOnInvalidBlock`](FindingKind::LabelOnInvalidBlock)); fenced content with a
//!    `null` or missing label ([`FenceWithoutLabel`](FindingKind::FenceWithoutLabel));
//! 3. the content itself: a live marker inside a block
//!    ([`LiveMarkerInBlock`](FindingKind::LiveMarkerInBlock)); never-fenced content holding a
//!    fence or any live marker ([`FenceOnExempt`](FindingKind::FenceOnExempt)) or a tool result
//!    that is not a valid block ([`UnfencedToolResult`](FindingKind::UnfencedToolResult));
//!    content that may be fenced or not whose live markers make no block
//!    ([`LiveMarkerOutsideBlock`](FindingKind::LiveMarkerOutsideBlock)); a
//!    tool's result fenced under another source
//!    ([`ToolSourceMismatch`](FindingKind::ToolSourceMismatch)); a source that is neither
//!    `tool:` nor `task:<known origin>` ([`UnknownSourceKind`](FindingKind::UnknownSourceKind),
//!    not an error);
//! 4. after the content: a frame whose block ends with the
//!    [`TRUNCATION_NOTICE`](fence_runtime::TRUNCATION_NOTICE) but which says `truncated: false`
//!    ([`TruncationDenied`](FindingKind::TruncationDenied)); `output_bytes` that differs from
//!    the byte length of `output` ([`OutputBytesMismatch`](FindingKind::OutputBytesMismatch));
//! 5. on a record line, then each part in order: a tool result part's findings (a declared
//!    skill's name on a call that reached a tool, then as 2 to 3), and any part that cannot be
//!    read ([`UnreadablePart`](FindingKind::UnreadablePart)), also
//!    inside a tool result's content.
//!
//! Findings come in line order across the surface, unreadable units among them.
//!
//! [`ModelContent`]: fence_runtime::ModelContent
//! [`ToolOutput`]: fence_runtime::ToolOutput

#![forbid(unsafe_code)]
#![warn(missing_docs)]
// A dropped value from any of the crate's pure functions is a bug in the caller.
#![warn(clippy::must_use_candidate)]

mod artifact;
mod check;
mod classify;
mod context;
mod finding;
mod jsonl;
mod markers;
mod outgoing;
mod record;
mod report;
mod sse;
mod strict_json;
mod trace;
mod verify;

pub use fence_runtime::MarkerKind;

pub use crate::artifact::{ArtifactFrame, CallMeta, ParsedArtifact, ParsedFrame, read_frame};
pub use crate::context::VerifyContext;
pub use crate::finding::{Finding, FindingKind, Location, MissingLabel, Surface};
pub use crate::jsonl::{JsonlLine, JsonlReader};
pub use crate::markers::{Markers, read_markers};
pub use crate::outgoing::{
    RequestError, ToolMessageFinding, check_chat_request, check_tool_message,
};
pub use crate::record::{
    ParsedMessage, Part, RecordHeader, RecordLine, RecordReader, RecordReport, read_record,
};
pub use crate::report::{
    Counts, DEFAULT_MAX_LINE_BYTES, Label, LineError, Located, Nullable, ReadError, Report,
    SkippedUnit, Unit,
};
pub use crate::sse::{SseEncoder, SseReader, StreamFrame, StreamReport, read_sse};
pub use crate::trace::{
    EventMeta, ParsedEvent, ParsedSkillCall, ParsedToolCall, SkillCallEvent, StateEffect, Status,
    ToolCallEvent, TraceReader, TraceReport, read_trace,
};
pub use crate::verify::{
    RecordVerifier, StreamVerifier, TraceVerifier, verify_frame, verify_record, verify_stream,
    verify_trace,
};

use fence_runtime::ModelContent;

// Every public type can cross threads: a verifier may read on one thread and report on another.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<ArtifactFrame<'static>>();
    send_sync::<CallMeta<'static>>();
    send_sync::<ParsedArtifact>();
    send_sync::<ParsedFrame>();
    send_sync::<VerifyContext>();
    send_sync::<Finding>();
    send_sync::<FindingKind>();
    send_sync::<Location>();
    send_sync::<MarkerKind>();
    send_sync::<MissingLabel>();
    send_sync::<Surface>();
    send_sync::<Counts>();
    send_sync::<Label>();
    send_sync::<LineError>();
    send_sync::<Located<ParsedMessage>>();
    send_sync::<Nullable<u64>>();
    send_sync::<ReadError>();
    send_sync::<Report<ParsedEvent>>();
    send_sync::<ParsedMessage>();
    send_sync::<Part>();
    send_sync::<RecordHeader>();
    send_sync::<RecordLine<'static>>();
    send_sync::<RecordReport>();
    send_sync::<SseEncoder>();
    send_sync::<SseReader>();
    send_sync::<RecordReader>();
    send_sync::<TraceReader>();
    send_sync::<Unit<ParsedMessage>>();
    send_sync::<SkippedUnit>();
    send_sync::<StreamVerifier>();
    send_sync::<RecordVerifier>();
    send_sync::<TraceVerifier>();
    send_sync::<StreamFrame>();
    send_sync::<StreamReport>();
    send_sync::<EventMeta<'static>>();
    send_sync::<ParsedEvent>();
    send_sync::<ParsedSkillCall>();
    send_sync::<ParsedToolCall>();
    send_sync::<SkillCallEvent<'static>>();
    send_sync::<StateEffect>();
    send_sync::<Status>();
    send_sync::<ToolCallEvent<'static>>();
    send_sync::<TraceReport>();
    send_sync::<Markers<'static>>();
};

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
