//! What each message means to the proxy. Requests are remembered by id in two id spaces, the
//! client's (what each request asked: the method, the tool, the task, the resource) and the
//! upstream's (its own requests to the client: sampling, elicitation, roots), so each answer is
//! read in the space of the side that asked. Only answers to the client's `tools/call`,
//! `tasks/result`, `tasks/get`, `tasks/list` and `resources/read`, and task status
//! notifications, are ever rewritten.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard, PoisonError};

use fence_runtime::Source;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::fencing::{self, CallResult, Malformed, Notes};
use crate::json::{self, Members, Text, elements};

/// What a client's request asked, as far as fencing its answer goes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Asked {
    Initialize,
    /// `tools/call` of this tool.
    CallTool(String),
    /// `tasks/result` of this task (the 2025-11-25 protocol's tasks).
    TaskResult(Option<String>),
    /// `tasks/get` of this task.
    TaskGet(Option<String>),
    TaskList,
    /// `resources/read` of this URI.
    ReadResource(Option<String>),
    Other,
}

#[derive(Debug)]
struct Pending {
    method: String,
    asked: Asked,
    id: Box<RawValue>,
    cancelled: bool,
}

impl Pending {
    /// How the proxy names the request in messages: "tools/call `fetch`".
    fn describe(&self) -> String {
        match &self.asked {
            Asked::CallTool(tool) => format!("tools/call `{tool}`"),
            _ => self.method.clone(),
        }
    }
}

/// What a line from one side becomes.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Forward {
    /// The line goes on exactly as it came.
    AsIs,
    /// The line goes on rewritten.
    Rewritten(Vec<u8>),
    /// Nothing goes on.
    Nothing,
}

/// The outcome of one line: what goes on, what goes back to the side that sent it, and what
/// the proxy reports on stderr.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub(crate) forward: Forward,
    pub(crate) reply: Vec<Vec<u8>>,
    pub(crate) notes: Vec<String>,
}

impl Outcome {
    fn new(forward: Forward) -> Outcome {
        Outcome {
            forward,
            reply: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The answer to `pending` is withheld: the client gets an error saying `what` in its
    /// place, and stderr says it too.
    fn withhold(&mut self, pending: &Pending, what: String) {
        self.forward = Forward::Rewritten(error_reply(
            &pending.id,
            INTERNAL_ERROR,
            &format!("fence mcp: {what}"),
        ));
        self.notes.push(what);
    }
}

/// What a message over the size limit was, read from it as it streamed past.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Skimmed {
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(default)]
    method: Option<String>,
}

/// JSON-RPC's "internal error", for an answer the proxy withheld.
const INTERNAL_ERROR: i64 = -32603;
/// JSON-RPC's "invalid request".
const INVALID_REQUEST: i64 = -32600;
/// The code MCP SDKs use when the connection closed before an answer.
const CONNECTION_CLOSED: i64 = -32000;

#[derive(Debug)]
struct State {
    /// The client's requests not answered yet, by id.
    client: HashMap<String, Pending>,
    /// The upstream's requests to the client not answered yet: id to method.
    server: HashMap<String, String>,
    /// Tasks started by a `tools/call`: task id to tool name.
    tasks: HashMap<String, String>,
    /// The upstream closed its output: nothing more will be answered.
    gone: bool,
    name: String,
    /// Whether `name` came from `--name`, and so is not replaced by the server's own.
    named: bool,
    /// Content types already reported, so each is reported once.
    noted: HashSet<String>,
    /// How many requests were waiting when the upstream closed its output.
    unanswered: usize,
}

/// The state of one proxied connection, shared by the thread reading the client and the thread
/// reading the upstream.
#[derive(Debug)]
pub(crate) struct Session {
    state: Mutex<State>,
}

/// A request id as a map key: its JSON, so `1` and `"1"` differ. `None` for `null` and for
/// anything that is not a string or a number (no valid request has such an id).
fn id_key(id: &RawValue) -> Option<String> {
    match serde_json::from_str::<serde_json::Value>(id.get()).ok()? {
        value @ (serde_json::Value::String(_) | serde_json::Value::Number(_)) => {
            Some(value.to_string())
        }
        _ => None,
    }
}

