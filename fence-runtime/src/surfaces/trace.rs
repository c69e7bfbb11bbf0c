//! `trace.jsonl`: `tool_call` and `skill_call` events, written with their byte counts computed
//! from the content, and a tolerant reader.

use alloc::format;
use alloc::string::String;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::read::{
    JsonlLines, Outcome, ReadError, Report, SkippedUnit, Unit, from_value, jsonl_unit, parse_value,
};
use crate::content::{ModelContent, ToolOutput};

/// What every trace event carries: the session, the time (Unix milliseconds) and the turn.
///
/// ```
/// use fence_runtime::surfaces::EventMeta;
///
/// let meta = EventMeta::new("ses_1", 1_767_225_600_000, 3);
/// assert_eq!(meta.turn(), 3);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventMeta<'a> {
    session_id: &'a str,
    timestamp: u64,
    turn: u32,
}

impl<'a> EventMeta<'a> {
    /// The metadata of an event in `session_id`, at `timestamp_ms` (Unix milliseconds), in
    /// `turn`.
    ///
    /// ```
    /// let meta = fence_runtime::surfaces::EventMeta::new("ses_1", 5, 1);
    /// assert_eq!(meta.session_id(), "ses_1");
    /// ```
    #[must_use]
    pub const fn new(session_id: &'a str, timestamp_ms: u64, turn: u32) -> EventMeta<'a> {
        EventMeta {
            session_id,
            timestamp: timestamp_ms,
            turn,
        }
    }

    /// The session id.
    ///
    /// ```
    /// assert_eq!(fence_runtime::surfaces::EventMeta::new("s", 0, 0).session_id(), "s");
    /// ```
    #[must_use]
    pub const fn session_id(&self) -> &'a str {
        self.session_id
    }

    /// The time of the event, in Unix milliseconds.
    ///
    /// ```
    /// assert_eq!(fence_runtime::surfaces::EventMeta::new("s", 42, 0).timestamp_ms(), 42);
    /// ```
    #[must_use]
    pub const fn timestamp_ms(&self) -> u64 {
        self.timestamp
    }

    /// The turn.
    ///
    /// ```
    /// assert_eq!(fence_runtime::surfaces::EventMeta::new("s", 0, 7).turn(), 7);
    /// ```
    #[must_use]
    pub const fn turn(&self) -> u32 {
        self.turn
    }
}

/// A call's `status` on the wire: `"ok"` or `"error"`.
///
/// ```
/// use fence_runtime::surfaces::Status;
///
/// assert_eq!(Status::Error.as_str(), "error");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Status {
    /// The call succeeded.
    Ok,
    /// The tool failed, or the call never reached it.
    Error,
}

impl Status {
    /// The wire spelling.
    ///
    /// ```
    /// assert_eq!(fence_runtime::surfaces::Status::Ok.as_str(), "ok");
    /// ```
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Error => "error",
        }
    }
}

/// What a tool call did to state, on the wire: `"read"` or `"mutate"`.
///
/// ```
/// use fence_runtime::surfaces::StateEffect;
///
/// assert_eq!(StateEffect::Mutate.as_str(), "mutate");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum StateEffect {
    /// The call only read state.
    Read,
    /// The call changed state.
    Mutate,
}

impl StateEffect {
    /// The wire spelling.
    ///
    /// ```
    /// assert_eq!(fence_runtime::surfaces::StateEffect::Read.as_str(), "read");
    /// ```
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            StateEffect::Read => "read",
            StateEffect::Mutate => "mutate",
        }
    }
}

fn byte_len(text: &str) -> u64 {
    u64::try_from(text.len()).unwrap_or(u64::MAX)
}

