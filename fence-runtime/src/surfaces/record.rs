//! `conversation.jsonl`: message lines written from `ModelContent`, the header line, and a
//! tolerant reader.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::Labelled;
use super::read::{Label, Outcome, Report, from_value, parse_value, read_jsonl};
use crate::content::{ModelContent, ToolOutput};

/// One message line of a conversation record, ready to serialise.
///
/// Keys in wire order: `role`, `tool_call_id`, `is_error`, `content` (one text part), `id`,
/// `fence`. Every key but `role` and `content` is absent when unset, and `fence` is written
/// exactly when the content is fenced, from the same [`ModelContent`] as the text, so the label
/// cannot disagree with the bytes.
///
/// ```
/// use fence_runtime::{fence, ModelContent, Source, ToolOutput};
/// use fence_runtime::surfaces::RecordLine;
///
/// let output = ToolOutput::ok(fence(&Source::tool("web-fetch"), "{\"status\":200}"));
/// assert_eq!(
///     RecordLine::tool_result("toolu_1", &output).with_id("msg_01a0…").to_json(),
///     r#"{"role":"tool","tool_call_id":"toolu_1","is_error":false,"content":[{"type":"text","text":"<untrusted-content source=tool:web-fetch>\n{\"status\":200}\n</untrusted-content>"}],"id":"msg_01a0…","fence":"tool:web-fetch"}"#,
/// );
///
/// let reply = ModelContent::model_text("Fetched it.");
/// assert_eq!(
///     RecordLine::assistant(&reply).with_id("msg_01a0…").to_json(),
///     r#"{"role":"assistant","content":[{"type":"text","text":"Fetched it."}],"id":"msg_01a0…"}"#,
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RecordLine<'a> {
    role: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    is_error: Option<bool>,
    content: [TextPart<'a>; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fence: Option<&'a str>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
struct TextPart<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

impl<'a> RecordLine<'a> {
    fn new(role: &'a str, content: Labelled<'a>) -> RecordLine<'a> {
        RecordLine {
            role,
            tool_call_id: None,
            is_error: None,
            content: [TextPart {
                kind: "text",
                text: content.text,
            }],
            id: None,
            fence: content.fence,
        }
    }

    /// A message of any role, holding `content`.
    ///
    /// ```
    /// use fence_runtime::{ModelContent, TaskOrigin, TaskProvenance};
    /// use fence_runtime::surfaces::RecordLine;
    ///
    /// let task = ModelContent::task(&TaskProvenance::derive(TaskOrigin::Event, None), "hi");
    /// assert_eq!(
    ///     RecordLine::message("user", &task).to_json(),
    ///     r#"{"role":"user","content":[{"type":"text","text":"<untrusted-content source=task:event>\nhi\n</untrusted-content>"}],"fence":"task:event"}"#,
    /// );
    /// ```
    pub fn message(role: &'a str, content: &'a ModelContent) -> RecordLine<'a> {
        RecordLine::new(role, Labelled::of(content))
    }

    /// A `user` message: a task payload, fenced when its trust class is untrusted.
    ///
    /// ```
    /// use fence_runtime::{ModelContent, TaskOrigin, TaskProvenance};
    /// use fence_runtime::surfaces::RecordLine;
    ///
    /// let task = ModelContent::task(&TaskProvenance::derive(TaskOrigin::User, None), "hi");
    /// assert_eq!(RecordLine::user(&task).to_json(), r#"{"role":"user","content":[{"type":"text","text":"hi"}]}"#);
    /// ```
    pub fn user(content: &'a ModelContent) -> RecordLine<'a> {
        RecordLine::message("user", content)
    }

    /// An `assistant` message: the model's own text.
    ///
    /// ```
    /// use fence_runtime::ModelContent;
    /// use fence_runtime::surfaces::RecordLine;
    ///
    /// let text = ModelContent::model_text("Done.");
    /// assert_eq!(RecordLine::assistant(&text).fence(), None);
    /// ```
    pub fn assistant(content: &'a ModelContent) -> RecordLine<'a> {
        RecordLine::message("assistant", content)
    }

    /// A `tool` message carrying a tool call's output, its error flag and the call's id.
    ///
    /// ```
    /// use fence_runtime::ToolOutput;
    /// use fence_runtime::surfaces::RecordLine;
    ///
    /// let refused = ToolOutput::refusal("/etc is read-only");
    /// assert_eq!(
    ///     RecordLine::tool_result("toolu_2", &refused).to_json(),
    ///     r#"{"role":"tool","tool_call_id":"toolu_2","is_error":true,"content":[{"type":"text","text":"/etc is read-only"}]}"#,
    /// );
    /// ```
    pub fn tool_result(tool_call_id: &'a str, output: &'a ToolOutput) -> RecordLine<'a> {
        RecordLine {
            tool_call_id: Some(tool_call_id),
            is_error: Some(output.is_error()),
            ..RecordLine::message("tool", output.content())
        }
    }

    /// A `tool` message carrying a declared skill's `skill.md`, which is never fenced.
    ///
    /// ```
    /// use fence_runtime::surfaces::RecordLine;
    ///
    /// assert_eq!(
    ///     RecordLine::skill_result("toolu_4", "Triage notes").to_json(),
    ///     r#"{"role":"tool","tool_call_id":"toolu_4","is_error":false,"content":[{"type":"text","text":"Triage notes"}]}"#,
    /// );
    /// ```
    pub fn skill_result(tool_call_id: &'a str, skill_doc: &'a str) -> RecordLine<'a> {
        RecordLine {
            tool_call_id: Some(tool_call_id),
            is_error: Some(false),
            ..RecordLine::new("tool", Labelled::exempt(skill_doc))
        }
    }

    /// Sets the message id.
    ///
    /// ```
    /// use fence_runtime::ModelContent;
    /// use fence_runtime::surfaces::RecordLine;
    ///
    /// let text = ModelContent::model_text("x");
    /// assert!(RecordLine::assistant(&text).with_id("msg_1").to_json().ends_with(r#""id":"msg_1"}"#));
    /// ```
    #[must_use]
    pub fn with_id(mut self, id: &'a str) -> RecordLine<'a> {
        self.id = Some(id);
        self
    }

    /// The role.
    ///
    /// ```
    /// use fence_runtime::ModelContent;
    /// use fence_runtime::surfaces::RecordLine;
    ///
    /// assert_eq!(RecordLine::assistant(&ModelContent::model_text("x")).role(), "assistant");
    /// ```
    pub fn role(&self) -> &'a str {
        self.role
    }

    /// The text of the line's one text part: the bytes the model received.
    ///
    /// ```
    /// use fence_runtime::ModelContent;
    /// use fence_runtime::surfaces::RecordLine;
    ///
    /// assert_eq!(RecordLine::assistant(&ModelContent::model_text("x")).text(), "x");
    /// ```
    pub fn text(&self) -> &'a str {
        self.content[0].text
    }

    /// The `fence` label: the source the text is fenced under, or `None` (the key is absent).
    ///
    /// ```
    /// use fence_runtime::{fence, Source, ToolOutput};
    /// use fence_runtime::surfaces::RecordLine;
    ///
    /// let output = ToolOutput::ok(fence(&Source::tool("bash"), "ok"));
    /// assert_eq!(RecordLine::tool_result("c", &output).fence(), Some("tool:bash"));
    /// ```
    pub fn fence(&self) -> Option<&'a str> {
        self.fence
    }

    /// The line as compact JSON, without the line ending.
    ///
    /// # Panics
    ///
    /// Never: a line holds only strings and booleans, which always serialise.
    ///
    /// ```
    /// use fence_runtime::ModelContent;
    /// use fence_runtime::surfaces::RecordLine;
    ///
    /// let text = ModelContent::model_text("two\nlines");
    /// assert!(!RecordLine::assistant(&text).to_json().contains('\n'));
    /// ```
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a record line always serialises")
    }
}

