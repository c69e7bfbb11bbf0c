//! An answer, fenced as its request asked, and sent again; and a task's status, fenced as the
//! call that started the task.

use std::fmt;

use fence_runtime::Source;
use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::asked::{Asked, Pending};
use super::{Forward, Outcome, Session, dropped_answer};
use crate::fencing::{self, CallResult, Fencing, Malformed};
use crate::ids::{self, IdKey};
use crate::json::{self, Members, Text, elements};
use crate::listed;
use crate::pin::Kind;
use crate::requests::Found;
use crate::said::shown;

/// How many of a session's answered requests are remembered, the last ones, so that an answer
/// the upstream sends again (on a stream the client resumed with `Last-Event-ID`, after its
/// first stream broke) is fenced as its request asked and passed on, rather than dropped as
/// answering nothing.
pub(super) const ANSWERED_KEPT: usize = 256;

/// The largest request remembered once answered, in the bytes of its words
/// ([`Pending::size`]): a longer one's answer, sent again, is dropped. With
/// [`ANSWERED_KEPT`], at most about 512 KiB a session.
const ANSWERED_MAX_BYTES: usize = 2048;

impl Session {
    /// `pending` is answered: remembered, among the last [`ANSWERED_KEPT`], unless it is over
    /// [`ANSWERED_MAX_BYTES`].
    pub(super) fn retire(&self, pending: Pending) {
        if pending.size() > ANSWERED_MAX_BYTES {
            return;
        }
        // A waiting request's id was read as one when it came.
        if let Ok(keys) = ids::request_keys(&pending.id) {
            self.state().answered.insert(keys, pending);
        }
    }

    /// An answer (`json`, read as `members`, with the id `id` of the keys `keys`) to no waiting
    /// request. One to a request answered lately is the upstream's answer sent again: fenced
    /// as that request asked, and passed on (a client whose stream broke before the first
    /// reached it takes this one; one that has it already drops it, as answering nothing it
    /// waits on). Any other is dropped.
    pub(super) fn replayed(
        &self,
        json: &str,
        members: &Members<'_>,
        id: &RawValue,
        keys: &[IdKey],
        call: Option<CallResult<'_>>,
    ) -> Outcome {
        let state = self.state();
        let pending = match state.answered.find(keys) {
            Found::One(handle) => state.answered.get(handle).cloned(),
            Found::None => None,
            Found::Several => {
                drop(state);
                return dropped_answer(
                    id,
                    "which reads as the ids of several requests answered already, so no client could tell which it answers",
                );
            }
        };
        drop(state);
        let Some(pending) = pending else {
            return dropped_answer(
                id,
                "which the client has no request waiting on (the proxy cannot tell what it answers, so it cannot fence it)",
            );
        };
        if call.is_some() && !pending.calls_a_tool() {
            // What was answered changed since the message was read: read it again, with its
            // result as it came.
            return self.upstream_object(json);
        }
        let mut outcome = self.answer(json, members, id, &pending, call);
        outcome.notes.push(format!(
            "passed on an answer to {} sent again by the upstream (a resumed stream), fenced as \
             its request asked",
            pending.describe()
        ));
        outcome
    }

