//! Writing `conversation.jsonl` lines from the one value that gives both text and label.

use fence_runtime::{ModelContent, ToolOutput};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::Labelled;

/// One message line of a conversation record, ready to serialise.
///
/// Keys in wire order: `role`, `tool_call_id`, `is_error`, `content` (one text part), `id`,
/// `fence`. Every key but `role` and `content` is absent when unset, and `fence` is written
/// exactly when the content is fenced, from the same [`ModelContent`] as the text, so the label
/// cannot disagree with the bytes.
///
/// ```
/// use fence_runtime::{fence, ModelContent, Source, ToolOutput};
/// use fence_surfaces::RecordLine;
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
    /// use fence_surfaces::RecordLine;
    ///
    /// let task = ModelContent::task(&TaskProvenance::derive(TaskOrigin::Event), "hi");
    /// assert_eq!(
    ///     RecordLine::message("user", &task).to_json(),
    ///     r#"{"role":"user","content":[{"type":"text","text":"<untrusted-content source=task:event>\nhi\n</untrusted-content>"}],"fence":"task:event"}"#,
    /// );
    /// ```
    #[must_use]
    pub fn message(role: &'a str, content: &'a ModelContent) -> RecordLine<'a> {
        RecordLine::new(role, Labelled::of(content))
    }

    /// A `user` message: a task payload, fenced when its trust class is untrusted.
    ///
    /// ```
    /// use fence_runtime::{ModelContent, TaskOrigin, TaskProvenance};
    /// use fence_surfaces::RecordLine;
    ///
    /// let task = ModelContent::task(&TaskProvenance::derive(TaskOrigin::User), "hi");
    /// assert_eq!(RecordLine::user(&task).to_json(), r#"{"role":"user","content":[{"type":"text","text":"hi"}]}"#);
    /// ```
    #[must_use]
    pub fn user(content: &'a ModelContent) -> RecordLine<'a> {
        RecordLine::message("user", content)
    }

    /// An `assistant` message: the model's own text.
    ///
    /// ```
    /// use fence_runtime::ModelContent;
    /// use fence_surfaces::RecordLine;
    ///
    /// let text = ModelContent::model_text("Done.");
    /// assert_eq!(RecordLine::assistant(&text).fence(), None);
    /// ```
    #[must_use]
    pub fn assistant(content: &'a ModelContent) -> RecordLine<'a> {
        RecordLine::message("assistant", content)
    }

    /// A `tool` message carrying a tool call's output, its error flag and the call's id.
    ///
    /// ```
    /// use fence_runtime::ToolOutput;
    /// use fence_surfaces::RecordLine;
    ///
    /// let refused = ToolOutput::refusal("/etc is read-only");
    /// assert_eq!(
    ///     RecordLine::tool_result("toolu_2", &refused).to_json(),
    ///     r#"{"role":"tool","tool_call_id":"toolu_2","is_error":true,"content":[{"type":"text","text":"/etc is read-only"}]}"#,
    /// );
    /// ```
    #[must_use]
    pub fn tool_result(tool_call_id: &'a str, output: &'a ToolOutput) -> RecordLine<'a> {
        RecordLine {
            tool_call_id: Some(tool_call_id),
            is_error: Some(output.is_error()),
            ..RecordLine::message("tool", output.content())
        }
    }

    /// A `tool` message carrying a declared skill's `skill.md`, which is never fenced: the
    /// content built by [`ModelContent::skill_doc`].
    ///
    /// The text and the `fence` label are both taken from `skill_doc`, whatever built it, so
    /// they cannot disagree: fenced content handed here is written with its label, and the
    /// verifier then reports a fence on a skill result.
    ///
    /// ```
    /// use fence_runtime::ModelContent;
    /// use fence_surfaces::RecordLine;
    ///
    /// let doc = ModelContent::skill_doc("Triage notes");
    /// assert_eq!(
    ///     RecordLine::skill_result("toolu_4", &doc).to_json(),
    ///     r#"{"role":"tool","tool_call_id":"toolu_4","is_error":false,"content":[{"type":"text","text":"Triage notes"}]}"#,
    /// );
    /// ```
    #[must_use]
    pub fn skill_result(tool_call_id: &'a str, skill_doc: &'a ModelContent) -> RecordLine<'a> {
        RecordLine {
            tool_call_id: Some(tool_call_id),
            is_error: Some(false),
            ..RecordLine::message("tool", skill_doc)
        }
    }

    /// Sets the message id.
    ///
    /// ```
    /// use fence_runtime::ModelContent;
    /// use fence_surfaces::RecordLine;
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
    /// use fence_surfaces::RecordLine;
    ///
    /// assert_eq!(RecordLine::assistant(&ModelContent::model_text("x")).role(), "assistant");
    /// ```
    #[must_use]
    pub fn role(&self) -> &'a str {
        self.role
    }

    /// The text of the line's one text part: the bytes the model received.
    ///
    /// ```
    /// use fence_runtime::ModelContent;
    /// use fence_surfaces::RecordLine;
    ///
    /// assert_eq!(RecordLine::assistant(&ModelContent::model_text("x")).text(), "x");
    /// ```
    #[must_use]
    pub fn text(&self) -> &'a str {
        self.content[0].text
    }

    /// The `fence` label: the source the text is fenced under, or `None` (the key is absent).
    ///
    /// ```
    /// use fence_runtime::{fence, Source, ToolOutput};
    /// use fence_surfaces::RecordLine;
    ///
    /// let output = ToolOutput::ok(fence(&Source::tool("bash"), "ok"));
    /// assert_eq!(RecordLine::tool_result("c", &output).fence(), Some("tool:bash"));
    /// ```
    #[must_use]
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
    /// use fence_surfaces::RecordLine;
    ///
    /// let text = ModelContent::model_text("two\nlines");
    /// assert!(!RecordLine::assistant(&text).to_json().contains('\n'));
    /// ```
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a record line always serialises")
    }
}

/// The header line a record may start with: `{"type":"murmur.record", …}`. It has no `role`, so
/// every reader skips it (and reports a live marker in it, as in any line passed over).
///
/// `type` is always the first key; further keys follow in the order they were added.
///
/// ```
/// use fence_surfaces::RecordHeader;
///
/// assert_eq!(RecordHeader::new().to_json(), r#"{"type":"murmur.record"}"#);
/// assert_eq!(
///     RecordHeader::new().with_field("version", 1).with_field("context_id", "ctx_1").to_json(),
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
    /// assert_eq!(fence_surfaces::RecordHeader::new().to_json(), r#"{"type":"murmur.record"}"#);
    /// ```
    #[must_use]
    pub fn new() -> RecordHeader {
        RecordHeader::default()
    }

    /// Adds a key after the ones already there, or replaces the value of a key already there.
    /// A `type` key is ignored: the header's type is fixed.
    ///
    /// ```
    /// use fence_surfaces::RecordHeader;
    ///
    /// let header = RecordHeader::new()
    ///     .with_field("a", 1)
    ///     .with_field("b", 2)
    ///     .with_field("a", 3)
    ///     .with_field("type", "x");
    /// assert_eq!(header.to_json(), r#"{"type":"murmur.record","a":3,"b":2}"#);
    /// ```
    #[must_use]
    pub fn with_field(mut self, key: impl Into<String>, value: impl Into<Value>) -> RecordHeader {
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
    /// assert!(fence_surfaces::RecordHeader::new().to_json().starts_with('{'));
    /// ```
    #[must_use]
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
