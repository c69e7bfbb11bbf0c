//! What is fenced. Each function writes one result (given as raw JSON) to an output buffer,
//! rewritten, and says whether anything in it changed (when nothing did, the message is
//! forwarded as it came); or it returns [`Malformed`] when the result cannot be fenced and must
//! not reach the client as it is. Writing everything into one buffer on the way down copies a
//! large text once, not once per level of the message.

use std::borrow::Cow;

use fence_runtime::{Neutraliser, Source, fence, parse};
use memchr::memmem;
use serde_json::value::RawValue;

use crate::json::{self, Members, Unreadable, elements, keep, neutralise_into, string};

/// Why a result could not be fenced: a shape through which text could reach a client
/// unfenced. Said as a path into the result: "`content[2].text` is not a string".
#[derive(Debug)]
pub(crate) struct Malformed(pub(crate) String);

impl Malformed {
    pub(crate) fn at(path: &str, problem: &str) -> Malformed {
        Malformed(format!("`{path}` {problem}"))
    }

    /// A value at `path` that could not be read.
    fn unreadable(path: &str) -> impl FnOnce(Unreadable) -> Malformed + '_ {
        move |why| Malformed::at(path, &why.problem())
    }
}

/// Whether a writer changed what it wrote, or why it could not write it.
pub(crate) type Written = Result<bool, Malformed>;

/// What fencing one message needs beside the message: what the operator chose, and what the
/// proxy noticed while fencing and reports on stderr (content it kept but could not label,
/// because it does not know its type).
#[derive(Debug, Default)]
pub(crate) struct Fencing {
    /// Remove `structuredContent` from results rather than neutralise it (see
    /// [`crate::StructuredContent::Remove`]).
    pub(crate) remove_structured: bool,
    pub(crate) notes: Vec<String>,
}

/// `text` fenced under `source`; `None` when it already is exactly the block fencing its own
/// content under `source` gives, so a fenced server or a second proxy is not fenced twice.
pub(crate) fn fenced_text(source: &Source, text: &str) -> Option<String> {
    if let Ok(block) = parse(text) {
        if block.source() == source.as_str() && fence(source, block.content()).as_str() == text {
            return None;
        }
    }
    Some(fence(source, text).into_string())
}

/// A `tools/call` result (`CallToolResult`): every text content block and every embedded text
/// resource fenced under `source`, every string of `structuredContent` (and of the 2024
/// protocol's `toolResult`) neutralised, images, audio and resource links kept, `isError`,
/// `_meta` and any other member kept; `structuredContent` removed instead when
/// [`Fencing::remove_structured`] says so. A task handle standing for the result (the 2025-11-25
/// protocol's `task` object, or the tasks extension's `taskId` and `statusMessage` beside
/// `resultType: "task"`) is read as a task's state: see [`task_state`]; so is a result whose
/// `resultType` the proxy does not know, whose every other member must hold no text (see
/// [`ResultType`]).
pub(crate) fn call_tool_result(
    result: &CallResult<'_>,
    source: &Source,
    fencing: &mut Fencing,
    out: &mut Vec<u8>,
) -> Written {
    let kind = ResultType::of(result.0.iter().filter_map(|(key, part)| match part {
        Part::Raw(value) if key == "resultType" => Some(*value),
        _ => None,
    }))?;
    let mut changed = false;
    let mut first = true;
    out.push(b'{');
    for (key, part) in &result.0 {
        if key == "structuredContent" && fencing.remove_structured {
            changed = true;
            continue;
        }
        if !first {
            out.push(b',');
        }
        first = false;
        json::write_string(out, key);
        out.push(b':');
        changed |= match part {
            Part::Content(blocks) => json::write_elements(out, blocks, |index, block, out| {
                content_block(block, &format!("content[{index}]"), source, fencing, out)
            })?,
            Part::Raw(value) if key == "structuredContent" || key == "toolResult" => {
                neutralise_into(value, out).map_err(Malformed::unreadable(key))?
            }
            Part::Raw(value) if key == "task" && value.get().starts_with('{') => {
                task_state(value, key, source, fencing, out)?
            }
            // A flat task handle's state, read as a task state's: an inline result fenced, an
            // error neutralised.
            Part::Raw(value) if kind.is_task_like() && key == "result" => {
                inline_result(value, source, fencing, out)?
            }
            Part::Raw(value) if kind.is_task_like() && key == "error" => {
                error_object(value, key, out)?
            }
            Part::Raw(value) if kind.is_unknown() && !CALL_PLACED.contains(&key.as_ref()) => {
                kind.unplaced(key, value, out)?
            }
            Part::Raw(value) => task_member(key, value, key, out)?,
        };
    }
    out.push(b'}');
    Ok(changed)
}