/// A `tool_call` trace event, ready to serialise.
///
/// Keys in wire order: `event_type`, `session_id`, `timestamp`, `turn`, `tool_name`, `input`,
/// `input_bytes`, `output`, `output_bytes`, `duration_ms`, `status`, `state_effect`,
/// `resource_id`. `output_bytes` is the byte length of the output text the model received,
/// fence markers included, and `input_bytes` that of `input` as written: both are computed,
/// never passed in. `status` follows the output's error flag. `output`, `state_effect` and
/// `resource_id` are absent unless set.
///
/// ```
/// use fence_runtime::{fence, Source, ToolOutput};
/// use fence_runtime::surfaces::{EventMeta, StateEffect, ToolCallEvent};
/// use serde_json::value::RawValue;
///
/// let input = RawValue::from_string(r#"{"url":"https://example.com"}"#.into())?;
/// let output = ToolOutput::ok(fence(&Source::tool("web-fetch"), "{\"status\":200}"));
/// let event = ToolCallEvent::new(EventMeta::new("ses_1", 1_767_225_600_000, 1), "web-fetch", &input, &output, 40)
///     .with_state_effect(StateEffect::Read);
/// assert_eq!(event.output_bytes(), output.content().as_str().len() as u64);
/// assert_eq!(
///     event.to_json(),
///     r#"{"event_type":"tool_call","session_id":"ses_1","timestamp":1767225600000,"turn":1,"tool_name":"web-fetch","input":{"url":"https://example.com"},"input_bytes":29,"output_bytes":77,"duration_ms":40,"status":"ok","state_effect":"read"}"#,
/// );
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, Serialize)]
pub struct ToolCallEvent<'a> {
    event_type: &'static str,
    session_id: &'a str,
    timestamp: u64,
    turn: u32,
    tool_name: &'a str,
    input: &'a RawValue,
    input_bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    output: Option<&'a str>,
    output_bytes: u64,
    duration_ms: u64,
    status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    state_effect: Option<StateEffect>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_id: Option<&'a str>,
    #[serde(skip)]
    output_text: &'a str,
}

