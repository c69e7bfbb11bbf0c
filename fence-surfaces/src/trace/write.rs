//! Writing `trace.jsonl` events, their byte counts computed from the content.

use fence_runtime::{ModelContent, ToolOutput};
use serde::Serialize;
use serde_json::value::RawValue;

/// What every trace event carries: the session, the time (Unix milliseconds) and the turn.
///
/// ```
/// use fence_surfaces::EventMeta;
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
    /// let meta = fence_surfaces::EventMeta::new("ses_1", 5, 1);
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
    /// assert_eq!(fence_surfaces::EventMeta::new("s", 0, 0).session_id(), "s");
    /// ```
    #[must_use]
    pub const fn session_id(&self) -> &'a str {
        self.session_id
    }

    /// The time of the event, in Unix milliseconds.
    ///
    /// ```
    /// assert_eq!(fence_surfaces::EventMeta::new("s", 42, 0).timestamp_ms(), 42);
    /// ```
    #[must_use]
    pub const fn timestamp_ms(&self) -> u64 {
        self.timestamp
    }

    /// The turn.
    ///
    /// ```
    /// assert_eq!(fence_surfaces::EventMeta::new("s", 0, 7).turn(), 7);
    /// ```
    #[must_use]
    pub const fn turn(&self) -> u32 {
        self.turn
    }
}

/// A call's `status` on the wire: `"ok"` or `"error"`.
///
/// ```
/// use fence_surfaces::Status;
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
    /// assert_eq!(fence_surfaces::Status::Ok.as_str(), "ok");
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
/// use fence_surfaces::StateEffect;
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
    /// assert_eq!(fence_surfaces::StateEffect::Read.as_str(), "read");
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
/// use fence_surfaces::{EventMeta, StateEffect, ToolCallEvent};
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
    /// use fence_surfaces::{EventMeta, Status, ToolCallEvent};
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
    /// use fence_surfaces::{EventMeta, ToolCallEvent};
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
    /// use fence_surfaces::{EventMeta, StateEffect, ToolCallEvent};
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
    /// use fence_surfaces::{EventMeta, ToolCallEvent};
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
    /// use fence_surfaces::{EventMeta, ToolCallEvent};
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
    /// use fence_surfaces::{EventMeta, Status, ToolCallEvent};
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
    /// use fence_surfaces::{EventMeta, ToolCallEvent};
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
/// use fence_surfaces::{EventMeta, SkillCallEvent};
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
    /// use fence_surfaces::{EventMeta, SkillCallEvent};
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
    /// use fence_surfaces::{EventMeta, SkillCallEvent, Status};
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
    /// use fence_surfaces::{EventMeta, SkillCallEvent};
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
    /// use fence_surfaces::{EventMeta, SkillCallEvent};
    ///
    /// assert!(SkillCallEvent::new(EventMeta::new("s", 0, 1), "k", &ModelContent::skill_doc(""), 0).to_json().starts_with(r#"{"event_type":"skill_call""#));
    /// ```
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a skill_call event always serialises")
    }
}
