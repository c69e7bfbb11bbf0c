//! Reading `conversation.jsonl` lines written by any runtime version, part by part.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::write::RecordHeader;
use crate::jsonl::sealed::Sealed;
use crate::jsonl::{JsonlReader, Outcome};
use crate::report::{Label, ReadError, Report, SkippedUnit};
use crate::strict_json::{from_value, parse_value};

/// A message line as read from a record written by any runtime version.
///
/// `role` (a string) and `content` are required; every other key may be absent or `null`, and
/// unknown keys are ignored.
///
/// ```
/// use fence_surfaces::{read_record, Label};
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
    /// The tool a `tool` (or a legacy `function`) message answers, when the line names it.
    #[serde(default)]
    pub name: Option<String>,
    /// Whether the tool failed or the call never reached a tool.
    #[serde(default)]
    pub is_error: Option<bool>,
    /// The content parts: an array of parts, a bare string (one text part), or `null` (none).
    #[serde(deserialize_with = "parts")]
    pub content: Vec<Part>,
    /// The message id.
    #[serde(default)]
    pub id: Option<String>,
    /// The `fence` label: [`Label::Absent`] on an unfenced line, and on every line of a record
    /// written before the key existed.
    #[serde(default)]
    pub fence: Label,
    /// The calls of the chat-completions format's `tool_calls` (id, function name); see
    /// [`calls`](Self::calls).
    #[serde(default, deserialize_with = "tool_calls")]
    tool_calls: Vec<(String, String)>,
    /// For a top-level item of the `OpenAI` Responses API, which has no `role`, the item's
    /// `type`. Each item that carries a tool's output is read as a `tool` line answering its
    /// call, its output as the line's content:
    /// - `function_call_output` and `custom_tool_call_output`: `call_id`, and `output` (a
    ///   string or an array of parts);
    /// - `local_shell_call_output`: `call_id`, else `id` (the API's own shape names the call
    ///   there), and `output`;
    /// - `computer_call_output`: `call_id`, and `output`, a screenshot: a part with no text
    ///   ([`Part::NoText`] `computer_screenshot`), which no marker can mark, so the line has no
    ///   text to check (a screenshot whose strings hold a live marker is kept as a part that
    ///   cannot be read);
    /// - `mcp_call`, a call to an MCP server's tool and its result in one item: `id` as the
    ///   call, `name` as the line's `name`, `output` as its text, and an `error` (a string, or
    ///   an object's `message` and `content`) as more of its text, making it a failed call.
    ///
    /// `function_call` and `custom_tool_call` are read as an `assistant` line making one call
    /// ([`Part::ToolUse`], from `call_id` and `name`). `None` on a message line.
    #[serde(skip)]
    pub item: Option<String>,
}

impl ParsedMessage {
    /// The calls the message makes, as (call id, tool or skill name): its `tool_use` and
    /// `function_call` parts, then the chat-completions format's `tool_calls` (`id` and
    /// `function.name`; an entry without both as strings is passed over).
    ///
    /// ```
    /// use fence_surfaces::read_record;
    ///
    /// let report = read_record(br#"{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{}"}}]}"#);
    /// let calls: Vec<_> = report.items[0].value.calls().collect();
    /// assert_eq!(calls, [("call_1", "bash")]);
    /// ```
    pub fn calls(&self) -> impl Iterator<Item = (&str, &str)> {
        let parts = self.content.iter().filter_map(|part| match part {
            Part::ToolUse { id, name } => Some((id.as_str(), name.as_str())),
            _ => None,
        });
        let listed = self
            .tool_calls
            .iter()
            .map(|(id, name)| (id.as_str(), name.as_str()));
        parts.chain(listed)
    }

    /// The line's own text: its [`Part::Text`] parts, joined with nothing. A tool result
    /// carried as a part is not part of it (see [`Part::text`]).
    ///
    /// ```
    /// use fence_surfaces::read_record;
    ///
    /// let report = read_record(br#"{"role":"user","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"input_text","text":"b"},{"type":"tool_result","content":"c"}]}"#);
    /// assert_eq!(report.items[0].value.text(), "ab");
    /// ```
    #[must_use]
    pub fn text(&self) -> Cow<'_, str> {
        join(self.content.iter().filter_map(|part| match part {
            Part::Text(text) => Some(text.as_str()),
            _ => None,
        }))
    }
}

/// The strings, joined with nothing; borrowed when there is at most one.
fn join<'a>(mut texts: impl Iterator<Item = &'a str>) -> Cow<'a, str> {
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