/// The header line a record may start with: `{"type":"murmur.record", …}`. It has no `role`, so
/// every reader skips it.
///
/// `type` is always the first key; further keys follow in the order they were added.
///
/// ```
/// use fence_runtime::surfaces::RecordHeader;
///
/// assert_eq!(RecordHeader::new().to_json(), r#"{"type":"murmur.record"}"#);
/// assert_eq!(
///     RecordHeader::new().with("version", 1).with("context_id", "ctx_1").to_json(),
///     r#"{"type":"murmur.record","version":1,"context_id":"ctx_1"}"#,
/// );
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecordHeader {
    fields: Vec<(String, Value)>,
}

impl RecordHeader {
    /// The value of the header's `type` key.
    pub const TYPE: &'static str = "murmur.record";

    /// A header with only its `type`.
    ///
    /// ```
    /// assert_eq!(fence_runtime::surfaces::RecordHeader::new().to_json(), r#"{"type":"murmur.record"}"#);
    /// ```
    pub fn new() -> RecordHeader {
        RecordHeader::default()
    }

    /// Adds a key after the ones already there, or replaces the value of a key already there.
    /// A `type` key is ignored: the header's type is fixed.
    ///
    /// ```
    /// use fence_runtime::surfaces::RecordHeader;
    ///
    /// let header = RecordHeader::new().with("a", 1).with("b", 2).with("a", 3).with("type", "x");
    /// assert_eq!(header.to_json(), r#"{"type":"murmur.record","a":3,"b":2}"#);
    /// ```
    #[must_use]
    pub fn with(mut self, key: impl Into<String>, value: impl Into<Value>) -> RecordHeader {
        let key = key.into();
        if key == "type" {
            return self;
        }
        let value = value.into();
        match self.fields.iter_mut().find(|(k, _)| *k == key) {
            Some((_, slot)) => *slot = value,
            None => self.fields.push((key, value)),
        }
        self
    }

