//! Verifying a surface: each unit checked ([`check`](super::check)) and its findings located,
//! with every unit the reader could not read among them, in line order.

use alloc::string::String;
use alloc::vec::Vec;

use super::artifact::ParsedFrame;
use super::check::{check_event, check_frame, check_message};
use super::classify::VerifyContext;
use super::finding::{Finding, FindingKind, Location, Surface};
use super::read::{LineError, Report};
use super::record::RecordReport;
use super::sse::StreamReport;
use super::trace::TraceReport;

/// Checks one artifact frame on its own, as [`read_frame`](super::read_frame) read it: its
/// findings are located on the artifact stream, at line 1 (the frame's one line of JSON), with
/// no frame id. An absent `fence_source` is read as a frame from a runtime that predates the
/// key: the markers are read, and no label is missing.
///
/// ```
/// use fence_runtime::surfaces::{read_frame, verify_frame, FindingKind, Location, Surface, VerifyContext};
///
/// let frame = read_frame(r#"{"id":"t","artifact":{"tool_name":"web-fetch","content":"<untrusted-content source=tool:web-fetch>\n{}\n</untrusted-content>","fence_source":"tool:other"}}"#)?;
/// let findings = verify_frame(&frame, &VerifyContext::new());
/// assert_eq!(findings.len(), 1);
/// assert_eq!(findings[0].location, Location::new(Surface::ArtifactStream, 1));
/// assert_eq!(
///     findings[0].kind,
///     FindingKind::LabelMismatch { label: "tool:other".into(), markers: "tool:web-fetch".into() },
/// );
/// # Ok::<(), fence_runtime::surfaces::ReadError>(())
/// ```
#[must_use]
pub fn verify_frame(frame: &ParsedFrame, context: &VerifyContext) -> Vec<Finding> {
    let mut findings = Vec::new();
    check_frame(&frame.artifact, false, context, &mut findings);
    let mut out = Vec::new();
    located(
        findings,
        &Location::new(Surface::ArtifactStream, 1),
        &mut out,
    );
    out
}

/// Checks every frame of an artifact stream, and reports every event that could not be read.
///
/// A stream where some frame carries `fence_source` labels its frames, and a fenced frame with
/// no `fence_source` key in it is a [`FindingKind::FenceWithoutLabel`]. A stream where no frame
/// carries the key comes from a runtime older than it: it is unlabelled, read from the markers.
/// An `artifact` event that could not be read is a [`FindingKind::UnreadableUnit`]: nothing the
/// reader saw is left out of the findings.
///
/// ```
/// use fence_runtime::{fence, Source, ToolOutput};
/// use fence_runtime::surfaces::{read_sse, verify_stream, ArtifactFrame, CallMeta, SseEncoder, VerifyContext};
///
/// let output = ToolOutput::ok(fence(&Source::tool("bash"), "hello"));
/// let mut encoder = SseEncoder::new();
/// let capture = encoder.encode(&ArtifactFrame::tool_result("tsk_1", "bash", &output, CallMeta::new("c1", 3).with_exit_code(0)));
/// assert!(verify_stream(&read_sse(capture.as_bytes()), &VerifyContext::new()).is_empty());
///
/// let float = capture.replace(r#""duration_ms":3"#, r#""duration_ms":1.5"#);
/// let findings = verify_stream(&read_sse(float.as_bytes()), &VerifyContext::new());
/// assert_eq!(findings[0].kind.name(), "unreadable-unit");
/// ```
#[must_use]
pub fn verify_stream(stream: &StreamReport, context: &VerifyContext) -> Vec<Finding> {
    let surface_labels = stream
        .items
        .iter()
        .any(|item| item.value.frame.artifact.fence_source.is_present());
    let mut out = Vec::new();
    for item in &stream.items {
        let mut findings = Vec::new();
        check_frame(
            &item.value.frame.artifact,
            surface_labels,
            context,
            &mut findings,
        );
        let location = at(
            Surface::ArtifactStream,
            item.line,
            item.value.id.as_ref(),
            None,
        );
        located(findings, &location, &mut out);
    }
    with_unreadable(stream, Surface::ArtifactStream, out)
}