impl<'a> ToolCallEvent<'a> {
    /// The event of a call to `tool_name` with `input` that produced `output`.
    ///
    /// ```
    /// use fence_runtime::ToolOutput;
    /// use fence_runtime::surfaces::{EventMeta, Status, ToolCallEvent};
    /// use serde_json::value::RawValue;
    ///
    /// let input = RawValue::from_string("{}".into())?;
    /// let output = ToolOutput::dispatch_failure("tool 'x' is not declared in manifest allowlist");
    /// let event = ToolCallEvent::new(EventMeta::new("s", 0, 1), "x", &input, &output, 0);
    /// assert_eq!(event.status(), Status::Error);
    /// assert_eq!(event.output_bytes(), 46);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    #[must_use]
    pub fn new(
        meta: EventMeta<'a>,
        tool_name: &'a str,
        input: &'a RawValue,
        output: &'a ToolOutput,
        duration_ms: u64,
    ) -> ToolCallEvent<'a> {
        let output_text = output.content().as_str();
        ToolCallEvent {
            event_type: "tool_call",
            session_id: meta.session_id,
            timestamp: meta.timestamp,
            turn: meta.turn,
            tool_name,
            input,
            input_bytes: byte_len(input.get()),
            output: None,
            output_bytes: byte_len(output_text),
            duration_ms,
            status: if output.is_error() {
                Status::Error
            } else {
                Status::Ok
            },
            state_effect: None,
            resource_id: None,
            output_text,
        }
    }

    /// Sets the `output` key: the output text itself, for an agent that opts into recording
    /// tool output.
    ///
    /// ```
    /// use fence_runtime::{fence, Source, ToolOutput};
    /// use fence_runtime::surfaces::{EventMeta, ToolCallEvent};
    /// use serde_json::value::RawValue;
    ///
    /// let input = RawValue::from_string("{}".into())?;
    /// let output = ToolOutput::ok(fence(&Source::tool("t"), "x"));
    /// let event = ToolCallEvent::new(EventMeta::new("s", 0, 1), "t", &input, &output, 1).with_output();
    /// assert!(event.to_json().contains(r#""output":"<untrusted-content source=tool:t>\nx\n</untrusted-content>","output_bytes":56"#));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    #[must_use]
    pub fn with_output(mut self) -> ToolCallEvent<'a> {
        self.output = Some(self.output_text);
        self
    }

    /// Sets what the call did to state.
    ///
    /// ```
    /// use fence_runtime::{fence, Source, ToolOutput};
    /// use fence_runtime::surfaces::{EventMeta, StateEffect, ToolCallEvent};
    /// use serde_json::value::RawValue;
    ///
    /// let input = RawValue::from_string("{}".into())?;
    /// let output = ToolOutput::ok(fence(&Source::tool("t"), "x"));
    /// let event = ToolCallEvent::new(EventMeta::new("s", 0, 1), "t", &input, &output, 1)
    ///     .with_state_effect(StateEffect::Mutate);
    /// assert!(event.to_json().ends_with(r#""state_effect":"mutate"}"#));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    #[must_use]
    pub fn with_state_effect(mut self, effect: StateEffect) -> ToolCallEvent<'a> {
        self.state_effect = Some(effect);
        self
    }

    /// Sets the id of the resource the call touched.
    ///
    /// ```
    /// use fence_runtime::{fence, Source, ToolOutput};
    /// use fence_runtime::surfaces::{EventMeta, ToolCallEvent};
    /// use serde_json::value::RawValue;
    ///
    /// let input = RawValue::from_string("{}".into())?;
    /// let output = ToolOutput::ok(fence(&Source::tool("t"), "x"));
    /// let event = ToolCallEvent::new(EventMeta::new("s", 0, 1), "t", &input, &output, 1).with_resource_id("doc_9");
    /// assert!(event.to_json().ends_with(r#""resource_id":"doc_9"}"#));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    #[must_use]
    pub fn with_resource_id(mut self, id: &'a str) -> ToolCallEvent<'a> {
        self.resource_id = Some(id);
        self
    }

    /// The byte length of the output text, fence markers included.
    ///
    /// ```
    /// use fence_runtime::{fence, Source, ToolOutput};
    /// use fence_runtime::surfaces::{EventMeta, ToolCallEvent};
    /// use serde_json::value::RawValue;
    ///
    /// let input = RawValue::from_string("{}".into())?;
    /// let output = ToolOutput::ok(fence(&Source::tool("t"), ""));
    /// let event = ToolCallEvent::new(EventMeta::new("s", 0, 1), "t", &input, &output, 1);
    /// assert_eq!(event.output_bytes(), "<untrusted-content source=tool:t>\n\n</untrusted-content>".len() as u64);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    #[must_use]
    pub fn output_bytes(&self) -> u64 {
        self.output_bytes
    }

    /// The call's status, from the output's error flag.
    ///
    /// ```
    /// use fence_runtime::{fence, Source, ToolOutput};
    /// use fence_runtime::surfaces::{EventMeta, Status, ToolCallEvent};
    /// use serde_json::value::RawValue;
    ///
    /// let input = RawValue::from_string("{}".into())?;
    /// let output = ToolOutput::error(fence(&Source::tool("t"), "boom"));
    /// assert_eq!(ToolCallEvent::new(EventMeta::new("s", 0, 1), "t", &input, &output, 1).status(), Status::Error);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    #[must_use]
    pub fn status(&self) -> Status {
        self.status
    }

    /// The event as compact JSON, without the line ending.
    ///
    /// # Panics
    ///
    /// Never: an event holds strings, integers and an already valid JSON `input`.
    ///
    /// ```
    /// use fence_runtime::{fence, Source, ToolOutput};
    /// use fence_runtime::surfaces::{EventMeta, ToolCallEvent};
    /// use serde_json::value::RawValue;
    ///
    /// let input = RawValue::from_string("{}".into())?;
    /// let output = ToolOutput::ok(fence(&Source::tool("t"), "x"));
    /// assert!(ToolCallEvent::new(EventMeta::new("s", 0, 1), "t", &input, &output, 1).to_json().starts_with(r#"{"event_type":"tool_call""#));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a tool_call event always serialises")
    }
}

/// A `skill_call` trace event, ready to serialise: `event_type`, `session_id`, `timestamp`,
/// `turn`, `skill_name`, `output_bytes`, `duration_ms`, `status`.
///
/// It is built from a declared skill's `skill.md` as [`ModelContent::skill_doc`] builds it — the
/// skill-doc exemption, never fenced — and records only its byte length: a `skill_call` has no
/// key that could carry the text or a label.
///
/// ```
/// use fence_runtime::ModelContent;
/// use fence_runtime::surfaces::{EventMeta, SkillCallEvent};
///
/// let doc = ModelContent::skill_doc("# Triage\nRead the ticket.\n");
/// let event = SkillCallEvent::new(EventMeta::new("ses_1", 1_767_225_600_000, 2), "triage", &doc, 1);
/// assert_eq!(
///     event.to_json(),
///     r#"{"event_type":"skill_call","session_id":"ses_1","timestamp":1767225600000,"turn":2,"skill_name":"triage","output_bytes":26,"duration_ms":1,"status":"ok"}"#,
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SkillCallEvent<'a> {
    event_type: &'static str,
    session_id: &'a str,
    timestamp: u64,
    turn: u32,
    skill_name: &'a str,
    output_bytes: u64,
    duration_ms: u64,
    status: Status,
}