    /// The header as compact JSON, without the line ending.
    ///
    /// # Panics
    ///
    /// Never: string keys and JSON values always serialise.
    ///
    /// ```
    /// assert!(fence_runtime::surfaces::RecordHeader::new().to_json().starts_with('{'));
    /// ```
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a record header always serialises")
    }
}

impl Serialize for RecordHeader {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1 + self.fields.len()))?;
        map.serialize_entry("type", Self::TYPE)?;
        for (key, value) in &self.fields {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// A message line as read from a record written by any runtime version.
///
/// `role` (a string) and `content` are required; every other key may be absent or `null`, and
/// unknown keys are ignored.
///
/// ```
/// use fence_runtime::surfaces::{read_record, Label};
///
/// let report = read_record(br#"{"role":"tool","tool_call_id":"toolu_1","is_error":false,"content":[{"type":"text","text":"x"}],"fence":"tool:t","extra":1}"#);
/// let line = &report.items[0].value;
/// assert_eq!(line.tool_call_id.as_deref(), Some("toolu_1"));
/// assert_eq!(line.fence, Label::Source("tool:t".into()));
/// assert_eq!(line.text(), "x");
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct ParsedMessage {
    /// Who the message is from: `user`, `assistant`, `tool`, …
    pub role: String,
    /// The provider's id of the call a `tool` message answers.
    #[serde(default)]
    pub tool_call_id: Option<String>,
    /// Whether the tool failed or the call never reached a tool.
    #[serde(default)]
    pub is_error: Option<bool>,
    /// The content parts.
    #[serde(deserialize_with = "parts")]
    pub content: Vec<Part>,
    /// The message id.
    #[serde(default)]
    pub id: Option<String>,
    /// The `fence` label: [`Label::Absent`] on an unfenced line, and on every line of a record
    /// written before the key existed.
    #[serde(default)]
    pub fence: Label,
}

impl ParsedMessage {
    /// The text the model received: the message's text parts, joined with nothing.
    ///
    /// ```
    /// use fence_runtime::surfaces::read_record;
    ///
    /// let report = read_record(br#"{"role":"user","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]}"#);
    /// assert_eq!(report.items[0].value.text(), "ab");
    /// ```
    pub fn text(&self) -> Cow<'_, str> {
        let mut texts = self.content.iter().filter_map(|part| match part {
            Part::Text(text) => Some(text.as_str()),
            Part::ToolUse { .. } | Part::Other(_) => None,
        });
        match (texts.next(), texts.next()) {
            (None, _) => Cow::Borrowed(""),
            (Some(only), None) => Cow::Borrowed(only),
            (Some(first), Some(second)) => {
                let mut joined = String::from(first);
                joined.push_str(second);
                texts.for_each(|text| joined.push_str(text));
                Cow::Owned(joined)
            }
        }
    }
}