    /// The upstream's answer (`json`, read as `members`, with the id `id`) to `pending`:
    /// fenced as the request asked, every error neutralised, and its id the request's own.
    pub(super) fn answer(
        &self,
        json: &str,
        members: &Members<'_>,
        id: &RawValue,
        pending: &Pending,
        mut call: Option<CallResult<'_>>,
    ) -> Outcome {
        let respelled = id.get() != pending.id.get();
        let mut fencing = self.fencing();
        // Room for the fence and for neutralising a marker every 1,000 bytes or so, so that a
        // large answer is not copied to grow.
        let mut out = Vec::with_capacity(json.len() + json.len() / 48 + 256);
        let written = members.write_each(&mut out, |name, value, out| match name {
            "id" if respelled => {
                out.extend_from_slice(pending.id.get().as_bytes());
                Ok(true)
            }
            "result" => match (call.take(), &pending.asked) {
                (Some(result), Asked::CallTool(tool)) => {
                    self.fence_call(tool, &result, &mut fencing, out)
                }
                _ => self.fence_result(&pending.asked, value, &mut fencing, out),
            },
            "error" => fencing::error_object(value, "error", out),
            // The request's own id (the client's, byte for byte), and the version.
            "id" | "jsonrpc" => Ok(json::keep(value, out)),
            // No client reads a member of its own here, but one may show it (the TypeScript
            // SDK's schema errors quote the message).
            _ => {
                json::neutralise_into(value, out).map_err(|why| Malformed::at(name, &why.problem()))
            }
        });
        if respelled {
            fencing.notes.push(format!(
                "the answer to {} came with the id {}, which clients read as the request's {}; \
                 forwarded with the request's own id",
                pending.describe(),
                shown(id.get()),
                shown(pending.id.get()),
            ));
        }
        let mut outcome = Outcome::new(Forward::AsIs);
        let mut state = self.state();
        for note in fencing.notes {
            if state.noted.insert(note.clone()) {
                outcome.notes.push(note);
            }
        }
        let name = shown(&state.name);
        drop(state);
        // After the answer: a client that lists tools, then reads its log, sees the list first.
        outcome.also.extend(self.withheld_warnings());
        match written {
            Err(Malformed(problem)) => {
                let what = format!(
                    "withheld the answer of {name} to {}, which cannot be fenced: {problem}",
                    pending.describe()
                );
                outcome.withhold(pending, what);
            }
            Ok(true) => outcome.forward = Forward::Rewritten(out),
            Ok(false) => {}
        }
        outcome
    }

    fn fence_result(
        &self,
        asked: &Asked,
        result: &RawValue,
        fencing: &mut Fencing,
        out: &mut Vec<u8>,
    ) -> fencing::Written {
        match asked {
            Asked::CallTool(tool) => {
                self.fence_call(tool, &CallResult::read(result)?, fencing, out)
            }
            Asked::TaskResult(task) => {
                let source = self.task_source(task.as_deref());
                fencing::call_tool_result(&CallResult::read(result)?, &source, fencing, out)
            }
            Asked::TaskGet(task) | Asked::TaskCancel(task) => {
                let task = fencing::task_id(result).or_else(|| task.clone());
                let source = self.task_source(task.as_deref());
                fencing::task_state(result, "result", &source, fencing, out)
            }
            Asked::TaskList => {
                let members = Members::read(result)
                    .map_err(|why| Malformed(format!("the result {}", why.problem())))?
                    .ok_or_else(|| Malformed("the result is not an object".into()))?;
                members.write_each(out, |name, value, out| {
                    if name != "tasks" {
                        return Ok(json::keep(value, out));
                    }
                    let tasks =
                        elements(value).ok_or_else(|| Malformed::at("tasks", "is not an array"))?;
                    json::write_elements(out, &tasks, |index, task, out| {
                        let source = self.task_source(fencing::task_id(task).as_deref());
                        fencing::task_state(task, &format!("tasks[{index}]"), &source, fencing, out)
                    })
                })
            }
            Asked::ReadResource(uri) => fencing::read_resource_result(result, uri.as_deref(), out),
            Asked::ListTools { first } => listed::list_page(
                result,
                Kind::Tool,
                *first,
                self.pin.as_deref(),
                fencing,
                out,
            ),
            Asked::ListPrompts { first } => listed::list_page(
                result,
                Kind::Prompt,
                *first,
                self.pin.as_deref(),
                fencing,
                out,
            ),
            Asked::GetPrompt(_) => listed::prompt(result, out),
            Asked::Introduce(kind) => {
                let mut state = self.state();
                if !state.named {
                    let server = Members::of(result)
                        .and_then(|result| kind.server_info(&result))
                        .and_then(|info| info.string("name"));
                    if let Some(server) = server.filter(|name| !name.trim().is_empty()) {
                        state.name = server.into_owned();
                    }
                }
                drop(state);
                listed::introduction(result, *kind, self.pin.as_deref(), fencing, out)
            }
            Asked::Other => Ok(json::keep(result, out)),
        }
    }