/// A result as a `tools/call` result: its members in order, each value as raw JSON, but
/// `content` read down to each block's members, all in one pass over what may be megabytes
/// of text.
#[derive(Debug)]
pub(crate) struct CallResult<'a>(Vec<(Cow<'a, str>, Part<'a>)>);

#[derive(Debug)]
enum Part<'a> {
    Content(Vec<Members<'a>>),
    Raw(&'a RawValue),
}

impl<'de> serde::Deserialize<'de> for CallResult<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = CallResult<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a tools/call result")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(4));
                while let Some(json::Text(key)) = map.next_key::<json::Text<'de>>()? {
                    let part = if key == "content" {
                        Part::Content(map.next_value()?)
                    } else {
                        Part::Raw(map.next_value()?)
                    };
                    members.push((key, part));
                }
                Ok(CallResult(members))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

impl<'a> CallResult<'a> {
    /// Reads `raw` as a `tools/call` result, or says how it is not one.
    pub(crate) fn read(raw: &'a RawValue) -> Result<CallResult<'a>, Malformed> {
        if let Ok(result) = serde_json::from_str(raw.get()) {
            return Ok(result);
        }
        let members = Members::read(raw)
            .map_err(|why| Malformed(format!("the result {}", why.problem())))?
            .ok_or_else(|| Malformed("the result is not an object".into()))?;
        let content = members
            .0
            .iter()
            .find(|(key, _)| key == "content")
            .map_or(raw, |(_, content)| *content);
        let blocks =
            elements(content).ok_or_else(|| Malformed::at("content", "is not an array"))?;
        for (index, block) in blocks.iter().enumerate() {
            let path = format!("content[{index}]");
            Members::read(block)
                .map_err(Malformed::unreadable(&path))?
                .ok_or_else(|| Malformed::at(&path, "is not an object"))?;
        }
        Err(Malformed("the result cannot be read".into()))
    }

    fn raw(&self, key: &str) -> Option<&'a RawValue> {
        self.0.iter().find_map(|(name, part)| match part {
            Part::Raw(value) if name == key => Some(*value),
            _ => None,
        })
    }

    /// The id of the task this result stands for, when it is a task handle rather than the
    /// tool's result: the tasks extension's `resultType: "task"` and `taskId`, or the
    /// 2025-11-25 protocol's `task` object (and no `content`).
    pub(crate) fn task(&self) -> Option<String> {
        if self.raw("resultType").and_then(string).as_deref() == Some("task") {
            return self.raw("taskId").and_then(string).map(Cow::into_owned);
        }
        if self.0.iter().any(|(key, _)| key == "content") {
            return None;
        }
        Members::of(self.raw("task")?)?
            .string("taskId")
            .map(Cow::into_owned)
    }
}

fn content_block(
    members: &Members<'_>,
    path: &str,
    source: &Source,
    fencing: &mut Fencing,
    out: &mut Vec<u8>,
) -> Written {
    let kind = members
        .one("type")
        .map_err(|_| Malformed::at(path, "has two `type` members"))?
        .map(|kind| {
            string(kind).ok_or_else(|| Malformed::at(path, "has a `type` that is not a string"))
        })
        .transpose()?;
    match kind.as_deref() {
        Some("text") => members.write_each(out, |key, value, out| match key {
            "text" => fenced_string(value, &format!("{path}.text"), source, out),
            _ => Ok(keep(value, out)),
        }),
        Some("resource") => members.write_each(out, |key, value, out| match key {
            "resource" => resource_contents(value, &format!("{path}.resource"), source, out),
            _ => Ok(keep(value, out)),
        }),
        Some("image" | "audio" | "resource_link") => {
            members.write_each(out, |_, value, out| Ok(keep(value, out)))
        }
        other => {
            let kind = other.map_or_else(
                || "no type".to_owned(),
                |kind| format!("type `{}`", crate::said::shown(kind)),
            );
            fencing.notes.push(format!(
                "kept a content block of {kind} that the proxy does not know, with its strings \
                 neutralised but not fenced: it reaches the model unlabelled"
            ));
            json::neutralise_members(members, out).map_err(Malformed::unreadable(path))
        }
    }
}

