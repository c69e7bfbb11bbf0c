//! Verifying a surface: each unit checked ([`check`](crate::check)) and its findings located,
//! with every unit the reader could not read among them, in line order — a whole surface at
//! once, or unit by unit as it streams.

use crate::artifact::ParsedFrame;
use crate::check::{check_event, check_frame, check_message};
use crate::context::VerifyContext;
use crate::finding::{Finding, FindingKind, Location, Surface};
use crate::record::{ParsedMessage, RecordReport};
use crate::report::{LineError, Located, Report, SkippedUnit, Unit, UnitRef};
use crate::sse::{StreamFrame, StreamReport};
use crate::trace::{ParsedEvent, TraceReport};

/// Checks one artifact frame on its own, as [`read_frame`](crate::read_frame) read it: its
/// findings are located on the artifact stream, at line 1 (the frame's one line of JSON), with
/// no frame id. An absent `fence_source` is read as a frame from a runtime that predates the
/// key: the markers are read, and no label is missing.
///
/// ```
/// use fence_surfaces::{read_frame, verify_frame, FindingKind, Location, Surface, VerifyContext};
///
/// let frame = read_frame(r#"{"id":"t","artifact":{"tool_name":"web-fetch","content":"<untrusted-content source=tool:web-fetch>\n{}\n</untrusted-content>","fence_source":"tool:other"}}"#)?;
/// let findings = verify_frame(&frame, &VerifyContext::new());
/// assert_eq!(findings.len(), 1);
/// assert_eq!(findings[0].location, Location::new(Surface::ArtifactStream, 1));
/// assert_eq!(
///     findings[0].kind,
///     FindingKind::LabelMismatch { label: "tool:other".into(), markers: "tool:web-fetch".into() },
/// );
/// # Ok::<(), fence_surfaces::ReadError>(())
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

/// Checks every frame of an artifact stream, and reports every event that could not be read,
/// and every event of another type whose data holds a live marker.
///
/// A stream where some frame carries `fence_source` labels its frames, and a fenced frame with
/// no `fence_source` key in it is a [`FindingKind::FenceWithoutLabel`]. A stream where no frame
/// carries the key comes from a runtime older than it: it is unlabelled, read from the markers.
/// An `artifact` event that could not be read is a [`FindingKind::UnreadableUnit`]: nothing the
/// reader saw is left out of the findings.
///
/// A [`StreamVerifier`] does the same one frame at a time, for a stream too large to hold.
///
/// ```
/// use fence_runtime::{fence, Source, ToolOutput};
/// use fence_surfaces::{read_sse, verify_stream, ArtifactFrame, CallMeta, SseEncoder, VerifyContext};
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
    let mut verifier = StreamVerifier::new(context.clone());
    for item in &stream.items {
        verifier.learn(&item.value);
    }
    verify_units(stream, |item| verifier.check(item), Surface::ArtifactStream)
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
/// A [`RecordVerifier`] does the same one line at a time, for a record too large to hold.
///
/// ```
/// use fence_runtime::{fence, ModelContent, Source, ToolOutput};
/// use fence_surfaces::{read_record, verify_record, RecordLine, VerifyContext};
///
/// let output = ToolOutput::ok(fence(&Source::tool("web-fetch"), "{}"));
/// let reply = ModelContent::model_text("Fetched it.");
/// let record = [RecordLine::tool_result("c1", &output).to_json(), RecordLine::assistant(&reply).to_json()].join("\n");
/// assert!(verify_record(&read_record(record.as_bytes()), &VerifyContext::new()).is_empty());
/// ```
#[must_use]
pub fn verify_record(record: &RecordReport, context: &VerifyContext) -> Vec<Finding> {
    let mut verifier = RecordVerifier::new(context.clone());
    for line in &record.items {
        verifier.learn(&line.value);
    }
    verify_units(record, |line| verifier.check(line), Surface::Record)
}

