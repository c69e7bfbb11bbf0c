//! Checking what a runtime wrote: the markers read with the crate's one matcher, each unit
//! classified, and typed findings.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::artifact::{ParsedArtifact, ParsedFrame};
use super::finding::{Finding, FindingKind, Location, MarkerKind, MissingLabel, Surface};
use super::read::Label;
use super::record::{ParsedMessage, Part, RecordReport};
use super::sse::StreamReport;
use super::trace::{ParsedEvent, ParsedToolCall, TraceReport};
use crate::content::Exemption;
use crate::fence::CLOSER;
use crate::marker::{self, Marker};
use crate::parse::{Block, ParseError, parse};
use crate::source::SourceKind;

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
pub enum Markers<'a> {
    /// No live marker anywhere: unfenced text.
    Plain,
    /// Exactly one valid fenced block.
    Block(Block<'a>),
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
pub fn read_markers(text: &str) -> Markers<'_> {
    match parse(text) {
        Ok(block) => Markers::Block(block),
        Err(error) if marker::next_marker(text.as_bytes(), 0).is_some() => {
            Markers::Malformed(error)
        }
        Err(_) => Markers::Plain,
    }
}

/// What a unit of a surface is, which decides whether it must be fenced.
///
/// ```
/// use fence_runtime::surfaces::ResultKind;
/// use fence_runtime::Exemption;
///
/// assert_eq!(ResultKind::HookArtifact.exemption(), Some(Exemption::HookArtifact));
/// assert_eq!(ResultKind::ToolResult.exemption(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResultKind {
    /// The result of a call that reached a tool: must be fenced.
    ToolResult,
    /// A declared skill's `skill.md`: never fenced.
    SkillResult,
    /// A hook artifact: never fenced.
    HookArtifact,
    /// A failed call to a name that is neither a declared tool nor a declared skill: it never
    /// reached a tool, and is never fenced.
    DispatchFailure,
    /// A failed call with no evidence that it ran: a tool that failed (fenced) or a refusal or
    /// dispatch failure (unfenced). Either is accepted.
    FailedCall,
    /// Not the result of a call: a record line of another role. Not checked for a fence.
    NotAResult,
}

impl ResultKind {
    /// The exemption a never-fenced kind falls under.
    ///
    /// ```
    /// use fence_runtime::surfaces::ResultKind;
    /// use fence_runtime::Exemption;
    ///
    /// assert_eq!(ResultKind::SkillResult.exemption(), Some(Exemption::SkillDoc));
    /// assert_eq!(ResultKind::FailedCall.exemption(), None);
    /// ```
    pub fn exemption(self) -> Option<Exemption> {
        match self {
            ResultKind::SkillResult => Some(Exemption::SkillDoc),
            ResultKind::HookArtifact => Some(Exemption::HookArtifact),
            ResultKind::DispatchFailure => Some(Exemption::DispatchFailure),
            ResultKind::ToolResult | ResultKind::FailedCall | ResultKind::NotAResult => None,
        }
    }
}

/// What the verifier knows about the capsule beyond the surfaces themselves: its declared skills,
/// its declared tools, and which tool or skill each call id went to.
///
/// Without context, every successful call is a tool result (so a skill's result is reported as
/// unfenced) and no failed call is known to be a dispatch failure. See the
/// [module docs](super#classifying-a-unit) for the rules.
///
/// ```
/// use fence_runtime::surfaces::{read_frame, ResultKind, VerifyContext};
///
/// let context = VerifyContext::new().with_skills(["triage"]).with_tools(["bash", "web-fetch"]);
/// let skill = read_frame(r#"{"artifact":{"tool_name":"triage","content":"Triage notes","tool_call_id":"c1","is_error":false,"duration_ms":1}}"#)?;
/// assert_eq!(context.classify_frame(&skill.artifact), ResultKind::SkillResult);
/// let failure = read_frame(r#"{"artifact":{"tool_name":"nope","content":"not declared","tool_call_id":"c2","is_error":true,"duration_ms":0}}"#)?;
/// assert_eq!(context.classify_frame(&failure.artifact), ResultKind::DispatchFailure);
/// # Ok::<(), fence_runtime::surfaces::ReadError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyContext {
    skills: BTreeSet<String>,
    tools: Option<BTreeSet<String>>,
    calls: BTreeMap<String, String>,
}

