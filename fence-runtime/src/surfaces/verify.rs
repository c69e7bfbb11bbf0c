//! Checking what a runtime wrote: the markers read with the crate's one matcher, each unit
//! classified, and typed findings.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::artifact::{ParsedArtifact, ParsedFrame};
use super::classify::{KNOWN_ROLES, ResultKind, VerifyContext, has_hook_ids, is_tool_line};
use super::finding::{Finding, FindingKind, Location, MarkerKind, MissingLabel, Surface};
use super::read::{Label, LineError, Report};
use super::record::{ParsedMessage, Part, RecordReport};
use super::sse::StreamReport;
use super::trace::{ParsedEvent, TraceReport};
use crate::content::Exemption;
use crate::fence::CLOSER;
use crate::marker::{self, Marker};
use crate::parse::{ParseError, ParsedBlock, parse};
use crate::source::{Source, SourceKind};

/// What the markers of a piece of content say, read with the same marker matcher the fence
/// uses.
///
/// ```
/// use fence_runtime::surfaces::{read_markers, Markers};
///
/// assert!(matches!(read_markers("Fetched it."), Markers::Plain));
/// let Markers::Block(block) = read_markers("<untrusted-content source=tool:t>\nx\n</untrusted-content>") else { panic!() };
/// assert_eq!(block.source(), "tool:t");
/// assert!(matches!(read_markers("see </untrusted-content>"), Markers::Malformed(_)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Markers<'a> {
    /// No live marker anywhere: unfenced text.
    Plain,
    /// Exactly one valid fenced block.
    Block(ParsedBlock<'a>),
    /// Live markers, but not a valid block; the error says which rule of the grammar failed.
    Malformed(ParseError),
}

impl<'a> Markers<'a> {
    /// The block's source, when the content is a valid block.
    ///
    /// ```
    /// use fence_runtime::surfaces::read_markers;
    ///
    /// assert_eq!(read_markers("<untrusted-content source=task:peer>\nx\n</untrusted-content>").source(), Some("task:peer"));
    /// assert_eq!(read_markers("x").source(), None);
    /// ```
    #[must_use]
    pub fn source(&self) -> Option<&'a str> {
        match self {
            Markers::Block(block) => Some(block.source()),
            Markers::Plain | Markers::Malformed(_) => None,
        }
    }

    fn error(&self) -> Option<ParseError> {
        match self {
            Markers::Block(_) => None,
            Markers::Plain => Some(ParseError::NoOpener),
            Markers::Malformed(error) => Some(*error),
        }
    }
}

/// Reads the markers of `text`: a valid block, plain text with no live marker, or something in
/// between.
///
/// This is how an unlabelled surface — a frame from a runtime that predates `fence_source`, a
/// record written before `fence`, a trace event — is read.
///
/// ```
/// use fence_runtime::surfaces::{read_markers, Markers};
/// use fence_runtime::ParseError;
///
/// assert_eq!(
///     read_markers("<untrusted-content source=tool:t>\nx</untrusted-content>"),
///     Markers::Malformed(ParseError::MissingSeparatorBeforeCloser),
/// );
/// ```
#[must_use]
pub fn read_markers(text: &str) -> Markers<'_> {
    match parse(text) {
        Ok(block) => Markers::Block(block),
        Err(error) if marker::next_marker(text.as_bytes(), 0).is_some() => {
            Markers::Malformed(error)
        }
        Err(_) => Markers::Plain,
    }
}

/// One unit's content, its label, what it is, and the tool it came from.
struct Unit<'a> {
    text: &'a str,
    label: &'a Label,
    /// Whether an absent label means "unlabelled" (false) or "missing" (true).
    surface_labels: bool,
    kind: ResultKind,
    /// The tool or skill the unit is the result of, when known: a tool's fence must name it.
    tool: Option<&'a str>,
}