/// Checks every `tool_call` and `skill_call` event of a trace, and reports every line that
/// could not be read.
///
/// The trace is unlabelled: an event's `output`, when recorded, is read from its markers. A
/// `tool_call` that reached a tool must be fenced, under `tool:<tool_name>` (a `tool_call` under
/// a declared skill's name is reported, and checked as a tool's result all the same); a
/// `skill_call` must not; a failed `tool_call` is one block or text with no live marker;
/// `output_bytes` must equal the byte length of `output`; `status` must be `ok` or `error` (a
/// `tool_call` with any other status is checked as a tool result). An event of any other type
/// is passed over, and reported if a string in it holds a live marker.
///
/// A [`TraceVerifier`] does the same one line at a time.
///
/// ```
/// use fence_surfaces::{read_trace, verify_trace, FindingKind, VerifyContext};
///
/// let trace = read_trace(br#"{"event_type":"tool_call","tool_name":"bash","output":"hello","output_bytes":5,"status":"ok"}"#);
/// let findings = verify_trace(&trace, &VerifyContext::new());
/// assert_eq!(findings[0].kind.name(), "unfenced-tool-result");
/// ```
#[must_use]
pub fn verify_trace(trace: &TraceReport, context: &VerifyContext) -> Vec<Finding> {
    let verifier = TraceVerifier::new(context.clone());
    verify_units(trace, |event| verifier.check(event), Surface::Trace)
}

/// Verifies an artifact stream frame by frame, in memory bounded by the largest frame: for a
/// stream read with an [`SseReader`](crate::SseReader) rather than collected.
///
/// Whether the stream labels its frames is a fact about the whole stream (see
/// [`verify_stream`]), so verifying takes two passes: [`learn`](Self::learn) from every frame,
/// then [`verify`](Self::verify) every unit, in order. Both passes over the same stream give
/// exactly the findings [`verify_stream`] gives, in the same order. (A caller that knows the
/// stream is labelled, or reads a live stream once, can say so with
/// [`with_labelled`](Self::with_labelled) and skip the first pass.)
///
/// ```
/// use fence_surfaces::{SseReader, StreamVerifier, Unit, VerifyContext};
///
/// let capture = b"event: artifact\nid: 1\ndata: {\"artifact\":{\"tool_name\":\"bash\",\"content\":\"<untrusted-content source=tool:bash>\\nok\\n</untrusted-content>\",\"fence_source\":\"tool:bash\"}}\n\nevent: artifact\nid: 2\ndata: {\"artifact\":{\"tool_name\":\"bash\",\"content\":\"<untrusted-content source=tool:bash>\\nok\\n</untrusted-content>\"}}\n\n";
/// let mut verifier = StreamVerifier::new(VerifyContext::new());
///
/// let mut first = SseReader::new();
/// first.push(capture, |unit| if let Unit::Item(frame) = unit { verifier.learn(&frame.value) });
/// first.finish(|unit| if let Unit::Item(frame) = unit { verifier.learn(&frame.value) });
/// assert!(verifier.is_labelled());
///
/// let mut findings = Vec::new();
/// let mut second = SseReader::new();
/// second.push(capture, |unit| findings.extend(verifier.verify(&unit)));
/// second.finish(|unit| findings.extend(verifier.verify(&unit)));
/// assert_eq!(findings.len(), 1);
/// assert_eq!(findings[0].kind.name(), "fence-without-label");
/// assert_eq!(findings[0].location.frame_id.as_deref(), Some("2"));
/// ```
#[derive(Clone, Debug)]
pub struct StreamVerifier {
    context: VerifyContext,
    labelled: bool,
}

impl StreamVerifier {
    /// A verifier that has learned nothing about the stream yet: unlabelled until
    /// [`learn`](Self::learn) meets a frame that carries `fence_source`.
    ///
    /// ```
    /// use fence_surfaces::{StreamVerifier, VerifyContext};
    ///
    /// assert!(!StreamVerifier::new(VerifyContext::new()).is_labelled());
    /// ```
    #[must_use]
    pub fn new(context: VerifyContext) -> StreamVerifier {
        StreamVerifier {
            context,
            labelled: false,
        }
    }

    /// Says whether the stream labels its frames, without a first pass.
    ///
    /// ```
    /// use fence_surfaces::{StreamVerifier, VerifyContext};
    ///
    /// assert!(StreamVerifier::new(VerifyContext::new()).with_labelled(true).is_labelled());
    /// ```
    #[must_use]
    pub fn with_labelled(mut self, labelled: bool) -> StreamVerifier {
        self.labelled = labelled;
        self
    }