/// One part of a message's `content`, read by its `type`.
///
/// The types read are those a conversation record carries in the Anthropic Messages format and
/// in the Chat Completions and Responses formats of `OpenAI`; any other type is kept as
/// [`Part::Other`], and the verifier reports it, since its text cannot be checked.
///
/// ```
/// use fence_surfaces::{read_record, Part};
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
    /// Text the model reads: a `text`, `input_text` or `output_text` part (its `text`), a
    /// `refusal` (its `refusal`) or a `thinking` part (its `thinking`).
    Text(String),
    /// A call the model made, which a tool result answers: `tool_use` (`id`, `name`) or
    /// `function_call` (`call_id`, `name`).
    ToolUse {
        /// The call's id.
        id: String,
        /// The tool or skill called.
        name: String,
    },
    /// A tool's result carried as a part: `tool_result` (`tool_use_id`, `is_error`, and
    /// `content`, a string or an array of parts) or `function_call_output` (`call_id`, and
    /// `output`, a string or an array of parts).
    ToolResult {
        /// The id of the call it answers.
        tool_call_id: Option<String>,
        /// Whether the tool failed.
        is_error: Option<bool>,
        /// Its content, as parts (a string is one text part): [`Part::Text`], [`Part::NoText`],
        /// and [`Part::Other`] for anything else, a call or a nested result included.
        content: Vec<Part>,
    },
    /// A part with no text to check, named by its type: `image`, `input_image`, `image_url`,
    /// `input_audio`, `audio`, `redacted_thinking`. (Text drawn in an image is beyond what a
    /// marker can mark.)
    NoText(String),
    /// A part the verifier cannot read, kept as it was: a type it does not know, no string
    /// `type`, or a known type without the key that holds its text (a `document` or a file can
    /// carry text in more ways than one, so they are among these).
    Other(Value),
}

impl Part {
    /// The text the part carries: a text part's text, or the text parts of a tool result's
    /// content joined with nothing. `None` for a part with no text.
    ///
    /// ```
    /// use fence_surfaces::read_record;
    ///
    /// let report = read_record(br#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}"#);
    /// assert_eq!(report.items[0].value.content[0].text().as_deref(), Some("ab"));
    /// ```
    #[must_use]
    pub fn text(&self) -> Option<Cow<'_, str>> {
        match self {
            Part::Text(text) => Some(Cow::Borrowed(text)),
            Part::ToolResult { content, .. } => {
                Some(join(content.iter().filter_map(|part| match part {
                    Part::Text(text) => Some(text.as_str()),
                    _ => None,
                })))
            }
            Part::ToolUse { .. } | Part::NoText(_) | Part::Other(_) => None,
        }
    }

    /// The part's `type`, as written, when it has a string one.
    pub(crate) fn type_of(value: &Value) -> Option<&str> {
        value.get("type").and_then(Value::as_str)
    }

    fn from_value(value: Value) -> Part {
        let read = Part::type_of(&value).and_then(|kind| {
            let text = |key: &str| value.get(key).and_then(Value::as_str).map(String::from);
            match kind {
                "text" | "input_text" | "output_text" => text("text").map(Part::Text),
                "refusal" => text("refusal").map(Part::Text),
                "thinking" => text("thinking").map(Part::Text),
                "tool_use" => call(&value, "id"),
                "function_call" => call(&value, "call_id"),
                "tool_result" => result(&value, "tool_use_id", "content"),
                "function_call_output" => result(&value, "call_id", "output"),
                "image" | "input_image" | "image_url" | "input_audio" | "audio"
                | "redacted_thinking" => Some(Part::NoText(kind.into())),
                _ => None,
            }
        });
        read.unwrap_or(Part::Other(value))
    }
}

/// A call part: its id under `id_key`, and its `name`.
fn call(value: &Value, id_key: &str) -> Option<Part> {
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(String::from);
    Some(Part::ToolUse {
        id: text(id_key)?,
        name: text("name")?,
    })
}

/// A tool result part: the id of its call under `id_key` and its content under `content_key`,
/// each absent, `null` or of the right type; any other type makes the part unreadable.
fn result(value: &Value, id_key: &str, content_key: &str) -> Option<Part> {
    let tool_call_id = match value.get(id_key) {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => Some(id.clone()),
        Some(_) => return None,
    };
    let is_error = match value.get("is_error") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(flag)) => Some(*flag),
        Some(_) => return None,
    };
    let content = match value.get(content_key) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(text)) => vec![Part::Text(text.clone())],
        Some(Value::Array(parts)) => parts.iter().map(nested_part).collect(),
        Some(_) => return None,
    };
    Some(Part::ToolResult {
        tool_call_id,
        is_error,
        content,
    })
}