impl<'a> SkillCallEvent<'a> {
    /// The event of a call to the declared skill `skill_name` that returned `skill_doc`;
    /// `output_bytes` is the byte length of its text.
    ///
    /// ```
    /// use fence_runtime::ModelContent;
    /// use fence_runtime::surfaces::{EventMeta, SkillCallEvent};
    ///
    /// let event = SkillCallEvent::new(EventMeta::new("s", 0, 1), "triage", &ModelContent::skill_doc("four"), 0);
    /// assert_eq!(event.output_bytes(), 4);
    /// ```
    #[must_use]
    pub fn new(
        meta: EventMeta<'a>,
        skill_name: &'a str,
        skill_doc: &ModelContent,
        duration_ms: u64,
    ) -> SkillCallEvent<'a> {
        SkillCallEvent {
            event_type: "skill_call",
            session_id: meta.session_id,
            timestamp: meta.timestamp,
            turn: meta.turn,
            skill_name,
            output_bytes: byte_len(skill_doc.as_str()),
            duration_ms,
            status: Status::Ok,
        }
    }

    /// Sets the call's status, `ok` unless set: [`Status::Error`] when the skill's `skill.md`
    /// could not be returned.
    ///
    /// ```
    /// use fence_runtime::ModelContent;
    /// use fence_runtime::surfaces::{EventMeta, SkillCallEvent, Status};
    ///
    /// let event = SkillCallEvent::new(EventMeta::new("s", 0, 1), "triage", &ModelContent::skill_doc(""), 0)
    ///     .with_status(Status::Error);
    /// assert!(event.to_json().ends_with(r#""status":"error"}"#));
    /// ```
    #[must_use]
    pub fn with_status(mut self, status: Status) -> SkillCallEvent<'a> {
        self.status = status;
        self
    }

    /// The byte length of the returned `skill.md` text.
    ///
    /// ```
    /// use fence_runtime::ModelContent;
    /// use fence_runtime::surfaces::{EventMeta, SkillCallEvent};
    ///
    /// assert_eq!(SkillCallEvent::new(EventMeta::new("s", 0, 1), "k", &ModelContent::skill_doc("é"), 0).output_bytes(), 2);
    /// ```
    #[must_use]
    pub fn output_bytes(&self) -> u64 {
        self.output_bytes
    }

    /// The event as compact JSON, without the line ending.
    ///
    /// # Panics
    ///
    /// Never: an event holds only strings and integers.
    ///
    /// ```
    /// use fence_runtime::ModelContent;
    /// use fence_runtime::surfaces::{EventMeta, SkillCallEvent};
    ///
    /// assert!(SkillCallEvent::new(EventMeta::new("s", 0, 1), "k", &ModelContent::skill_doc(""), 0).to_json().starts_with(r#"{"event_type":"skill_call""#));
    /// ```
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a skill_call event always serialises")
    }
}

/// A `tool_call` event as read from a trace written by any runtime version.
///
/// `tool_name`, `output_bytes` and `status` are required (the verifier needs them); every other
/// key may be absent or `null`, and unknown keys are ignored.
///
/// ```
/// use fence_runtime::surfaces::{read_trace, ParsedEvent};
///
/// let report = read_trace(br#"{"event_type":"tool_call","session_id":"s","timestamp":1,"turn":1,"tool_name":"t","input":{},"input_bytes":2,"output_bytes":0,"duration_ms":1,"status":"ok"}"#);
/// let ParsedEvent::ToolCall(call) = &report.items[0].value else { panic!() };
/// assert_eq!(call.tool_name, "t");
/// assert_eq!(call.output, None);
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct ParsedToolCall {
    /// The session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Unix milliseconds.
    #[serde(default)]
    pub timestamp: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn: Option<u32>,
    /// The tool called.
    pub tool_name: String,
    /// The call's input.
    #[serde(default)]
    pub input: Option<Value>,
    /// The byte length of the input.
    #[serde(default)]
    pub input_bytes: Option<u64>,
    /// The output text, when the agent records it.
    #[serde(default)]
    pub output: Option<String>,
    /// The byte length of the output text, fence markers included.
    pub output_bytes: u64,
    /// How long the call took.
    #[serde(default)]
    pub duration_ms: Option<u64>,
    /// `"ok"` or `"error"`.
    pub status: String,
    /// `"read"` or `"mutate"`.
    #[serde(default)]
    pub state_effect: Option<String>,
    /// The resource the call touched.
    #[serde(default)]
    pub resource_id: Option<String>,
}