/// A string member fenced under `source`, written as JSON.
fn fenced_string(raw: &RawValue, path: &str, source: &Source, out: &mut Vec<u8>) -> Written {
    let json = raw.get();
    if !json.starts_with('"') {
        return Err(Malformed::at(path, "is not a string"));
    }
    let escaped = &json.as_bytes()[1..json.len() - 1];
    if fence_escaped_as_is(escaped) {
        write_fenced_escaped(escaped, source, out);
        return Ok(true);
    }
    let text = json::text(raw)
        .map_err(Malformed::unreadable(path))?
        .ok_or_else(|| Malformed::at(path, "is not a string"))?;
    Ok(match fenced_text(source, &text) {
        Some(block) => {
            json::write_string(out, &block);
            true
        }
        None => keep(raw, out),
    })
}

/// Whether a JSON string's escaped text can be fenced as it is, without decoding it: when it
/// has no `\u` and no `\/` escape, every character that can be part of a marker (`<`, `/`,
/// `-` and letters) stands for itself, and the other escapes (`\"`, `\\`, `\b`, `\f`, `\n`,
/// `\r`, `\t`) stand for characters that cannot be; a backslash is never part of a marker,
/// so no marker starts inside an escape. The escaped text then spells exactly the markers
/// the text does, at the same places, and neutralising it is neutralising the text. A text
/// that starts like a block is decoded instead, to see whether it is one already.
fn fence_escaped_as_is(escaped: &[u8]) -> bool {
    const OPENER: &[u8] = b"<untrusted-content source=";
    memmem::find(escaped, b"\\u").is_none()
        && memmem::find(escaped, b"\\/").is_none()
        && !escaped
            .get(..OPENER.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(OPENER))
}

/// Writes the JSON string of the block fencing the text `escaped` spells (see
/// [`fence_escaped_as_is`]): the fence's own opening and closing lines, escaped, around the
/// escaped text neutralised.
fn write_fenced_escaped(escaped: &[u8], source: &Source, out: &mut Vec<u8>) {
    let empty = fence(source, "");
    // The source is sanitised, so the opening marker's line ends at the block's first `\n`.
    let (head, tail) = empty
        .as_str()
        .split_at(empty.as_str().find('\n').map_or(0, |at| at + 1));
    // Neutralised straight into `out`, with room for a few markers: no copy in between.
    out.reserve(escaped.len() + head.len() + tail.len() + 256);
    json::write_string(out, head);
    out.pop();
    let mut neutraliser = Neutraliser::new();
    neutraliser.push_bytes(escaped, out);
    neutraliser.finish_bytes(out);
    let quote = out.len();
    json::write_string(out, tail);
    out.remove(quote);
}

/// A resource's contents (`TextResourceContents` or `BlobResourceContents`): its `text` fenced
/// under `source`, a `blob` kept.
fn resource_contents(raw: &RawValue, path: &str, source: &Source, out: &mut Vec<u8>) -> Written {
    let members = Members::read(raw)
        .map_err(Malformed::unreadable(path))?
        .ok_or_else(|| Malformed::at(path, "is not an object"))?;
    members.write_each(out, |key, value, out| match key {
        "text" => fenced_string(value, &format!("{path}.text"), source, out),
        _ => Ok(keep(value, out)),
    })
}

/// The source of a resource's text: `resource:` and its URI.
pub(crate) fn resource_source(uri: &str) -> Source {
    Source::custom("resource", uri)
        .unwrap_or_else(|_| unreachable!("`resource` is not a reserved kind"))
}

/// The media type of an MCP App's view (SEP-1865), as the Apps SDK spells it
/// (`RESOURCE_MIME_TYPE`) and hosts compare it.
pub(crate) const APP_VIEW_TYPE: &str = "text/html;profile=mcp-app";

/// Whether a resource's contents are an MCP App's view: one `uri`, a string starting with
/// `ui://`, and one `mimeType`, exactly [`APP_VIEW_TYPE`] once its JSON escapes are read (no
/// other case, spacing or parameter). A host renders such a document in a sandboxed frame and
/// does not hand it to the model, so it passes byte for byte: a fence line before its
/// `<!DOCTYPE>` would put the document in quirks mode, inside an element no HTML knows. The
/// match is as strict as the strictest host's, so that nothing a host would not render as a
/// view passes unfenced; a view labelled any other way is fenced, and shows the fence.
fn app_view(members: &Members<'_>) -> bool {
    let one = |key: &str| members.one(key).ok().flatten().and_then(string);
    one("uri").is_some_and(|uri| uri.starts_with("ui://"))
        && one("mimeType").is_some_and(|kind| kind == APP_VIEW_TYPE)
}

