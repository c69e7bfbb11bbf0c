//! Reading `trace.jsonl` events written by any runtime version.

use serde::Deserialize;
use serde_json::Value;

use crate::jsonl::sealed::Sealed;
use crate::jsonl::{JsonlReader, Outcome};
use crate::report::{ReadError, Report, SkippedUnit};
use crate::strict_json::{from_value, parse_value};

/// A `tool_call` event as read from a trace written by any runtime version.
///
/// `tool_name`, `output_bytes` and `status` are required (the verifier needs them); every other
/// key may be absent or `null`, and unknown keys are ignored.
///
/// ```
/// use fence_surfaces::{read_trace, ParsedEvent};
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
/// use fence_surfaces::{read_trace, ParsedEvent};
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
/// use fence_surfaces::{read_trace, ParsedEvent};
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
/// use fence_surfaces::read_trace;
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

/// An incremental reader of a `trace.jsonl`: a [`JsonlReader`] of trace lines.
///
/// Feed it bytes in chunks of any size; it hands over each line as a [`Unit`](crate::Unit) the
/// moment the line is complete. Its memory is bounded by the longest line, not the trace. The
/// rules are [`read_trace`]'s.
///
/// ```
/// use fence_surfaces::{ParsedEvent, TraceReader, Unit};
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
pub type TraceReader = JsonlReader<ParsedEvent>;

impl Sealed for ParsedEvent {
    fn read_line(line: &str) -> Outcome<ParsedEvent> {
        trace_line(line)
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