/// A `skill_call` event as read from a trace.
///
/// `skill_name` and `output_bytes` are required. A `skill_call` has no `output` key on the
/// wire; one is read if a runtime writes it anyway, so that the verifier can check it carries
/// no fence.
///
/// ```
/// use fence_runtime::surfaces::{read_trace, ParsedEvent};
///
/// let report = read_trace(br#"{"event_type":"skill_call","session_id":"s","timestamp":1,"turn":2,"skill_name":"triage","output_bytes":26,"duration_ms":1,"status":"ok"}"#);
/// let ParsedEvent::SkillCall(call) = &report.items[0].value else { panic!() };
/// assert_eq!(call.output_bytes, 26);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct ParsedSkillCall {
    /// The session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Unix milliseconds.
    #[serde(default)]
    pub timestamp: Option<u64>,
    /// The turn.
    #[serde(default)]
    pub turn: Option<u32>,
    /// The skill called.
    pub skill_name: String,
    /// The returned `skill.md` text, if a runtime wrote it (the wire format has no such key).
    #[serde(default)]
    pub output: Option<String>,
    /// The byte length of the returned `skill.md` text.
    pub output_bytes: u64,
    /// How long the call took.
    #[serde(default)]
    pub duration_ms: Option<u64>,
    /// `"ok"` or `"error"`.
    #[serde(default)]
    pub status: Option<String>,
}

/// A trace event the verifier reads.
///
/// ```
/// use fence_runtime::surfaces::{read_trace, ParsedEvent};
///
/// let report = read_trace(br#"{"event_type":"skill_call","skill_name":"k","output_bytes":0}"#);
/// assert!(matches!(report.items[0].value, ParsedEvent::SkillCall(_)));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ParsedEvent {
    /// A `tool_call` event.
    ToolCall(ParsedToolCall),
    /// A `skill_call` event.
    SkillCall(ParsedSkillCall),
}

/// What [`read_trace`] made of a `trace.jsonl`. The unit of the counts is a line.
pub type TraceReport = Report<ParsedEvent>;

/// Reads a whole `trace.jsonl`: a [`TraceReader`] handed all of `bytes` at once.
///
/// Blank lines and events other than `tool_call` and `skill_call` are skipped and counted. Every
/// trace line has a string `event_type`, so a line without one fails, as does a line that is
/// not JSON, that names a key twice in any object, or whose known keys have the wrong types;
/// reading always goes on to the end.
///
/// ```
/// use fence_runtime::surfaces::read_trace;
///
/// let report = read_trace(b"{\"event_type\":\"session_start\"}\n{\"no\":\"type\"}\n{\"event_type\":\"tool_call\"}\n");
/// assert_eq!((report.counts.read, report.counts.skipped, report.counts.failed), (3, 1, 2));
/// assert_eq!(report.errors[1].line, 3);
/// ```
#[must_use]
pub fn read_trace(bytes: &[u8]) -> TraceReport {
    let mut report = TraceReport::default();
    // The input is in memory already: no line is too long to hold.
    let mut reader = TraceReader::new().with_max_line_bytes(usize::MAX);
    reader.push(bytes, |unit| report.add(unit));
    reader.finish(|unit| report.add(unit));
    report
}

/// An incremental reader of a `trace.jsonl`: feed it bytes in chunks of any size, and it
/// hands over each line as a [`Unit`] the moment the line is complete.
///
/// Its memory is bounded by the longest line (at most
/// [`with_max_line_bytes`](Self::with_max_line_bytes)), not the trace. The rules are
/// [`read_trace`]'s.
///
/// ```
/// use fence_runtime::surfaces::{ParsedEvent, TraceReader, Unit};
///
/// let mut tools = Vec::new();
/// let mut reader = TraceReader::new();
/// let trace = b"{\"event_type\":\"tool_call\",\"tool_name\":\"bash\",\"output_bytes\":0,\"status\":\"ok\"}\n";
/// for chunk in trace.chunks(7) {
///     reader.push(chunk, |unit| {
///         if let Unit::Item(event) = unit {
///             if let ParsedEvent::ToolCall(call) = event.value {
///                 tools.push(call.tool_name);
///             }
///         }
///     });
/// }
/// reader.finish(|_| unreachable!("the last line ended with a newline"));
/// assert_eq!(tools, ["bash"]);
/// ```
#[derive(Clone, Debug, Default)]
pub struct TraceReader {
    lines: JsonlLines,
}