/// A part of a tool result's content: text, or a part with no text; anything else, a call or
/// a result nested in a result included, is kept as [`Part::Other`].
fn nested_part(value: &Value) -> Part {
    match Part::from_value(value.clone()) {
        part @ (Part::Text(_) | Part::NoText(_)) => part,
        _ => Part::Other(value.clone()),
    }
}

/// Reads `content` as an array of parts; a bare string is read as one text part, and `null`
/// (an assistant message that only calls tools) as no parts.
fn parts<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Part>, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::Array(parts) => Ok(parts.into_iter().map(Part::from_value).collect()),
        Value::String(text) => Ok(vec![Part::Text(text)]),
        Value::Null => Ok(Vec::new()),
        _ => Err(serde::de::Error::custom(
            "`content` is neither an array of parts nor a string",
        )),
    }
}

/// The chat-completions format's `tool_calls`: each entry's `id` and `function.name`. Anything else
/// (absent, `null`, another shape) names no call; it is not an error, as the list only teaches
/// the verifier which tool a call went to.
fn tool_calls<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<(String, String)>, D::Error> {
    let Value::Array(calls) = Value::deserialize(deserializer)? else {
        return Ok(Vec::new());
    };
    Ok(calls
        .iter()
        .filter_map(|call| {
            let id = call.get("id")?.as_str()?;
            let name = call.get("function")?.get("name")?.as_str()?;
            Some((id.into(), name.into()))
        })
        .collect())
}

/// What [`read_record`] made of a `conversation.jsonl`. The unit of the counts is a line.
pub type RecordReport = Report<ParsedMessage>;

impl Report<ParsedMessage> {
    /// Whether the record labels its lines: some message line carries a `fence` key. A record
    /// where no line does was written before the key existed, and is read from its markers.
    ///
    /// ```
    /// use fence_surfaces::read_record;
    ///
    /// let old = read_record(br#"{"role":"tool","content":[{"type":"text","text":"x"}]}"#);
    /// assert!(!old.is_labelled());
    /// let new = read_record(br#"{"role":"tool","content":[],"fence":"tool:t"}"#);
    /// assert!(new.is_labelled());
    /// ```
    #[must_use]
    pub fn is_labelled(&self) -> bool {
        self.items.iter().any(|line| line.value.fence.is_present())
    }
}

/// Reads a whole `conversation.jsonl`: a [`RecordReader`] handed all of `bytes` at once.
///
/// A wrapped transcript line (an object with no string `role` whose `message` is an object
/// with one) is read as the message it wraps. Blank lines, the header and any other object
/// with no string `role` that is no top-level item of the Responses API (see
/// [`ParsedMessage::item`]) are skipped and counted, and one whose
/// strings hold a live marker is handed over as such ([`Unit::SkippedWithMarker`](crate::Unit::SkippedWithMarker)); a line that
/// is not JSON, not a JSON object, names a key twice in any object, or whose known keys have the
/// wrong types, fails with its line number; reading always goes on to the end.
///
/// ```
/// use fence_surfaces::read_record;
///
/// let report = read_record(b"{\"type\":\"murmur.record\"}\n{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}\n{\"role\":1}\n{\"role\":\"user\",\"content\":5}\n");
/// assert_eq!(report.items.len(), 1);
/// assert_eq!(report.counts.skipped, 2);
/// assert_eq!(report.errors[0].line, 4);
/// ```
#[must_use]
pub fn read_record(bytes: &[u8]) -> RecordReport {
    let mut report = RecordReport::default();
    // The input is in memory already: no line is too long to hold.
    let mut reader = RecordReader::new().with_max_line_bytes(usize::MAX);
    reader.push(bytes, |unit| report.add(unit));
    reader.finish(|unit| report.add(unit));
    report
}