    /// The first pass: learns from one frame whether the stream labels its frames, and the call
    /// it names (so that a call id the stream binds to two names is reported).
    ///
    /// ```
    /// use fence_surfaces::{read_sse, StreamVerifier, VerifyContext};
    ///
    /// let stream = read_sse(b"event: artifact\ndata: {\"artifact\":{\"content\":\"x\",\"fence_source\":null}}\n\n");
    /// let mut verifier = StreamVerifier::new(VerifyContext::new());
    /// verifier.learn(&stream.items[0].value);
    /// assert!(verifier.is_labelled()); // `null` is a label: "unfenced"
    /// ```
    pub fn learn(&mut self, frame: &StreamFrame) {
        self.labelled |= frame.frame.artifact.fence_source.is_present();
        self.context.learn_call_from_frame(&frame.frame);
    }

    /// Whether the frames learned so far say the stream labels its frames.
    ///
    /// ```
    /// use fence_surfaces::{StreamVerifier, VerifyContext};
    ///
    /// assert!(!StreamVerifier::new(VerifyContext::new()).is_labelled());
    /// ```
    #[must_use]
    pub fn is_labelled(&self) -> bool {
        self.labelled
    }

    /// The second pass: the findings of one unit, located. A frame is checked; an event that
    /// could not be read is one [`FindingKind::UnreadableUnit`]; an event skipped has none.
    ///
    /// ```
    /// use fence_surfaces::{SseReader, StreamVerifier, VerifyContext};
    ///
    /// let verifier = StreamVerifier::new(VerifyContext::new());
    /// let mut findings = Vec::new();
    /// let mut reader = SseReader::new();
    /// reader.push(b"event: artifact\nid: 3\ndata: {oops}\n\n", |unit| findings.extend(verifier.verify(&unit)));
    /// assert_eq!(findings[0].kind.name(), "unreadable-unit");
    /// assert_eq!((findings[0].location.line, findings[0].location.frame_id.as_deref()), (3, Some("3")));
    /// ```
    #[must_use]
    pub fn verify(&self, unit: &Unit<StreamFrame>) -> Vec<Finding> {
        verify_unit(unit, |item| self.check(item), Surface::ArtifactStream)
    }

    fn check(&self, item: &Located<StreamFrame>) -> Vec<Finding> {
        let mut findings = Vec::new();
        check_frame(
            &item.value.frame.artifact,
            self.labelled,
            &self.context,
            &mut findings,
        );
        let location = at(
            Surface::ArtifactStream,
            item.line,
            item.value.id.as_ref(),
            None,
        );
        let mut out = Vec::new();
        located(findings, &location, &mut out);
        out
    }
}

/// Verifies a conversation record line by line, in memory bounded by the longest line (and the
/// calls it learns): for a record read with a [`RecordReader`](crate::RecordReader) rather than
/// collected.
///
/// Two facts about the whole record decide how a line is read (see [`verify_record`]): whether
/// some line carries a `fence` key, and which tool or skill each call part names — a `tool`
/// line may come before the call it answers is named. So verifying takes two passes:
/// [`learn`](Self::learn) from every line, then [`verify`](Self::verify) every unit, in order.
/// Both passes over the same record give exactly the findings [`verify_record`] gives, in the
/// same order.
///
/// ```
/// use fence_surfaces::{RecordReader, RecordVerifier, Unit, VerifyContext};
///
/// let record = b"{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"Triage notes\"}\n{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"c1\",\"name\":\"triage\",\"input\":{}}]}\n";
/// let mut verifier = RecordVerifier::new(VerifyContext::new().with_skills(["triage"]));
///
/// let mut first = RecordReader::new();
/// first.push(record, |unit| if let Unit::Item(line) = unit { verifier.learn(&line.value) });
/// first.finish(|unit| if let Unit::Item(line) = unit { verifier.learn(&line.value) });
///
/// let mut findings = Vec::new();
/// let mut second = RecordReader::new();
/// second.push(record, |unit| findings.extend(verifier.verify(&unit)));
/// second.finish(|unit| findings.extend(verifier.verify(&unit)));
/// assert!(findings.is_empty()); // line 1 is the skill's doc: line 2 named the call
/// ```
#[derive(Clone, Debug)]
pub struct RecordVerifier {
    context: VerifyContext,
    labelled: bool,
}