fn check(unit: &Unit<'_>, out: &mut Vec<FindingKind>) {
    let markers = read_markers(unit.text);
    match (unit.label, &markers) {
        (Label::Source(label), Markers::Block(block)) if label != block.source() => {
            out.push(FindingKind::LabelMismatch {
                label: label.clone(),
                markers: block.source().into(),
            });
        }
        (Label::Source(label), Markers::Plain | Markers::Malformed(_)) => {
            out.push(FindingKind::LabelOnInvalidBlock {
                label: label.clone(),
                error: markers.error().unwrap_or(ParseError::NoOpener),
            });
        }
        (Label::Null, Markers::Block(block)) => out.push(FindingKind::FenceWithoutLabel {
            label: MissingLabel::Null,
            markers: block.source().into(),
        }),
        (Label::Absent, Markers::Block(block)) if unit.surface_labels => {
            out.push(FindingKind::FenceWithoutLabel {
                label: MissingLabel::Absent,
                markers: block.source().into(),
            });
        }
        // A matching label, or no label on content that needs none.
        _ => {}
    }
    if let Markers::Block(_) = markers {
        // The opener starts at 0 and the final closer ends the text (parse checked both): any
        // other marker between them is live.
        let inside = &unit.text.as_bytes()[..unit.text.len() - CLOSER.len()];
        if let Some((offset, kind)) = marker::next_marker(inside, 1) {
            out.push(FindingKind::LiveMarkerInBlock {
                offset,
                marker: match kind {
                    Marker::Opener => MarkerKind::Opener,
                    Marker::Closer => MarkerKind::Closer,
                },
            });
        }
    }
    match (unit.kind.exemption(), unit.kind) {
        (Some(exemption), _) if markers != Markers::Plain => {
            out.push(FindingKind::FenceOnExempt {
                exemption,
                markers: markers.source().map(ToString::to_string),
            });
        }
        // A task is fenced (one valid block, labelled where the surface labels) or trusted
        // (plain text); live markers that make no block are trusted text carrying markers,
        // unless a label already says the content was meant to be fenced.
        (None, ResultKind::Task)
            if matches!(markers, Markers::Malformed(_)) && unit.label.source().is_none() =>
        {
            out.push(FindingKind::FenceOnExempt {
                exemption: Exemption::TrustedTask,
                markers: None,
            });
        }
        (None, ResultKind::ToolResult) => {
            if let Some(error) = markers.error() {
                out.push(FindingKind::UnfencedToolResult { error });
            }
        }
        _ => {}
    }
    if let (true, Some(tool), Markers::Block(block)) =
        (unit.kind.may_be_tool_output(), unit.tool, &markers)
    {
        // A source of a kind the verifier does not know (a member's or a delegation's reply,
        // say) is reported below; which name it should carry is the runtime's business.
        let source = block.source();
        if !matches!(SourceKind::of(source), SourceKind::Unknown(_)) {
            let expected = Source::tool(tool);
            if expected.as_str() != source {
                out.push(FindingKind::ToolSourceMismatch {
                    expected: expected.as_str().into(),
                    markers: source.into(),
                });
            }
        }
    }
    let label = unit.label.source();
    let block = markers.source();
    for source in [label, block.filter(|block| Some(*block) != label)]
        .into_iter()
        .flatten()
    {
        if let SourceKind::Unknown(_) = SourceKind::of(source) {
            out.push(FindingKind::UnknownSourceKind {
                source: source.into(),
            });
        }
    }
}

fn at(surface: Surface, line: usize, frame_id: Option<&String>, part: Option<usize>) -> Location {
    Location {
        surface,
        line,
        frame_id: frame_id.cloned(),
        part,
    }
}

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