/// A `resources/read` result: the `text` of every item of `contents` fenced under
/// `resource:<the item's uri>` (the URI asked for when an item has none), blobs kept, and an
/// MCP App's view ([`app_view`]) kept byte for byte.
pub(crate) fn read_resource_result(
    raw: &RawValue,
    asked: Option<&str>,
    out: &mut Vec<u8>,
) -> Written {
    let members = Members::read(raw)
        .map_err(|why| Malformed(format!("the result {}", why.problem())))?
        .ok_or_else(|| Malformed("the result is not an object".into()))?;
    let kind = ResultType::of_members(&members)?;
    members.write_each(out, |key, value, out| {
        if kind.is_unknown() && !["contents", "resultType", "_meta"].contains(&key) {
            return kind.unplaced(key, value, out);
        }
        if key != "contents" {
            return Ok(keep(value, out));
        }
        let items = elements(value).ok_or_else(|| Malformed::at("contents", "is not an array"))?;
        json::write_elements(out, &items, |index, item, out| {
            let path = format!("contents[{index}]");
            let members = Members::read(item)
                .map_err(Malformed::unreadable(&path))?
                .ok_or_else(|| Malformed::at(&path, "is not an object"))?;
            if app_view(&members) {
                return Ok(keep(item, out));
            }
            let uri = members.string("uri");
            let uri = uri.as_deref().or(asked).unwrap_or_default();
            resource_contents(item, &path, &resource_source(uri), out)
        })
    })
}

/// What a result's `resultType` says it is: the 2026-07-28 protocol's discriminator, which the
/// tasks extension extends. The proxy fences by the request's method, never by this member;
/// it only says where else a result may hold text.
///
/// A `resultType` the proxy does not know (a newer revision's, or not a string) never switches
/// fencing off: the result is fenced by its method as any, its members read as a task state's
/// (an inline `result` fenced, an `error` neutralised), and a member the proxy cannot place
/// withholds the answer when it holds any text (a string, or a key), for the proxy cannot know
/// whether a client hands it to the model. One without text (a number, a flag) is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ResultType {
    /// No `resultType`, or `"complete"`: a result as before 2026-07-28.
    Complete,
    /// `"input_required"`: the requests the client must fulfil, and the state it echoes.
    InputRequired,
    /// `"task"`: the tasks extension's flat task handle.
    Task,
    /// Anything else, as it is spelled.
    Unknown(String),
}

/// The members of a `tools/call` result (or of a task handle standing for one) that the proxy
/// places whatever the result's type: fenced, neutralised, read as a task state's, or kept as
/// the server's own (`_meta`) or as no text.
const CALL_PLACED: [&str; 16] = [
    "content",
    "structuredContent",
    "toolResult",
    "isError",
    "_meta",
    "resultType",
    "task",
    "taskId",
    "status",
    "statusMessage",
    "createdAt",
    "lastUpdatedAt",
    "ttl",
    "ttlMs",
    "pollInterval",
    "pollIntervalMs",
];

impl ResultType {
    /// The type the `resultType` members of a result say (`values`, in order): two of them
    /// are refused, for the proxy could not tell which one a client reads.
    fn of<'a>(mut values: impl Iterator<Item = &'a RawValue>) -> Result<ResultType, Malformed> {
        let Some(value) = values.next() else {
            return Ok(ResultType::Complete);
        };
        if values.next().is_some() {
            return Err(Malformed("the result has two `resultType` members".into()));
        }
        Ok(match string(value).as_deref() {
            Some("complete") => ResultType::Complete,
            Some("input_required") => ResultType::InputRequired,
            Some("task") => ResultType::Task,
            Some(other) => ResultType::Unknown(other.to_owned()),
            None => ResultType::Unknown(value.get().to_owned()),
        })
    }

    /// The type the `resultType` members of an object say (see [`ResultType::of`]).
    fn of_members(members: &Members<'_>) -> Result<ResultType, Malformed> {
        ResultType::of(
            members
                .0
                .iter()
                .filter(|(key, _)| key == "resultType")
                .map(|(_, value)| *value),
        )
    }

    /// Whether the result may stand for a task, whose state may carry the result inline.
    fn is_task_like(&self) -> bool {
        matches!(self, ResultType::Task | ResultType::Unknown(_))
    }

    fn is_unknown(&self) -> bool {
        matches!(self, ResultType::Unknown(_))
    }

    /// A member `key` of a result of this (unknown) type that the proxy cannot place: kept
    /// when it holds no text, else the answer is withheld.
    fn unplaced(&self, key: &str, value: &RawValue, out: &mut Vec<u8>) -> Written {
        // Every string and every key of a JSON value is quoted.
        if !value.get().contains('"') {
            return Ok(keep(value, out));
        }
        let spelled = match self {
            ResultType::Unknown(spelled) => spelled.as_str(),
            _ => "",
        };
        Err(Malformed::at(
            key,
            &format!(
                "holds text in a result whose `resultType` ({}) the proxy does not know, so it \
                 cannot tell whether a client hands it to the model",
                crate::said::shown(spelled)
            ),
        ))
    }
}