impl RecordVerifier {
    /// A verifier that has learned nothing about the record yet.
    ///
    /// ```
    /// use fence_surfaces::{RecordVerifier, VerifyContext};
    ///
    /// assert!(!RecordVerifier::new(VerifyContext::new()).is_labelled());
    /// ```
    #[must_use]
    pub fn new(context: VerifyContext) -> RecordVerifier {
        RecordVerifier {
            context,
            labelled: false,
        }
    }

    /// The first pass: learns from one line whether the record labels its lines, and the calls
    /// its call parts name.
    ///
    /// ```
    /// use fence_surfaces::{read_record, RecordVerifier, VerifyContext};
    ///
    /// let record = read_record(br#"{"role":"tool","content":[],"fence":null}"#);
    /// let mut verifier = RecordVerifier::new(VerifyContext::new());
    /// verifier.learn(&record.items[0].value);
    /// assert!(verifier.is_labelled());
    /// ```
    pub fn learn(&mut self, message: &ParsedMessage) {
        self.labelled |= message.fence.is_present();
        self.context.learn_calls_from_message(message);
    }

    /// Whether the lines learned so far say the record labels its lines.
    ///
    /// ```
    /// use fence_surfaces::{RecordVerifier, VerifyContext};
    ///
    /// assert!(!RecordVerifier::new(VerifyContext::new()).is_labelled());
    /// ```
    #[must_use]
    pub fn is_labelled(&self) -> bool {
        self.labelled
    }

    /// The context the lines are classified with: the one given, and the calls learned.
    ///
    /// ```
    /// use fence_surfaces::{read_record, RecordVerifier, VerifyContext};
    ///
    /// let record = read_record(br#"{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"bash","input":{}}]}"#);
    /// let mut verifier = RecordVerifier::new(VerifyContext::new());
    /// verifier.learn(&record.items[0].value);
    /// assert_eq!(verifier.context().call_name("c1"), Some("bash"));
    /// ```
    #[must_use]
    pub fn context(&self) -> &VerifyContext {
        &self.context
    }

    /// The second pass: the findings of one unit, located. A line is checked; a line that
    /// could not be read is one [`FindingKind::UnreadableUnit`]; a line skipped has none.
    ///
    /// ```
    /// use fence_surfaces::{RecordReader, RecordVerifier, VerifyContext};
    ///
    /// let verifier = RecordVerifier::new(VerifyContext::new());
    /// let mut findings = Vec::new();
    /// let mut reader = RecordReader::new();
    /// reader.push(b"{\"role\":\"tool\",\"content\":\"raw page\"}\n", |unit| findings.extend(verifier.verify(&unit)));
    /// assert_eq!(findings[0].kind.name(), "unfenced-tool-result");
    /// ```
    #[must_use]
    pub fn verify(&self, unit: &Unit<ParsedMessage>) -> Vec<Finding> {
        verify_unit(unit, |line| self.check(line), Surface::Record)
    }

    fn check(&self, line: &Located<ParsedMessage>) -> Vec<Finding> {
        let mut out = Vec::new();
        for (part, findings) in check_message(&line.value, self.labelled, &self.context) {
            located(
                findings,
                &at(Surface::Record, line.line, None, part),
                &mut out,
            );
        }
        out
    }
}

/// Verifies a trace line by line, in memory bounded by the longest line: for a trace read with
/// a [`TraceReader`](crate::TraceReader) rather than collected.
///
/// A trace is unlabelled and a line's verdict depends on nothing else in the trace, so one pass
/// is enough. Over a whole trace it gives exactly the findings [`verify_trace`] gives.
///
/// ```
/// use fence_surfaces::{TraceReader, TraceVerifier, VerifyContext};
///
/// let verifier = TraceVerifier::new(VerifyContext::new());
/// let mut findings = Vec::new();
/// let mut reader = TraceReader::new();
/// reader.push(br#"{"event_type":"tool_call","tool_name":"bash","output":"hi","output_bytes":3,"status":"ok"}"#, |unit| findings.extend(verifier.verify(&unit)));
/// reader.finish(|unit| findings.extend(verifier.verify(&unit)));
/// let names: Vec<_> = findings.iter().map(|finding| finding.kind.name()).collect();
/// assert_eq!(names, ["unfenced-tool-result", "output-bytes-mismatch"]);
/// ```
#[derive(Clone, Debug)]
pub struct TraceVerifier {
    context: VerifyContext,
}