/// One part of a message's `content`.
///
/// ```
/// use fence_runtime::surfaces::{read_record, Part};
///
/// let report = read_record(br#"{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"web-fetch","input":{}}]}"#);
/// assert_eq!(
///     report.items[0].value.content[0],
///     Part::ToolUse { id: "toolu_1".into(), name: "web-fetch".into() },
/// );
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Part {
    /// `{"type":"text","text":…}`.
    Text(String),
    /// `{"type":"tool_use","id":…,"name":…}`: a call the model made, which a later `tool`
    /// line answers.
    ToolUse {
        /// The call's id.
        id: String,
        /// The tool or skill called.
        name: String,
    },
    /// Any other part, kept as it was.
    Other(Value),
}

impl Part {
    fn from_value(value: Value) -> Part {
        let text = |key: &str| value.get(key).and_then(Value::as_str);
        match text("type") {
            Some("text") => {
                if let Some(t) = text("text") {
                    return Part::Text(t.into());
                }
            }
            Some("tool_use") => {
                if let (Some(id), Some(name)) = (text("id"), text("name")) {
                    return Part::ToolUse {
                        id: id.into(),
                        name: name.into(),
                    };
                }
            }
            _ => {}
        }
        Part::Other(value)
    }
}

/// Reads `content` as an array of parts; a bare string is read as one text part.
fn parts<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Part>, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::Array(parts) => Ok(parts.into_iter().map(Part::from_value).collect()),
        Value::String(text) => Ok(alloc::vec![Part::Text(text)]),
        _ => Err(serde::de::Error::custom(
            "`content` is neither an array of parts nor a string",
        )),
    }
}

/// What [`read_record`] made of a `conversation.jsonl`. The unit of the counts is a line.
pub type RecordReport = Report<ParsedMessage>;

impl Report<ParsedMessage> {
    /// Whether the record labels its lines: some message line carries a `fence` key. A record
    /// where no line does was written before the key existed, and is read from its markers.
    ///
    /// ```
    /// use fence_runtime::surfaces::read_record;
    ///
    /// let old = read_record(br#"{"role":"tool","content":[{"type":"text","text":"x"}]}"#);
    /// assert!(!old.is_labelled());
    /// let new = read_record(br#"{"role":"tool","content":[],"fence":"tool:t"}"#);
    /// assert!(new.is_labelled());
    /// ```
    pub fn is_labelled(&self) -> bool {
        self.items.iter().any(|line| line.value.fence.is_present())
    }
}

/// Reads a whole `conversation.jsonl`.
///
/// Blank lines, the header and any line that is not an object carrying a string `role` are
/// skipped and counted; a line that is not JSON, or whose known keys have the wrong types,
/// fails with its line number; reading always goes on to the end.
///
/// ```
/// use fence_runtime::surfaces::read_record;
///
/// let report = read_record(b"{\"type\":\"murmur.record\"}\n{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}\n{\"role\":1}\n{\"role\":\"user\",\"content\":5}\n");
/// assert_eq!(report.items.len(), 1);
/// assert_eq!(report.counts.skipped, 2);
/// assert_eq!(report.errors[0].line, 4);
/// ```
pub fn read_record(bytes: &[u8]) -> RecordReport {
    read_jsonl(bytes, |line| {
        let value = match parse_value(line) {
            Ok(value) => value,
            Err(error) => return Outcome::Fail(error),
        };
        if !value.get("role").is_some_and(Value::is_string) {
            return Outcome::Skip;
        }
        match from_value(value) {
            Ok(message) => Outcome::Item(message),
            Err(error) => Outcome::Fail(error),
        }
    })
}