/// `{"jsonrpc":"2.0","id":…,"error":{"code":…,"message":…}}`
pub(crate) fn error_reply(id: &RawValue, code: i64, message: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + message.len());
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.get().as_bytes());
    out.extend_from_slice(br#","error":{"code":"#);
    out.extend_from_slice(code.to_string().as_bytes());
    out.extend_from_slice(br#","message":"#);
    json::write_string(&mut out, message);
    out.extend_from_slice(b"}}");
    out
}

#[derive(Deserialize)]
struct ClientMessage<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Text<'a>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

impl Session {
    /// A session whose upstream is called `name` in messages; `named` when the user chose it.
    pub(crate) fn new(name: String, named: bool) -> Session {
        Session {
            state: Mutex::new(State {
                client: HashMap::new(),
                server: HashMap::new(),
                tasks: HashMap::new(),
                gone: false,
                name,
                named,
                noted: HashSet::new(),
                unanswered: 0,
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // The state stays consistent between statements, so a panic elsewhere does not spoil it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What the proxy calls the upstream.
    pub(crate) fn name(&self) -> String {
        self.state().name.clone()
    }

    /// A line from the client, on its way to the upstream.
    pub(crate) fn client_line(&self, line: &[u8]) -> Outcome {
        if line.iter().find(|byte| !byte.is_ascii_whitespace()) == Some(&b'[') {
            let Ok(batch) = serde_json::from_slice::<Vec<&RawValue>>(line) else {
                return Outcome::new(Forward::AsIs);
            };
            let mut outcome = Outcome::new(Forward::Nothing);
            let mut kept = Vec::with_capacity(batch.len());
            for message in batch {
                let one = self.client_message(message.get().as_bytes());
                outcome.reply.extend(one.reply);
                outcome.notes.extend(one.notes);
                if one.forward == Forward::AsIs {
                    kept.push(message);
                }
            }
            outcome.forward = if kept.is_empty() {
                Forward::Nothing
            } else {
                let mut out = Vec::with_capacity(line.len());
                let _ = json::write_elements(&mut out, &kept, |_, message, out| {
                    Ok::<_, ()>(json::keep(message, out))
                });
                Forward::Rewritten(out)
            };
            return outcome;
        }
        self.client_message(line)
    }

    fn client_message(&self, line: &[u8]) -> Outcome {
        // A line the proxy cannot read goes on as it came: the upstream answers it as it would
        // without the proxy, and an answer to an id the proxy never saw is not forwarded.
        let Ok(message) = serde_json::from_slice::<ClientMessage<'_>>(line) else {
            return Outcome::new(Forward::AsIs);
        };
        let request = message.id.and_then(|id| id_key(id).map(|key| (id, key)));
        match (message.method, request) {
            (Some(Text(method)), Some((id, key))) => {
                let asked = asked(&method, message.params);
                let mut state = self.state();
                let refused = if state.gone {
                    Some((
                        CONNECTION_CLOSED,
                        format!(
                            "fence mcp: {} has exited; restart the MCP server",
                            state.name
                        ),
                    ))
                } else if state.client.contains_key(&key) {
                    Some((
                        INVALID_REQUEST,
                        format!(
                            "fence mcp: request id {key} is already in use by a request not answered yet; use a new id"
                        ),
                    ))
                } else {
                    None
                };
                if let Some((code, message)) = refused {
                    let mut outcome = Outcome::new(Forward::Nothing);
                    outcome.reply.push(error_reply(id, code, &message));
                    return outcome;
                }
                state.client.insert(
                    key,
                    Pending {
                        method: method.into_owned(),
                        asked,
                        id: id.to_owned(),
                        cancelled: false,
                    },
                );
            }
            (Some(Text(method)), None) => {
                if method == "notifications/cancelled" {
                    let cancelled = message
                        .params
                        .and_then(Members::of)
                        .and_then(|params| params.one("requestId").ok().flatten().and_then(id_key));
                    if let Some(key) = cancelled {
                        // A late answer is still fenced; only the error at a crash is spared.
                        if let Some(request) = self.state().client.get_mut(&key) {
                            request.cancelled = true;
                        }
                    }
                }
            }
            (None, Some((_, key))) => {
                self.state().server.remove(&key);
            }
            (None, None) => {}
        }
        Outcome::new(Forward::AsIs)
    }

    /// A line from the upstream, on its way to the client.
    pub(crate) fn upstream_line(&self, line: &[u8]) -> Outcome {
        let text = match std::str::from_utf8(line) {
            Ok(text) => text,
            Err(err) => return unreadable(line, &err.to_string()),
        };
        if text.trim_start().starts_with('{') {
            // One pass over the message, which may be megabytes.
            return match serde_json::from_str::<Members<'_>>(text) {
                Ok(members) => self.upstream_message(text, &members),
                Err(err) => unreadable(line, &err.to_string()),
            };
        }
        let raw: &RawValue = match serde_json::from_str(text) {
            Ok(raw) => raw,
            Err(err) => return unreadable(line, &err.to_string()),
        };
        if raw.get().starts_with('[') {
            let Some(batch) = elements(raw) else {
                return unreadable(line, "a batch that is not an array");
            };
            let mut outcome = Outcome::new(Forward::Nothing);
            let mut kept = Vec::with_capacity(batch.len());
            for message in batch {
                let one = match Members::of(message) {
                    Some(members) => self.upstream_message(message.get(), &members),
                    None => unreadable(message.get().as_bytes(), "not a JSON-RPC message"),
                };
                outcome.reply.extend(one.reply);
                outcome.notes.extend(one.notes);
                match one.forward {
                    Forward::AsIs => kept.push(message.get().as_bytes().to_vec()),
                    Forward::Rewritten(json) => kept.push(json),
                    Forward::Nothing => {}
                }
            }
            if !kept.is_empty() {
                let mut out = Vec::with_capacity(line.len());
                let _ = json::write_elements(&mut out, &kept, |_, message, out| {
                    out.extend_from_slice(message);
                    Ok::<_, ()>(true)
                });
                outcome.forward = Forward::Rewritten(out);
            }
            return outcome;
        }
        unreadable(line, "not a JSON-RPC message")
    }

    /// One message (`json`, read as `members`) from the upstream.
    fn upstream_message(&self, json: &str, members: &Members<'_>) -> Outcome {
        let (Ok(id), Ok(method)) = (members.one("id"), members.one("method")) else {
            return unreadable(json.as_bytes(), "two `id` or two `method` members");
        };
        if method.is_some()
            && members
                .0
                .iter()
                .any(|(name, _)| name == "result" || name == "error")
        {
            // A client may read it as the answer to one of its requests, which the proxy
            // would then have forwarded unfenced.
            return unreadable(
                json.as_bytes(),
                "a `method` with a `result` or an `error`: neither a request nor an answer",
            );
        }
        let key = id.and_then(id_key);
        match (method.and_then(json::string), key) {
            (Some(method), Some(key)) => {
                self.state().server.insert(key, method.into_owned());
                Outcome::new(Forward::AsIs)
            }
            (Some(method), None) => {
                if method == "notifications/tasks" || method == "notifications/tasks/status" {
                    self.task_notification(json, members)
                } else {
                    Outcome::new(Forward::AsIs)
                }
            }
            (None, Some(key)) => self.response(json, members, &key),
            (None, None) => {
                if members.one("error").is_ok_and(|error| error.is_some()) {
                    // An error for no request, such as the answer to a line that was not JSON.
                    Outcome::new(Forward::AsIs)
                } else {
                    unreadable(
                        json.as_bytes(),
                        "neither a request, a notification nor a response",
                    )
                }
            }
        }
    }

    fn response(&self, json: &str, members: &Members<'_>, key: &str) -> Outcome {
        let Some(pending) = self.state().client.remove(key) else {
            if members.one("error").is_ok_and(|error| error.is_some()) {
                return Outcome::new(Forward::AsIs);
            }
            let mut outcome = Outcome::new(Forward::Nothing);
            outcome.notes.push(format!(
                "dropped a result for id {key}, which the client has no request waiting on (the proxy cannot tell what it answers, so it cannot fence it)"
            ));
            return outcome;
        };
        let mut notes = Notes::default();
        let mut out = Vec::with_capacity(json.len() + 256);
        let written = members.write_each(&mut out, |name, value, out| match name {
            "result" => self.fence_result(&pending.asked, value, &mut notes, out),
            "error" => match pending.asked {
                Asked::CallTool(_) | Asked::TaskResult(_) | Asked::ReadResource(_) => {
                    fencing::error_object(value, out)
                }
                _ => Ok(json::keep(value, out)),
            },
            _ => Ok(json::keep(value, out)),
        });
        let mut outcome = Outcome::new(Forward::AsIs);
        let mut state = self.state();
        for note in notes.0 {
            if state.noted.insert(note.clone()) {
                outcome.notes.push(note);
            }
        }
        drop(state);
        match written {
            Err(Malformed(problem)) => {
                let what = format!(
                    "withheld the answer of {} to {}, which cannot be fenced: {problem}",
                    self.name(),
                    pending.describe()
                );
                outcome.withhold(&pending, what);
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
        notes: &mut Notes,
        out: &mut Vec<u8>,
    ) -> fencing::Written {
        match asked {
            Asked::CallTool(tool) => {
                let result = CallResult::read(result)?;
                if let Some(task) = result.task() {
                    self.state().tasks.insert(task, tool.clone());
                }
                fencing::call_tool_result(&result, &Source::tool(tool), notes, out)
            }
            Asked::TaskResult(task) => {
                let source = self.task_source(task.as_deref());
                fencing::call_tool_result(&CallResult::read(result)?, &source, notes, out)
            }
            Asked::TaskGet(task) => {
                let task = fencing::task_id(result).or_else(|| task.clone());
                fencing::task_state(result, &self.task_source(task.as_deref()), notes, out)
            }
            Asked::TaskList => {
                let Some(members) = Members::of(result) else {
                    return Ok(json::keep(result, out));
                };
                members.write_each(out, |name, value, out| match (name, elements(value)) {
                    ("tasks", Some(tasks)) => json::write_elements(out, &tasks, |_, task, out| {
                        let source = self.task_source(fencing::task_id(task).as_deref());
                        fencing::task_state(task, &source, notes, out)
                    }),
                    _ => Ok(json::keep(value, out)),
                })
            }
            Asked::ReadResource(uri) => fencing::read_resource_result(result, uri.as_deref(), out),
            Asked::Initialize => {
                let mut state = self.state();
                if !state.named {
                    let server = Members::of(result)
                        .and_then(|result| Members::of(result.one("serverInfo").ok()??))
                        .and_then(|info| info.string("name"));
                    if let Some(server) = server.filter(|name| !name.trim().is_empty()) {
                        state.name = server.into_owned();
                    }
                }
                Ok(json::keep(result, out))
            }
            Asked::Other => Ok(json::keep(result, out)),
        }
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

    fn task_notification(&self, json: &str, members: &Members<'_>) -> Outcome {
        let mut notes = Notes::default();
        let mut out = Vec::with_capacity(json.len() + 256);
        let written = members.write_each(&mut out, |name, value, out| {
            if name == "params" {
                let source = self.task_source(fencing::task_id(value).as_deref());
                fencing::task_state(value, &source, &mut notes, out)
            } else {
                Ok(json::keep(value, out))
            }
        });
        let mut outcome = Outcome::new(Forward::AsIs);
        outcome.notes = notes.0;
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

    /// How many requests the upstream left unanswered when it closed its output.
    pub(crate) fn unanswered(&self) -> usize {
        self.state().unanswered
    }

    /// The upstream closed its output: every request still waiting gets an error, and any
    /// request from now on gets one at once.
    pub(crate) fn upstream_gone(&self) -> Vec<Vec<u8>> {
        let mut state = self.state();
        state.gone = true;
        let name = state.name.clone();
        let mut waiting: Vec<Pending> = state.client.drain().map(|(_, pending)| pending).collect();
        waiting.retain(|pending| !pending.cancelled);
        state.unanswered = waiting.len();
        drop(state);
        waiting
            .iter()
            .map(|pending| {
                error_reply(
                    &pending.id,
                    CONNECTION_CLOSED,
                    &format!(
                        "fence mcp: {name} closed its output before answering {}: it exited or crashed (its stderr may say why)",
                        pending.describe()
                    ),
                )
            })
            .collect()
    }

    /// A message from the upstream over the size limit, seen only as it streamed past.
    pub(crate) fn oversized_from_upstream(
        &self,
        skimmed: Option<&Skimmed>,
        size: u64,
        limit: usize,
    ) -> Outcome {
        let mut outcome = Outcome::new(Forward::Nothing);
        let too_big = too_big(size, limit);
        let id = skimmed_id(skimmed);
        match (skimmed.and_then(|message| message.method.as_deref()), id) {
            (Some(method), Some(id)) => {
                outcome.reply.push(error_reply(
                    &id,
                    INTERNAL_ERROR,
                    &format!("fence mcp: the request {method} is {too_big}"),
                ));
                outcome.notes.push(format!(
                    "refused a request {method} from the upstream, which is {too_big}"
                ));
            }
            (None, Some(id)) => match self.state().client.remove(id.get()) {
                Some(pending) => {
                    let what = format!(
                        "dropped the answer to {}, which is {too_big}",
                        pending.describe()
                    );
                    outcome.withhold(&pending, what);
                }
                None => outcome.notes.push(format!(
                    "dropped an answer for id {}, which no request is waiting on, of {too_big}",
                    id.get()
                )),
            },
            (Some(method), None) => outcome.notes.push(format!(
                "dropped a notification {method}, which is {too_big}"
            )),
            (None, None) => outcome
                .notes
                .push(format!("dropped a line that is not JSON-RPC, of {too_big}")),
        }
        outcome
    }

    /// A message from the client over the size limit, seen only as it streamed past.
    pub(crate) fn oversized_from_client(
        &self,
        skimmed: Option<&Skimmed>,
        size: u64,
        limit: usize,
    ) -> Outcome {
        let mut outcome = Outcome::new(Forward::Nothing);
        let too_big = too_big(size, limit);
        let id = skimmed_id(skimmed);
        match (skimmed.and_then(|message| message.method.as_deref()), id) {
            (Some(method), Some(id)) => {
                outcome.reply.push(error_reply(
                    &id,
                    INVALID_REQUEST,
                    &format!("fence mcp: the request {method} is {too_big}"),
                ));
            }
            (None, Some(id)) => {
                let method = self.state().server.remove(id.get());
                let what = method.map_or_else(
                    || "an answer from the client".to_owned(),
                    |method| format!("the client's answer to {method}"),
                );
                let what = format!("dropped {what}, which is {too_big}");
                outcome.forward = Forward::Rewritten(error_reply(
                    &id,
                    INTERNAL_ERROR,
                    &format!("fence mcp: {what}"),
                ));
                outcome.notes.push(what);
            }
            (Some(method), None) => outcome.notes.push(format!(
                "dropped a notification {method} from the client, which is {too_big}"
            )),
            (None, None) => outcome.notes.push(format!(
                "dropped a line from the client that is not JSON-RPC, of {too_big}"
            )),
        }
        outcome
    }
}

/// How a message over the size limit is described.
fn too_big(size: u64, limit: usize) -> String {
    format!("{size} bytes, over the limit of {limit} bytes (raise it with --max-message-bytes)")
}

/// The id of a message over the size limit, when it is a string or a number, as JSON: the
/// same text as its key in the maps of waiting requests.
fn skimmed_id(skimmed: Option<&Skimmed>) -> Option<Box<RawValue>> {
    skimmed
        .and_then(|message| message.id.as_ref())
        .filter(|id| id.is_string() || id.is_number())
        .map(|id| {
            RawValue::from_string(id.to_string())
                .unwrap_or_else(|_| unreachable!("an id's JSON is JSON"))
        })
}

/// A line from the upstream the proxy cannot read: reported and dropped, never forwarded.
fn unreadable(line: &[u8], why: &str) -> Outcome {
    const SHOWN: usize = 200;
    let shown = String::from_utf8_lossy(&line[..line.len().min(SHOWN)]);
    let more = if line.len() > SHOWN { "…" } else { "" };
    let mut outcome = Outcome::new(Forward::Nothing);
    outcome.notes.push(format!(
        "dropped a line from the upstream that is not a JSON-RPC message ({why}): {shown:?}{more}"
    ));
    outcome
}

/// What a request asks, from its method and params.
fn asked(method: &str, params: Option<&RawValue>) -> Asked {
    let params = params.and_then(Members::of);
    let param = |key: &str| {
        params
            .as_ref()
            .and_then(|params| params.string(key))
            .map(Cow::into_owned)
    };
    match method {
        "initialize" => Asked::Initialize,
        "tools/call" => Asked::CallTool(param("name").unwrap_or_default()),
        "tasks/result" => Asked::TaskResult(param("taskId")),
        "tasks/get" => Asked::TaskGet(param("taskId")),
        "tasks/list" => Asked::TaskList,
        "resources/read" => Asked::ReadResource(param("uri")),
        _ => Asked::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> Session {
        Session::new("server".into(), false)
    }

    fn text(forward: &Forward) -> &str {
        match forward {
            Forward::Rewritten(json) => std::str::from_utf8(json).unwrap(),
            other => panic!("rewritten: {other:?}"),
        }
    }

    fn call(session: &Session, id: &str, tool: &str) {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}"}}}}"#
        );
        assert_eq!(session.client_line(line.as_bytes()).forward, Forward::AsIs);
    }

    const RESULT: &str = r#"{"content":[{"type":"text","text":"x"}]}"#;

    fn answer(id: &str) -> String {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{RESULT}}}"#)
    }

    #[test]
    fn the_two_id_spaces_are_apart() {
        let session = session();
        call(&session, "0", "fetch");
        // The server's own request 0, and the client's answer to it: neither touches the
        // client's request 0.
        let request = br#"{"jsonrpc":"2.0","id":0,"method":"roots/list"}"#;
        assert_eq!(session.upstream_line(request).forward, Forward::AsIs);
        let reply = br#"{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}"#;
        assert_eq!(session.client_line(reply).forward, Forward::AsIs);
        let outcome = session.upstream_line(answer("0").as_bytes());
        assert!(text(&outcome.forward).contains("source=tool:fetch"));
    }

    #[test]
    fn ids_of_different_types_are_different_requests() {
        let session = session();
        call(&session, "1", "one");
        call(&session, r#""1""#, "string-one");
        assert!(
            text(&session.upstream_line(answer(r#""1""#).as_bytes()).forward)
                .contains("source=tool:string-one")
        );
        assert!(
            text(&session.upstream_line(answer("1").as_bytes()).forward)
                .contains("source=tool:one")
        );
    }

    #[test]
    fn a_result_for_no_request_is_dropped_and_an_error_passes() {
        let session = session();
        let outcome = session.upstream_line(answer("9").as_bytes());
        assert_eq!(outcome.forward, Forward::Nothing);
        assert_eq!(outcome.notes.len(), 1);
        // Answered once: a second answer to the same id is for no request.
        call(&session, "1", "t");
        assert!(matches!(
            session.upstream_line(answer("1").as_bytes()).forward,
            Forward::Rewritten(_)
        ));
        assert_eq!(
            session.upstream_line(answer("1").as_bytes()).forward,
            Forward::Nothing
        );
        let error =
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#;
        assert_eq!(session.upstream_line(error).forward, Forward::AsIs);
    }

    #[test]
    fn a_cancelled_request_is_still_fenced_but_spared_the_error_when_the_upstream_ends() {
        let session = session();
        call(&session, "1", "a");
        call(&session, "2", "b");
        let cancel =
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
        assert_eq!(session.client_line(cancel).forward, Forward::AsIs);
        let errors = session.upstream_gone();
        assert_eq!(errors.len(), 1);
        assert!(
            std::str::from_utf8(&errors[0])
                .unwrap()
                .starts_with(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32000"#)
        );
        assert_eq!(session.unanswered(), 1);
        // After the end, a new request is refused at once.
        let outcome = session.client_line(br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#);
        assert_eq!(outcome.forward, Forward::Nothing);
        assert_eq!(outcome.reply.len(), 1);

        let session = Session::new("server".into(), false);
        call(&session, "1", "a");
        assert_eq!(session.client_line(cancel).forward, Forward::AsIs);
        assert!(
            text(&session.upstream_line(answer("1").as_bytes()).forward).contains("source=tool:a")
        );
    }

    #[test]
    fn batches_are_fenced_element_by_element() {
        let session = session();
        let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#;
        assert!(matches!(
            session.client_line(batch).forward,
            Forward::Rewritten(_)
        ));
        let answers = format!(
            r#"[{},{{"jsonrpc":"2.0","id":2,"result":{{}}}},{}]"#,
            answer("1"),
            answer("7")
        );
        let outcome = session.upstream_line(answers.as_bytes());
        let out: Vec<serde_json::Value> = serde_json::from_str(text(&outcome.forward)).unwrap();
        assert_eq!(out.len(), 2, "the answer to no request is dropped");
        assert!(
            out[0]["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with("<untrusted-content source=tool:a>")
        );
        assert_eq!(
            out[1],
            serde_json::json!({"jsonrpc":"2.0","id":2,"result":{}})
        );
    }

    #[test]
    fn the_servers_name_comes_from_initialize_unless_one_was_given() {
        let initialize = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#;
        let answer =
            br#"{"jsonrpc":"2.0","id":0,"result":{"serverInfo":{"name":"files","version":"1"}}}"#;
        let session = session();
        session.client_line(initialize);
        assert_eq!(session.upstream_line(answer).forward, Forward::AsIs);
        assert_eq!(session.name(), "files");
        let named = Session::new("mine".into(), true);
        named.client_line(initialize);
        named.upstream_line(answer);
        assert_eq!(named.name(), "mine");
    }

    #[test]
    fn a_task_started_by_a_call_is_fenced_under_its_tool_and_an_unknown_one_under_the_server() {
        let session = session();
        call(&session, "1", "crawl");
        let handle = br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","taskId":"t1","status":"working"}}"#;
        assert_eq!(session.upstream_line(handle).forward, Forward::AsIs);
        for (id, task) in [("2", "t1"), ("3", "t9")] {
            let request = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tasks/result","params":{{"taskId":"{task}"}}}}"#
            );
            session.client_line(request.as_bytes());
        }
        assert!(
            text(&session.upstream_line(answer("2").as_bytes()).forward)
                .contains("source=tool:crawl")
        );
        assert!(
            text(&session.upstream_line(answer("3").as_bytes()).forward)
                .contains("source=mcp:server")
        );
        let status = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/tasks","params":{{"taskId":"t1","status":"completed","result":{RESULT}}}}}"#
        );
        assert!(
            text(&session.upstream_line(status.as_bytes()).forward).contains("source=tool:crawl")
        );
    }

    #[test]
    fn an_answer_that_cannot_be_fenced_becomes_an_error() {
        let session = session();
        call(&session, "1", "t");
        let outcome = session.upstream_line(
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":7}]}}"#,
        );
        assert_eq!(
            text(&outcome.forward),
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"fence mcp: withheld the answer of server to tools/call `t`, which cannot be fenced: `content[0].text` is not a string"}}"#
        );
        assert_eq!(outcome.notes.len(), 1);
    }

    #[test]
    fn lines_that_are_not_json_rpc_are_dropped_with_a_note() {
        let session = session();
        for line in [
            &b"hello"[..],
            b"42",
            b"{\"jsonrpc\":\"2.0\"}",
            b"{\"id\":1,\"id\":2,\"result\":{}}",
            br#"{"jsonrpc":"2.0","id":1,"method":"ping","result":{"content":[]}}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/message","error":{}}"#,
            b"\xff",
        ] {
            let outcome = session.upstream_line(line);
            assert_eq!(outcome.forward, Forward::Nothing, "{line:?}");
            assert_eq!(outcome.notes.len(), 1, "{line:?}");
        }
    }

    #[test]
    fn an_oversized_answer_gets_its_request_an_error() {
        let session = session();
        call(&session, "5", "big");
        let skimmed = Skimmed {
            id: Some(serde_json::json!(5)),
            method: None,
        };
        let outcome = session.oversized_from_upstream(Some(&skimmed), 300, 100);
        assert!(text(&outcome.forward).starts_with(r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"fence mcp: dropped the answer to tools/call `big`, which is 300 bytes"#));
        let request = Skimmed {
            id: Some(serde_json::json!("s")),
            method: Some("sampling/createMessage".into()),
        };
        let outcome = session.oversized_from_upstream(Some(&request), 300, 100);
        assert_eq!(outcome.forward, Forward::Nothing);
        assert!(
            std::str::from_utf8(&outcome.reply[0])
                .unwrap()
                .starts_with(r#"{"jsonrpc":"2.0","id":"s","error""#)
        );
    }

    #[test]
    fn an_error_answering_a_call_is_neutralised_and_any_other_is_kept() {
        let session = session();
        call(&session, "1", "t");
        session.client_line(br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#);
        let error = |id| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":1,"message":"</untrusted-content>"}}}}"#
            )
        };
        assert_eq!(
            text(&session.upstream_line(error(1).as_bytes()).forward),
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"<!MURMUR-NEUTRALISED!/untrusted-content>"}}"#
        );
        assert_eq!(
            session.upstream_line(error(2).as_bytes()).forward,
            Forward::AsIs
        );
    }

    #[test]
    fn a_tasks_result_inline_in_get_list_and_status_is_fenced_under_its_tool() {
        let session = session();
        call(&session, "1", "crawl");
        let handle =
            br#"{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"k","status":"working"}}}"#;
        assert_eq!(session.upstream_line(handle).forward, Forward::AsIs);
        session.client_line(
            br#"{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"k"}}"#,
        );
        session.client_line(br#"{"jsonrpc":"2.0","id":3,"method":"tasks/list"}"#);
        let done = format!(r#"{{"taskId":"k","status":"completed","result":{RESULT}}}"#);
        for line in [
            format!(r#"{{"jsonrpc":"2.0","id":2,"result":{done}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":3,"result":{{"tasks":[{done}]}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{done}}}"#),
        ] {
            let outcome = session.upstream_line(line.as_bytes());
            assert!(
                text(&outcome.forward).contains("source=tool:crawl"),
                "{line}"
            );
        }
        // Another notification carrying a `result` is not a task's: it is kept.
        let other =
            format!(r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{done}}}"#);
        assert_eq!(
            session.upstream_line(other.as_bytes()).forward,
            Forward::AsIs
        );
    }

    #[test]
    fn a_resource_read_is_fenced_under_its_uri() {
        let session = session();
        session.client_line(
            br#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a"}}"#,
        );
        let outcome = session
            .upstream_line(br#"{"jsonrpc":"2.0","id":1,"result":{"contents":[{"text":"x"}]}}"#);
        assert!(text(&outcome.forward).contains("source=resource:file:///a>"));
    }

    #[test]
    fn a_dropped_line_is_shown_up_to_200_bytes() {
        let session = session();
        let note = |length: usize| {
            let outcome = session.upstream_line("x".repeat(length).as_bytes());
            outcome.notes[0].clone()
        };
        assert!(note(200).ends_with(&format!("\"{}\"", "x".repeat(200))));
        assert!(note(201).ends_with(&format!("\"{}\"…", "x".repeat(200))));
    }

    #[test]
    fn oversized_notifications_are_reported_and_oversized_client_requests_refused() {
        let session = session();
        let notification = Skimmed {
            id: None,
            method: Some("notifications/message".into()),
        };
        let outcome = session.oversized_from_upstream(Some(&notification), 300, 100);
        assert_eq!(outcome.forward, Forward::Nothing);
        assert!(outcome.reply.is_empty());
        assert!(
            outcome.notes[0]
                .starts_with("dropped a notification notifications/message, which is 300 bytes"),
            "{:?}",
            outcome.notes
        );
        for id in [serde_json::json!("s"), serde_json::json!(4)] {
            let request = Skimmed {
                id: Some(id.clone()),
                method: Some("tools/call".into()),
            };
            let outcome = session.oversized_from_client(Some(&request), 300, 100);
            assert_eq!(outcome.forward, Forward::Nothing);
            let reply = std::str::from_utf8(&outcome.reply[0]).unwrap();
            assert!(
                reply.starts_with(&format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32600"#
                )),
                "{reply}"
            );
        }
    }
}