/// Checks every message line of a conversation record, and reports every line that could not
/// be read.
///
/// A record where some line carries a `fence` key labels its lines, and a fenced line with no
/// `fence` key is a [`FindingKind::FenceWithoutLabel`]. A record where no line carries the key
/// was written before it existed: it is unlabelled, read from the markers. Calls named by the
/// record's own call parts are learned before the lines are classified.
///
/// Per line: the line's own text (its text parts joined), unless the line carries no text part
/// and no label and holds tool results as parts; then every tool result part on its own
/// (unlabelled, located at its `content[i]`); then every part that cannot be read.
///
/// ```
/// use fence_runtime::{fence, ModelContent, Source, ToolOutput};
/// use fence_runtime::surfaces::{read_record, verify_record, RecordLine, VerifyContext};
///
/// let output = ToolOutput::ok(fence(&Source::tool("web-fetch"), "{}"));
/// let reply = ModelContent::model_text("Fetched it.");
/// let record = [RecordLine::tool_result("c1", &output).to_json(), RecordLine::assistant(&reply).to_json()].join("\n");
/// assert!(verify_record(&read_record(record.as_bytes()), &VerifyContext::new()).is_empty());
/// ```
#[must_use]
pub fn verify_record(record: &RecordReport, context: &VerifyContext) -> Vec<Finding> {
    let mut context = context.clone();
    context.learn_calls_from_record(record);
    let surface_labels = record.is_labelled();
    let mut out = Vec::new();
    for line in &record.items {
        for (part, findings) in check_message(&line.value, surface_labels, &context) {
            located(
                findings,
                &at(Surface::Record, line.line, None, part),
                &mut out,
            );
        }
    }
    with_unreadable(record, Surface::Record, out)
}

/// Checks every `tool_call` and `skill_call` event of a trace, and reports every line that
/// could not be read.
///
/// The trace is unlabelled: an event's `output`, when recorded, is read from its markers. A
/// `tool_call` that reached a tool must be fenced, under `tool:<tool_name>`; a `skill_call` (or
/// a `tool_call` to a declared skill) must not; `output_bytes` must equal the byte length of
/// `output`; `status` must be `ok` or `error` (a `tool_call` with any other status is checked as
/// a tool result).
///
/// ```
/// use fence_runtime::surfaces::{read_trace, verify_trace, FindingKind, VerifyContext};
///
/// let trace = read_trace(br#"{"event_type":"tool_call","tool_name":"bash","output":"hello","output_bytes":5,"status":"ok"}"#);
/// let findings = verify_trace(&trace, &VerifyContext::new());
/// assert_eq!(findings[0].kind.name(), "unfenced-tool-result");
/// ```
#[must_use]
pub fn verify_trace(trace: &TraceReport, context: &VerifyContext) -> Vec<Finding> {
    let mut out = Vec::new();
    for event in &trace.items {
        located(
            check_event(&event.value, context),
            &at(Surface::Trace, event.line, None, None),
            &mut out,
        );
    }
    with_unreadable(trace, Surface::Trace, out)
}

/// Where a unit's findings are.
fn at(surface: Surface, line: usize, frame_id: Option<&String>, part: Option<usize>) -> Location {
    Location {
        surface,
        line,
        frame_id: frame_id.cloned(),
        part,
    }
}

/// Adds a unit's findings to `out`, at `location`.
fn located(findings: Vec<FindingKind>, location: &Location, out: &mut Vec<Finding>) {
    out.extend(findings.into_iter().map(|kind| Finding {
        location: location.clone(),
        kind,
    }));
}

/// Adds one [`FindingKind::UnreadableUnit`] per unit the reader could not read, and puts every
/// finding in line order. Each unit has a line of its own, and the sort is stable, so a unit's
/// findings keep their order.
fn with_unreadable<T>(report: &Report<T>, surface: Surface, mut out: Vec<Finding>) -> Vec<Finding> {
    out.extend(report.errors.iter().map(|error: &LineError| Finding {
        location: at(surface, error.line, error.frame_id.as_ref(), None),
        kind: FindingKind::UnreadableUnit {
            error: error.error.clone(),
        },
    }));
    out.sort_by_key(|finding| finding.location.line);
    out
}