    /// The result of a `tools/call` of `tool`, fenced.
    fn fence_call(
        &self,
        tool: &str,
        result: &CallResult<'_>,
        fencing: &mut Fencing,
        out: &mut Vec<u8>,
    ) -> fencing::Written {
        let written = fencing::call_tool_result(result, &Source::tool(tool), fencing, out)?;
        // Only a handle the client will see names a task.
        if let Some(task) = result.task() {
            self.state().tasks.insert(task, tool.to_owned());
        }
        Ok(written)
    }

    /// The source a task's result is fenced under: `tool:<the tool that started it>`, or
    /// `mcp:<the upstream's name>` for a task this proxy did not see start.
    fn task_source(&self, task: Option<&str>) -> Source {
        let state = self.state();
        match task.and_then(|task| state.tasks.get(task)) {
            Some(tool) => Source::tool(tool),
            None => Source::custom("mcp", &state.name)
                .unwrap_or_else(|_| unreachable!("`mcp` is not a reserved kind")),
        }
    }

    pub(super) fn task_notification(&self, json: &str, members: &Members<'_>) -> Outcome {
        let mut rules = self.fencing();
        // Room for the fence and for neutralising a marker every 1,000 bytes or so, so that a
        // large answer is not copied to grow.
        let mut out = Vec::with_capacity(json.len() + json.len() / 48 + 256);
        let written = members.write_each(&mut out, |name, value, out| {
            if name == "params" {
                let source = self.task_source(fencing::task_id(value).as_deref());
                fencing::task_state(value, "params", &source, &mut rules, out)
            } else {
                Ok(json::keep(value, out))
            }
        });
        let mut outcome = Outcome::new(Forward::AsIs);
        outcome.notes = rules.notes;
        match written {
            Err(Malformed(problem)) => {
                outcome.forward = Forward::Nothing;
                outcome.notes.push(format!(
                    "dropped a task status notification that cannot be fenced: {problem}"
                ));
            }
            Ok(true) => outcome.forward = Forward::Rewritten(out),
            Ok(false) => {}
        }
        outcome
    }
}

/// A message from the upstream (an object), read in one pass: its members as [`Members`]
/// reads them, and, when `is_call` says of the `id` it names before its `result` that a
/// `tools/call` is waiting on it, that `result` read as a `tools/call` result on the same pass,
/// with `{}` standing in for it among the members. A large tool result is then read through
/// once, not once as the message's member and again as a result. An error says only that this
/// reading failed: the message is read again as [`Members`] for what to say of it.
pub(super) fn read_message(
    json: &str,
    is_call: impl FnMut(&RawValue) -> bool,
) -> Result<(Members<'_>, Option<CallResult<'_>>), serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(json);
    let read = OnePass(is_call).deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(read)
}

struct OnePass<F>(F);

impl<'de, F: FnMut(&RawValue) -> bool> DeserializeSeed<'de> for OnePass<F> {
    type Value = (Members<'de>, Option<CallResult<'de>>);

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, F: FnMut(&RawValue) -> bool> Visitor<'de> for OnePass<F> {
    type Value = (Members<'de>, Option<CallResult<'de>>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members = Vec::with_capacity(4);
        let mut id: Option<&'de RawValue> = None;
        let mut call = None;
        while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
            if key == "result" && call.is_none() && id.is_some_and(&mut self.0) {
                call = Some(map.next_value::<CallResult<'de>>()?);
                members.push((key, stand_in()));
                continue;
            }
            let value = map.next_value::<&'de RawValue>()?;
            if key == "id" && id.is_none() {
                id = Some(value);
            }
            members.push((key, value));
        }
        Ok((Members(members), call))
    }
}

/// `{}`, in place of a result read apart.
fn stand_in() -> &'static RawValue {
    static EMPTY: std::sync::OnceLock<&'static RawValue> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| {
        serde_json::from_str("{}").unwrap_or_else(|_| unreachable!("`{{}}` is JSON"))
    })
}