impl VerifyContext {
    /// A context that knows nothing about the capsule.
    ///
    /// ```
    /// let context = fence_runtime::surfaces::VerifyContext::new();
    /// assert!(!context.is_skill("triage"));
    /// ```
    pub fn new() -> VerifyContext {
        VerifyContext::default()
    }

    /// Declares skills: their results are never fenced.
    ///
    /// ```
    /// let context = fence_runtime::surfaces::VerifyContext::new().with_skills(["triage"]);
    /// assert!(context.is_skill("triage"));
    /// ```
    #[must_use]
    pub fn with_skills<I, S>(mut self, skills: I) -> VerifyContext
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.skills.extend(skills.into_iter().map(Into::into));
        self
    }

    /// Declares the capsule's tools (the manifest allowlist, plus any tools of the runtime's
    /// own). A failed call to a name that is neither a declared tool nor a declared skill never
    /// reached a tool. Without this, no call is known to be a dispatch failure.
    ///
    /// ```
    /// let context = fence_runtime::surfaces::VerifyContext::new().with_tools(["bash"]);
    /// assert!(context.is_undeclared("no-such-tool"));
    /// assert!(!context.is_undeclared("bash"));
    /// ```
    #[must_use]
    pub fn with_tools<I, S>(mut self, tools: I) -> VerifyContext
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools
            .get_or_insert_with(BTreeSet::new)
            .extend(tools.into_iter().map(Into::into));
        self
    }

    /// Records that call `tool_call_id` went to `name`, so a record's `tool` line answering it
    /// can be classified.
    ///
    /// ```
    /// let context = fence_runtime::surfaces::VerifyContext::new().with_call("toolu_1", "triage");
    /// assert_eq!(context.call_name("toolu_1"), Some("triage"));
    /// ```
    #[must_use]
    pub fn with_call(
        mut self,
        tool_call_id: impl Into<String>,
        name: impl Into<String>,
    ) -> VerifyContext {
        self.calls.insert(tool_call_id.into(), name.into());
        self
    }

    /// Learns which tool or skill each call went to from an artifact stream's frames.
    ///
    /// ```
    /// use fence_runtime::surfaces::{read_sse, VerifyContext};
    ///
    /// let stream = read_sse(b"event: artifact\ndata: {\"artifact\":{\"tool_name\":\"bash\",\"content\":\"\",\"tool_call_id\":\"c1\"}}\n\n");
    /// let mut context = VerifyContext::new();
    /// context.learn_calls_from_stream(&stream);
    /// assert_eq!(context.call_name("c1"), Some("bash"));
    /// ```
    pub fn learn_calls_from_stream(&mut self, stream: &StreamReport) {
        for item in &stream.items {
            let artifact = &item.value.frame.artifact;
            if let (Some(id), Some(name)) = (artifact.tool_call_id.value(), &artifact.tool_name) {
                self.calls.insert(id.clone(), name.clone());
            }
        }
    }

    /// Learns which tool or skill each call went to from a record's `tool_use` parts.
    /// [`verify_record`] does this by itself.
    ///
    /// ```
    /// use fence_runtime::surfaces::{read_record, VerifyContext};
    ///
    /// let record = read_record(br#"{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"triage","input":{}}]}"#);
    /// let mut context = VerifyContext::new();
    /// context.learn_calls_from_record(&record);
    /// assert_eq!(context.call_name("c1"), Some("triage"));
    /// ```
    pub fn learn_calls_from_record(&mut self, record: &RecordReport) {
        for part in record.items.iter().flat_map(|line| &line.value.content) {
            if let Part::ToolUse { id, name } = part {
                self.calls.insert(id.clone(), name.clone());
            }
        }
    }

    /// Whether `name` is a declared skill.
    ///
    /// ```
    /// assert!(!fence_runtime::surfaces::VerifyContext::new().is_skill("x"));
    /// ```
    pub fn is_skill(&self, name: &str) -> bool {
        self.skills.contains(name)
    }

    /// Whether the tools are declared and `name` is neither one of them nor a declared skill.
    ///
    /// ```
    /// assert!(!fence_runtime::surfaces::VerifyContext::new().is_undeclared("x"));
    /// ```
    pub fn is_undeclared(&self, name: &str) -> bool {
        self.tools
            .as_ref()
            .is_some_and(|tools| !tools.contains(name) && !self.is_skill(name))
    }

    /// The tool or skill a call went to, when known.
    ///
    /// ```
    /// assert_eq!(fence_runtime::surfaces::VerifyContext::new().call_name("c"), None);
    /// ```
    pub fn call_name(&self, tool_call_id: &str) -> Option<&str> {
        self.calls.get(tool_call_id).map(String::as_str)
    }

    /// Classifies an artifact frame. In order: `tool_call_id` and `duration_ms` both `null` is a
    /// hook artifact; a declared skill's name is a skill result; a non-null `exit_code` (a
    /// subprocess ran) or an `is_error` that is not `true` is a tool result; a failed call to an
    /// undeclared name is a dispatch failure; any other failed call is a [`ResultKind::FailedCall`].
    ///
    /// ```
    /// use fence_runtime::surfaces::{read_frame, ResultKind, VerifyContext};
    ///
    /// let hook = read_frame(r#"{"artifact":{"tool_name":"lint","content":"ok","tool_call_id":null,"duration_ms":null}}"#)?;
    /// assert_eq!(VerifyContext::new().classify_frame(&hook.artifact), ResultKind::HookArtifact);
    /// let ran = read_frame(r#"{"artifact":{"tool_name":"bash","content":"x","tool_call_id":"c","is_error":true,"duration_ms":5,"exit_code":1}}"#)?;
    /// assert_eq!(VerifyContext::new().classify_frame(&ran.artifact), ResultKind::ToolResult);
    /// # Ok::<(), fence_runtime::surfaces::ReadError>(())
    /// ```
    pub fn classify_frame(&self, artifact: &ParsedArtifact) -> ResultKind {
        let name = artifact.tool_name.as_deref();
        if artifact.tool_call_id.is_null() && artifact.duration_ms.is_null() {
            ResultKind::HookArtifact
        } else if name.is_some_and(|name| self.is_skill(name)) {
            ResultKind::SkillResult
        } else if artifact.exit_code.is_some() || artifact.is_error != Some(true) {
            ResultKind::ToolResult
        } else {
            self.failed_call(name)
        }
    }

    /// Classifies a record line. A line of a role other than `tool` is not a result. A `tool`
    /// line answering a call to a declared skill is a skill result; one whose `is_error` is not
    /// `true` is a tool result; a failed call to an undeclared name is a dispatch failure; any
    /// other failed call is a [`ResultKind::FailedCall`]. The call's name comes from the context
    /// (see [`with_call`](Self::with_call)).
    ///
    /// ```
    /// use fence_runtime::surfaces::{read_record, ResultKind, VerifyContext};
    ///
    /// let record = read_record(br#"{"role":"tool","tool_call_id":"c1","is_error":false,"content":[]}"#);
    /// let context = VerifyContext::new().with_skills(["triage"]).with_call("c1", "triage");
    /// assert_eq!(context.classify_message(&record.items[0].value), ResultKind::SkillResult);
    /// assert_eq!(VerifyContext::new().classify_message(&record.items[0].value), ResultKind::ToolResult);
    /// ```
    pub fn classify_message(&self, message: &ParsedMessage) -> ResultKind {
        if message.role != "tool" {
            return ResultKind::NotAResult;
        }
        let name = message
            .tool_call_id
            .as_deref()
            .and_then(|id| self.call_name(id));
        if name.is_some_and(|name| self.is_skill(name)) {
            ResultKind::SkillResult
        } else if message.is_error != Some(true) {
            ResultKind::ToolResult
        } else {
            self.failed_call(name)
        }
    }

    /// Classifies a `tool_call` trace event: a declared skill's name is a skill result; status
    /// `ok` is a tool result; a failed call to an undeclared name is a dispatch failure; any
    /// other failed call is a [`ResultKind::FailedCall`].
    ///
    /// ```
    /// use fence_runtime::surfaces::{read_trace, ParsedEvent, ResultKind, VerifyContext};
    ///
    /// let trace = read_trace(br#"{"event_type":"tool_call","tool_name":"x","output_bytes":0,"status":"error"}"#);
    /// let ParsedEvent::ToolCall(call) = &trace.items[0].value else { panic!() };
    /// assert_eq!(VerifyContext::new().with_tools(["bash"]).classify_tool_call(call), ResultKind::DispatchFailure);
    /// assert_eq!(VerifyContext::new().classify_tool_call(call), ResultKind::FailedCall);
    /// ```
    pub fn classify_tool_call(&self, call: &ParsedToolCall) -> ResultKind {
        if self.is_skill(&call.tool_name) {
            ResultKind::SkillResult
        } else if call.status == "ok" {
            ResultKind::ToolResult
        } else {
            self.failed_call(Some(&call.tool_name))
        }
    }

    fn failed_call(&self, name: Option<&str>) -> ResultKind {
        if name.is_some_and(|name| self.is_undeclared(name)) {
            ResultKind::DispatchFailure
        } else {
            ResultKind::FailedCall
        }
    }
}