impl TraceVerifier {
    /// A verifier with `context`.
    ///
    /// ```
    /// use fence_surfaces::{TraceVerifier, VerifyContext};
    ///
    /// let verifier = TraceVerifier::new(VerifyContext::new().with_skills(["triage"]));
    /// # let _ = verifier;
    /// ```
    #[must_use]
    pub fn new(context: VerifyContext) -> TraceVerifier {
        TraceVerifier { context }
    }

    /// The findings of one unit, located. An event is checked; a line that could not be read is
    /// one [`FindingKind::UnreadableUnit`]; a line skipped has none.
    ///
    /// ```
    /// use fence_surfaces::{TraceReader, TraceVerifier, VerifyContext};
    ///
    /// let verifier = TraceVerifier::new(VerifyContext::new());
    /// let mut findings = Vec::new();
    /// let mut reader = TraceReader::new();
    /// reader.push(b"{\"event_type\":\"turn_end\"}\n{\"no\":1}\n", |unit| findings.extend(verifier.verify(&unit)));
    /// assert_eq!((findings.len(), findings[0].location.line), (1, 2));
    /// ```
    #[must_use]
    pub fn verify(&self, unit: &Unit<ParsedEvent>) -> Vec<Finding> {
        verify_unit(unit, |event| self.check(event), Surface::Trace)
    }

    fn check(&self, event: &Located<ParsedEvent>) -> Vec<Finding> {
        let mut out = Vec::new();
        located(
            check_event(&event.value, &self.context),
            &at(Surface::Trace, event.line, None, None),
            &mut out,
        );
        out
    }
}

/// The findings of one unit: an item's from `check`, a failed unit's one
/// [`FindingKind::UnreadableUnit`].
fn verify_unit<T>(
    unit: &Unit<T>,
    check: impl FnOnce(&Located<T>) -> Vec<Finding>,
    surface: Surface,
) -> Vec<Finding> {
    match unit {
        Unit::Item(item) => check(item),
        Unit::Failed(error) => vec![unreadable(surface, error)],
        Unit::SkippedWithMarker(skipped) => vec![skipped_with_marker(surface, skipped)],
        Unit::Skipped => Vec::new(),
    }
}

/// The findings of every unit of a collected surface, in line order: what the unit-by-unit
/// verifiers give over the same units.
fn verify_units<T>(
    report: &Report<T>,
    mut check: impl FnMut(&Located<T>) -> Vec<Finding>,
    surface: Surface,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for unit in report.read_units() {
        match unit {
            UnitRef::Item(item) => out.extend(check(item)),
            UnitRef::Failed(error) => out.push(unreadable(surface, error)),
            UnitRef::SkippedWithMarker(skipped) => out.push(skipped_with_marker(surface, skipped)),
        }
    }
    out
}

/// The one finding of a unit that could not be read: nothing in it was checked.
fn unreadable(surface: Surface, error: &LineError) -> Finding {
    Finding {
        location: at(surface, error.line, error.frame_id.as_ref(), None),
        kind: FindingKind::UnreadableUnit {
            error: error.error.clone(),
        },
    }
}

/// The one finding of a unit passed over whose text holds a live marker.
fn skipped_with_marker(surface: Surface, skipped: &Located<SkippedUnit>) -> Finding {
    let unit = &skipped.value;
    Finding {
        location: at(surface, skipped.line, unit.frame_id.as_ref(), None),
        kind: FindingKind::LiveMarkerInSkippedUnit {
            unit: unit.unit.clone(),
            path: unit.path.clone(),
            offset: unit.offset,
            marker: unit.marker,
        },
    }
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