impl TraceReader {
    /// A reader at the start of a trace.
    ///
    /// ```
    /// let mut count = 0;
    /// fence_runtime::surfaces::TraceReader::new().finish(|_| count += 1);
    /// assert_eq!(count, 0);
    /// ```
    #[must_use]
    pub fn new() -> TraceReader {
        TraceReader::default()
    }

    /// Sets the longest line the reader holds
    /// ([`DEFAULT_MAX_LINE_BYTES`](super::DEFAULT_MAX_LINE_BYTES) unless set): a longer one is
    /// counted as it goes past, never held, and becomes a unit that failed with
    /// [`ReadError::TooLong`](super::ReadError::TooLong).
    ///
    /// ```
    /// use fence_runtime::surfaces::{ReadError, TraceReader, Unit};
    ///
    /// let mut reader = TraceReader::new().with_max_line_bytes(16);
    /// let mut units = Vec::new();
    /// reader.push(b"{\"role\":\"user\",\"content\":[]}\n\n", |unit| units.push(unit));
    /// assert!(matches!(
    ///     &units[0],
    ///     Unit::Failed(error) if error.line == 1
    ///         && error.error == ReadError::TooLong { bytes: 28, limit: 16 }
    /// ));
    /// assert!(matches!(units[1], Unit::Skipped)); // the next line is read as ever
    /// ```
    #[must_use]
    pub fn with_max_line_bytes(self, limit: usize) -> TraceReader {
        TraceReader {
            lines: JsonlLines::with_limit(limit),
        }
    }

    /// Reads the next chunk, handing every line it completes to `on_unit`, in order.
    ///
    /// ```
    /// use fence_runtime::surfaces::{TraceReader, Unit};
    ///
    /// let mut skipped = 0;
    /// let mut reader = TraceReader::new();
    /// reader.push(b"{\"event_type\":\"turn_start\"}\n\n", |unit| skipped += usize::from(matches!(unit, Unit::Skipped)));
    /// assert_eq!(skipped, 2);
    /// ```
    pub fn push(&mut self, chunk: &[u8], mut on_unit: impl FnMut(Unit<ParsedEvent>)) {
        let limit = self.lines.limit();
        self.lines.push(chunk, |number, line| {
            on_unit(jsonl_unit(number, line, limit, trace_line));
        });
    }

    /// Ends the trace: hands a last line that has no `\n` after it to `on_unit`.
    ///
    /// ```
    /// use fence_runtime::surfaces::{TraceReader, Unit};
    ///
    /// let mut reader = TraceReader::new();
    /// reader.push(b"{\"event_type\":\"turn_end\"}", |_| unreachable!());
    /// let mut units = Vec::new();
    /// reader.finish(|unit| units.push(unit));
    /// assert!(matches!(units[..], [Unit::Skipped]));
    /// ```
    pub fn finish(self, mut on_unit: impl FnMut(Unit<ParsedEvent>)) {
        let limit = self.lines.limit();
        self.lines
            .finish(|number, line| on_unit(jsonl_unit(number, line, limit, trace_line)));
    }
}

/// Reads one non-blank line of a trace.
fn trace_line(line: &str) -> Outcome<ParsedEvent> {
    let value = match parse_value(line) {
        Ok(value) => value,
        Err(error) => return Outcome::Fail(error),
    };
    let read = match value.get("event_type").and_then(Value::as_str) {
        Some("tool_call") => from_value(value).map(ParsedEvent::ToolCall),
        Some("skill_call") => from_value(value).map(ParsedEvent::SkillCall),
        Some(kind) => {
            return Outcome::Skip(SkippedUnit::in_value(
                || format!("a trace event of type `{kind}`"),
                &value,
            ));
        }
        None => Err(ReadError::Shape(
            "a trace line needs a string `event_type`".into(),
        )),
    };
    match read {
        Ok(event) => Outcome::Item(event),
        Err(error) => Outcome::Fail(error),
    }
}