/// One unit's content, its label, and what it is.
struct Unit<'a> {
    text: &'a str,
    label: &'a Label,
    /// Whether an absent label means "unlabelled" (false) or "missing" (true).
    surface_labels: bool,
    kind: ResultKind,
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
    if let Some(exemption) = unit.kind.exemption() {
        if markers != Markers::Plain {
            out.push(FindingKind::FenceOnExempt {
                exemption,
                markers: markers.source().map(ToString::to_string),
            });
        }
    } else if unit.kind == ResultKind::ToolResult {
        if let Some(error) = markers.error() {
            out.push(FindingKind::UnfencedToolResult { error });
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

fn located(findings: Vec<FindingKind>, location: &Location, out: &mut Vec<Finding>) {
    out.extend(findings.into_iter().map(|kind| Finding {
        location: location.clone(),
        kind,
    }));
}

/// Checks one artifact frame on its own. An absent `fence_source` is read as a frame from a
/// runtime that predates the key: the markers are read, and no label is missing.
///
/// ```
/// use fence_runtime::surfaces::{read_frame, verify_frame, FindingKind, VerifyContext};
///
/// let frame = read_frame(r#"{"id":"t","artifact":{"tool_name":"web-fetch","content":"<untrusted-content source=tool:web-fetch>\n{}\n</untrusted-content>","fence_source":"tool:other"}}"#)?;
/// assert_eq!(
///     verify_frame(&frame, &VerifyContext::new()),
///     [FindingKind::LabelMismatch { label: "tool:other".into(), markers: "tool:web-fetch".into() }],
/// );
/// # Ok::<(), fence_runtime::surfaces::ReadError>(())
/// ```
pub fn verify_frame(frame: &ParsedFrame, context: &VerifyContext) -> Vec<FindingKind> {
    let mut out = Vec::new();
    check_frame(&frame.artifact, false, context, &mut out);
    out
}

fn check_frame(
    artifact: &ParsedArtifact,
    surface_labels: bool,
    context: &VerifyContext,
    out: &mut Vec<FindingKind>,
) {
    check(
        &Unit {
            text: &artifact.content,
            label: &artifact.fence_source,
            surface_labels,
            kind: context.classify_frame(artifact),
        },
        out,
    );
}

/// Checks every frame of an artifact stream.
///
/// A stream where some frame carries `fence_source` labels its frames, and a fenced frame with
/// no `fence_source` key in it is a [`FindingKind::FenceWithoutLabel`]. A stream where no frame
/// carries the key comes from a runtime older than it: it is unlabelled, read from the markers.
///
/// ```
/// use fence_runtime::{fence, Source, ToolOutput};
/// use fence_runtime::surfaces::{read_sse, verify_stream, ArtifactFrame, CallMeta, SseEncoder, VerifyContext};
///
/// let output = ToolOutput::ok(fence(&Source::tool("bash"), "hello"));
/// let mut encoder = SseEncoder::new();
/// let capture = encoder.encode(&ArtifactFrame::tool_result("tsk_1", "bash", &output, CallMeta::new("c1", 3).exit_code(0)));
/// assert!(verify_stream(&read_sse(capture.as_bytes()), &VerifyContext::new()).is_empty());
/// ```
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
        let location = Location {
            surface: Surface::ArtifactStream,
            line: item.line,
            frame_id: item.value.id.clone(),
        };
        located(findings, &location, &mut out);
    }
    out
}