fn check_frame(
    artifact: &ParsedArtifact,
    surface_labels: bool,
    context: &VerifyContext,
    out: &mut Vec<FindingKind>,
) {
    let kind = context.classify_frame(artifact);
    if has_hook_ids(artifact) && kind != ResultKind::HookArtifact {
        out.push(FindingKind::NotAHookArtifact {
            exit_code: artifact.exit_code,
            is_error: artifact.is_error,
        });
    }
    check(
        &Unit {
            text: &artifact.content,
            label: &artifact.fence_source,
            surface_labels,
            kind,
            tool: artifact.tool_name.as_deref(),
        },
        out,
    );
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
        check_message(&line.value, line.line, surface_labels, &context, &mut out);
    }
    with_unreadable(record, Surface::Record, out)
}

fn check_message(
    message: &ParsedMessage,
    line: usize,
    surface_labels: bool,
    context: &VerifyContext,
    out: &mut Vec<Finding>,
) {
    let mut findings = Vec::new();
    if !KNOWN_ROLES.contains(&message.role.as_str()) {
        findings.push(FindingKind::UnknownRole {
            role: message.role.clone(),
        });
    }
    let has_text = message
        .content
        .iter()
        .any(|part| matches!(part, Part::Text(_)));
    let has_results = message
        .content
        .iter()
        .any(|part| matches!(part, Part::ToolResult { .. }));
    if has_text || !has_results || message.fence.source().is_some() {
        check(
            &Unit {
                text: &message.text(),
                label: &message.fence,
                surface_labels,
                kind: context.classify_message(message),
                tool: if is_tool_line(message) {
                    context.line_call(message)
                } else {
                    None
                },
            },
            &mut findings,
        );
    }
    located(findings, &at(Surface::Record, line, None, None), out);

    for (index, part) in message.content.iter().enumerate() {
        let mut findings = Vec::new();
        match part {
            Part::ToolResult { content, .. } => {
                check(
                    &Unit {
                        text: &part.text().unwrap_or_default(),
                        label: &Label::Absent,
                        surface_labels: false,
                        kind: context.classify_part(message, part),
                        tool: context.part_call(message, part),
                    },
                    &mut findings,
                );
                for (nested, inner) in content.iter().enumerate() {
                    if let Part::Other(value) = inner {
                        findings.push(FindingKind::UnreadablePart {
                            path: format!("content[{index}].content[{nested}]"),
                            part_type: Part::type_of(value).map(String::from),
                        });
                    }
                }
            }
            Part::Other(value) => findings.push(FindingKind::UnreadablePart {
                path: format!("content[{index}]"),
                part_type: Part::type_of(value).map(String::from),
            }),
            Part::Text(_) | Part::ToolUse { .. } | Part::NoText(_) => {}
        }
        located(findings, &at(Surface::Record, line, None, Some(index)), out);
    }
}

/// Whether a trace `status` is one the wire format has.
fn known_status(status: &str) -> bool {
    matches!(status, "ok" | "error")
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
        let mut findings = Vec::new();
        let (output, output_bytes, kind, tool, status) = match &event.value {
            ParsedEvent::ToolCall(call) => (
                call.output.as_deref(),
                call.output_bytes,
                context.classify_tool_call(call),
                Some(call.tool_name.as_str()),
                Some(call.status.as_str()),
            ),
            ParsedEvent::SkillCall(call) => (
                call.output.as_deref(),
                call.output_bytes,
                ResultKind::SkillResult,
                None,
                call.status.as_deref(),
            ),
        };
        if let Some(status) = status.filter(|status| !known_status(status)) {
            findings.push(FindingKind::UnknownStatus {
                status: status.into(),
            });
        }
        if let Some(output) = output {
            check(
                &Unit {
                    text: output,
                    label: &Label::Absent,
                    surface_labels: false,
                    kind,
                    tool,
                },
                &mut findings,
            );
            let actual = u64::try_from(output.len()).unwrap_or(u64::MAX);
            if actual != output_bytes {
                findings.push(FindingKind::OutputBytesMismatch {
                    output_bytes,
                    actual,
                });
            }
        }
        located(
            findings,
            &at(Surface::Trace, event.line, None, None),
            &mut out,
        );
    }
    with_unreadable(trace, Surface::Trace, out)
}