/// An incremental reader of a `conversation.jsonl`: a [`JsonlReader`] of record lines.
///
/// Feed it bytes in chunks of any size; it hands over each line as a [`Unit`](crate::Unit) the
/// moment the line is complete. Its memory is bounded by the longest line, not the record. So
/// a record of any size can be read, and verified with a
/// [`RecordVerifier`](crate::RecordVerifier), as it streams from a file or a socket. The rules
/// are [`read_record`]'s.
///
/// ```
/// use fence_surfaces::{RecordReader, Unit};
///
/// let mut roles = Vec::new();
/// let mut reader = RecordReader::new();
/// for chunk in [&b"{\"role\":\"us"[..], b"er\",\"content\":[]}\n{\"role\":\"assistant\",", b"\"content\":\"hi\"}"] {
///     reader.push(chunk, |unit| {
///         if let Unit::Item(line) = unit {
///             roles.push(line.value.role);
///         }
///     });
/// }
/// assert_eq!(roles, ["user"]); // the second line has no `\n` yet...
/// reader.finish(|unit| {
///     if let Unit::Item(line) = unit {
///         roles.push(line.value.role);
///     }
/// });
/// assert_eq!(roles, ["user", "assistant"]); // ...and the end of the input ends it
/// ```
pub type RecordReader = JsonlReader<ParsedMessage>;

impl Sealed for ParsedMessage {
    fn read_line(line: &str) -> Outcome<ParsedMessage> {
        record_line(line)
    }
}

/// Reads one non-blank line of a record: a message line (an object with a string `role`), a
/// wrapped transcript line (read as the message it wraps), a top-level item of the Responses
/// API, or a line passed over (checked for live markers). A line that is not a JSON object
/// fails.
fn record_line(line: &str) -> Outcome<ParsedMessage> {
    let value = match parse_value(line) {
        Ok(value) => value,
        Err(error) => return Outcome::Fail(error),
    };
    let Value::Object(object) = &value else {
        return Outcome::Fail(ReadError::Shape(
            "a record line is a JSON object, and this one is not".into(),
        ));
    };
    if object.get("role").is_some_and(Value::is_string) {
        return match from_value(value) {
            Ok(message) => Outcome::Item(message),
            Err(error) => Outcome::Fail(error),
        };
    }
    if let Some(message) = wrapped(object) {
        return match from_value(message.clone()) {
            Ok(message) => Outcome::Item(message),
            Err(error) => Outcome::Fail(error),
        };
    }
    let read = match object.get("type").and_then(Value::as_str) {
        Some(kind @ ("function_call_output" | "custom_tool_call_output")) => {
            result(&value, "call_id", "output").map(|part| (kind, "tool", part, None))
        }
        // The call it answers is under `id` in the API's own shape, under `call_id` in some
        // writers': `call_id` when the item has one.
        Some(kind @ "local_shell_call_output") => {
            let id_key = if object.contains_key("call_id") {
                "call_id"
            } else {
                "id"
            };
            result(&value, id_key, "output").map(|part| (kind, "tool", part, None))
        }
        Some(kind @ "computer_call_output") => {
            screenshot(&value).map(|part| (kind, "tool", part, None))
        }
        Some(kind @ "mcp_call") => mcp_call(&value).map(|(part, name)| (kind, "tool", part, name)),
        Some(kind @ ("function_call" | "custom_tool_call")) => {
            call(&value, "call_id").map(|part| (kind, "assistant", part, None))
        }
        Some(RecordHeader::TYPE) => {
            return Outcome::Skip(SkippedUnit::in_value(|| "the record header".into(), &value));
        }
        _ => {
            return Outcome::Skip(SkippedUnit::in_value(
                || "a record line with no string `role`".into(),
                &value,
            ));
        }
    };
    let Some((kind, role, part, name)) = read else {
        return Outcome::Fail(ReadError::Shape(format!(
            "a `{kind}` item needs its keys with the right types: a string `call_id` and `name` for a call; for a result, an `output` string or array of parts (a screenshot object for a `computer_call_output`) and a string `call_id` (`id` for a `local_shell_call_output`), a boolean `is_error`, each optional; for an `mcp_call`, a string `id`, `name` and `output`, and an `error` string or object, each optional",
            kind = object
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or_default()
        )));
    };
    match item_keys(object) {
        Ok((id, fence)) => Outcome::Item(responses_item(kind, role, part, name, id, fence)),
        Err(error) => Outcome::Fail(error),
    }
}