/// A task's result given inline (a task handle's `result`), fenced as a `tools/call` result.
fn inline_result(
    value: &RawValue,
    source: &Source,
    fencing: &mut Fencing,
    out: &mut Vec<u8>,
) -> Written {
    CallResult::read(value)
        .and_then(|result| call_tool_result(&result, source, fencing, out))
        .map_err(|Malformed(problem)| Malformed(format!("the task's result: {problem}")))
}

/// A task's state (a task handle, a `tasks/get` or `tasks/cancel` result, a task status
/// notification's params, an item of `tasks/list`), found at `path`: a finished task's inline
/// `result` fenced as a `tools/call` result under `source`, a failed task's `error` and its
/// `statusMessage` neutralised, and its `taskId` refused when it holds a marker (see
/// [`task_member`]); everything else kept, but, in a state whose `resultType` the proxy does
/// not know, a member holding text it cannot place, which withholds the state (see
/// [`ResultType`]).
pub(crate) fn task_state(
    raw: &RawValue,
    path: &str,
    source: &Source,
    fencing: &mut Fencing,
    out: &mut Vec<u8>,
) -> Written {
    let members = Members::read(raw)
        .map_err(Malformed::unreadable(path))?
        .ok_or_else(|| Malformed::at(path, "is not an object"))?;
    let kind = ResultType::of_members(&members)?;
    members.write_each(out, |key, value, out| match key {
        "result" => inline_result(value, source, fencing, out),
        "error" => error_object(value, &format!("{path}.error"), out),
        _ if kind.is_unknown() && !CALL_PLACED.contains(&key) => {
            kind.unplaced(&format!("{path}.{key}"), value, out)
        }
        _ => task_member(key, value, &format!("{path}.{key}"), out),
    })
}

/// A member of a task's state, or of a result that may be a task handle: `statusMessage`
/// neutralised (the SDKs turn a failed task's message into the call's error); `taskId` kept,
/// unless it holds a marker, which cannot be neutralised because the client sends the id back
/// to ask for the task: the state is then withheld. Anything else kept.
fn task_member(key: &str, value: &RawValue, path: &str, out: &mut Vec<u8>) -> Written {
    match key {
        "statusMessage" => neutralise_into(value, out).map_err(Malformed::unreadable(path)),
        "taskId" => {
            // Whatever it is (a string, or something a lenient client takes for one), a marker
            // anywhere in it is one the proxy cannot neutralise.
            let mut neutralised = Vec::new();
            if neutralise_into(value, &mut neutralised).map_err(Malformed::unreadable(path))? {
                return Err(Malformed::at(
                    path,
                    "holds a marker, which cannot be neutralised in an id the client sends back",
                ));
            }
            Ok(keep(value, out))
        }
        _ => Ok(keep(value, out)),
    }
}

/// The id of the task a task state names (`taskId`).
pub(crate) fn task_id(raw: &RawValue) -> Option<String> {
    Members::of(raw)?.string("taskId").map(Cow::into_owned)
}

/// A JSON-RPC error object, at `path`: kept, with every string in it (`message`, `data`)
/// neutralised. It is not fenced: like a dispatch failure, it says the call could not be made
/// rather than carrying the tool's output, but the SDKs raise its text, and a model may read
/// it.
pub(crate) fn error_object(raw: &RawValue, path: &str, out: &mut Vec<u8>) -> Written {
    neutralise_into(raw, out).map_err(Malformed::unreadable(path))
}

#[cfg(test)]
mod tests;