/// Checks every message line of a conversation record.
///
/// A record where some line carries a `fence` key labels its lines, and a fenced line with no
/// `fence` key is a [`FindingKind::FenceWithoutLabel`]. A record where no line carries the key
/// was written before it existed: it is unlabelled, read from the markers. Calls named by the
/// record's own `tool_use` parts are learned before the lines are classified.
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
pub fn verify_record(record: &RecordReport, context: &VerifyContext) -> Vec<Finding> {
    let mut context = context.clone();
    context.learn_calls_from_record(record);
    let surface_labels = record.is_labelled();
    let mut out = Vec::new();
    for line in &record.items {
        let mut findings = Vec::new();
        check(
            &Unit {
                text: &line.value.text(),
                label: &line.value.fence,
                surface_labels,
                kind: context.classify_message(&line.value),
            },
            &mut findings,
        );
        let location = Location {
            surface: Surface::Record,
            line: line.line,
            frame_id: None,
        };
        located(findings, &location, &mut out);
    }
    out
}

/// Checks every `tool_call` and `skill_call` event of a trace.
///
/// The trace is unlabelled: an event's `output`, when recorded, is read from its markers. A
/// `tool_call` that reached a tool must be fenced; a `skill_call` (or a `tool_call` to a
/// declared skill) must not; `output_bytes` must equal the byte length of `output`.
///
/// ```
/// use fence_runtime::surfaces::{read_trace, verify_trace, FindingKind, VerifyContext};
///
/// let trace = read_trace(br#"{"event_type":"tool_call","tool_name":"bash","output":"hello","output_bytes":5,"status":"ok"}"#);
/// let findings = verify_trace(&trace, &VerifyContext::new());
/// assert_eq!(findings[0].kind.name(), "unfenced-tool-result");
/// ```
pub fn verify_trace(trace: &TraceReport, context: &VerifyContext) -> Vec<Finding> {
    let mut out = Vec::new();
    for event in &trace.items {
        let (output, output_bytes, kind) = match &event.value {
            ParsedEvent::ToolCall(call) => (
                call.output.as_deref(),
                call.output_bytes,
                context.classify_tool_call(call),
            ),
            ParsedEvent::SkillCall(call) => (
                call.output.as_deref(),
                call.output_bytes,
                ResultKind::SkillResult,
            ),
        };
        let Some(output) = output else { continue };
        let mut findings = Vec::new();
        check(
            &Unit {
                text: output,
                label: &Label::Absent,
                surface_labels: false,
                kind,
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
        let location = Location {
            surface: Surface::Trace,
            line: event.line,
            frame_id: None,
        };
        located(findings, &location, &mut out);
    }
    out
}