/// A `computer_call_output` as a tool result answering its `call_id`. Its `output` is a
/// screenshot (`{"type":"computer_screenshot","image_url":…}` or a `file_id`): pixels, which the
/// model reads as an image and no marker can mark, so it is a part with no text
/// ([`Part::NoText`]). A screenshot whose strings (its address) hold a live marker is not taken
/// for one, and kept as a part that cannot be read. An `output` of text or parts is read as a
/// `function_call_output`'s is.
fn screenshot(value: &Value) -> Option<Part> {
    let Some(output @ Value::Object(_)) = value.get("output") else {
        return result(value, "call_id", "output");
    };
    let mut without = value.clone();
    without.as_object_mut()?.remove("output");
    let Part::ToolResult {
        tool_call_id,
        is_error,
        ..
    } = result(&without, "call_id", "output")?
    else {
        return None;
    };
    let is_screenshot = Part::type_of(output) == Some("computer_screenshot")
        && SkippedUnit::in_value(String::new, output).is_none();
    let part = if is_screenshot {
        Part::NoText("computer_screenshot".into())
    } else {
        Part::Other(output.clone())
    };
    Some(Part::ToolResult {
        tool_call_id,
        is_error,
        content: vec![part],
    })
}

/// An `mcp_call`: a call to a tool on an MCP server and its result in one item, read as a tool
/// result answering the call's `id`, with the tool's `name`. Its `output` (a string) is the
/// content; an `error` makes it a failed call (`is_error`), and its text is content too: a
/// string, or an object's `message` and `content` (a string or an array of parts); an error
/// object with neither is kept as a part that cannot be read.
fn mcp_call(value: &Value) -> Option<(Part, Option<String>)> {
    let text = |key: &str| match value.get(key) {
        None | Some(Value::Null) => Some(None),
        Some(Value::String(text)) => Some(Some(text.clone())),
        Some(_) => None,
    };
    let (id, name, output) = (text("id")?, text("name")?, text("output")?);
    let mut content: Vec<Part> = output.into_iter().map(Part::Text).collect();
    let is_error = match value.get("error") {
        None | Some(Value::Null) => false,
        Some(Value::String(error)) => {
            content.push(Part::Text(error.clone()));
            true
        }
        Some(error @ Value::Object(_)) => {
            let before = content.len();
            if let Some(message) = error.get("message").and_then(Value::as_str) {
                content.push(Part::Text(message.into()));
            }
            match error.get("content") {
                Some(Value::String(text)) => content.push(Part::Text(text.clone())),
                Some(Value::Array(parts)) => content.extend(parts.iter().map(nested_part)),
                _ => {}
            }
            if content.len() == before {
                content.push(Part::Other(error.clone()));
            }
            true
        }
        Some(_) => return None,
    };
    let part = Part::ToolResult {
        tool_call_id: id,
        is_error: Some(is_error),
        content,
    };
    Some((part, name))
}

/// The message a wrapped transcript line wraps: its `message`, when that is an object with a
/// string `role`. Coding agents write their transcripts so (Claude Code's
/// `{"type":"user","message":{"role":"user","content":[…]},"uuid":…}`), and send the model the
/// message alone: the wrapper's other keys (its `toolUseResult`, a copy of a tool's output kept
/// for the agent's own interface) are not what the model read, and are ignored as a message
/// line's unknown keys are.
fn wrapped(object: &serde_json::Map<String, Value>) -> Option<&Value> {
    object
        .get("message")
        .filter(|message| message.get("role").is_some_and(Value::is_string))
}

/// A Responses item's `id` and `fence`, each absent, `null` or a string.
fn item_keys(
    object: &serde_json::Map<String, Value>,
) -> Result<(Option<String>, Label), ReadError> {
    let id = match object.get("id") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => Some(id.clone()),
        Some(_) => return Err(ReadError::Shape("`id` is not a string".into())),
    };
    let fence = match object.get("fence") {
        None => Label::Absent,
        Some(Value::Null) => Label::Null,
        Some(Value::String(source)) => Label::Source(source.clone()),
        Some(_) => return Err(ReadError::Shape("`fence` is not a string".into())),
    };
    Ok((id, fence))
}

/// A Responses item as a message line: a result as a `tool` line answering its call, its
/// content the result's (an `mcp_call` naming its tool); a call as an `assistant` line holding
/// the call.
fn responses_item(
    kind: &str,
    role: &str,
    part: Part,
    name: Option<String>,
    id: Option<String>,
    fence: Label,
) -> ParsedMessage {
    let (tool_call_id, is_error, content) = match part {
        Part::ToolResult {
            tool_call_id,
            is_error,
            content,
        } => (tool_call_id, is_error, content),
        call => (None, None, vec![call]),
    };
    ParsedMessage {
        role: role.into(),
        tool_call_id,
        name,
        is_error,
        content,
        id,
        fence,
        tool_calls: Vec::new(),
        item: Some(kind.into()),
    }
}
