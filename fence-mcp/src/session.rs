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

use crate::fencing::{self, Malformed, Notes};
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
                json::write_array(&mut out, &kept, &[]);
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
            let mut replacements = Vec::with_capacity(batch.len());
            for message in batch {
                let one = self.upstream_message(message);
                outcome.reply.extend(one.reply);
                outcome.notes.extend(one.notes);
                match one.forward {
                    Forward::AsIs => {
                        kept.push(message);
                        replacements.push(None);
                    }
                    Forward::Rewritten(json) => {
                        kept.push(message);
                        replacements.push(Some(json));
                    }
                    Forward::Nothing => {}
                }
            }
            if !kept.is_empty() {
                let mut out = Vec::with_capacity(line.len());
                json::write_array(&mut out, &kept, &replacements);
                outcome.forward = Forward::Rewritten(out);
            }
            return outcome;
        }
        self.upstream_message(raw)
    }

    fn upstream_message(&self, raw: &RawValue) -> Outcome {
        let Some(members) = Members::of(raw) else {
            return unreadable(raw.get().as_bytes(), "not a JSON-RPC message");
        };
        let (Ok(id), Ok(method)) = (members.one("id"), members.one("method")) else {
            return unreadable(raw.get().as_bytes(), "two `id` or two `method` members");
        };
        let key = id.and_then(id_key);
        match (method.and_then(json::string), key) {
            (Some(method), Some(key)) => {
                self.state().server.insert(key, method.into_owned());
                Outcome::new(Forward::AsIs)
            }
            (Some(method), None) => {
                if method == "notifications/tasks" || method == "notifications/tasks/status" {
                    self.task_notification(raw, &members)
                } else {
                    Outcome::new(Forward::AsIs)
                }
            }
            (None, Some(key)) => self.response(raw, &members, &key),
            (None, None) => {
                if members.one("error").is_ok_and(|error| error.is_some()) {
                    // An error for no request, such as the answer to a line that was not JSON.
                    Outcome::new(Forward::AsIs)
                } else {
                    unreadable(
                        raw.get().as_bytes(),
                        "neither a request, a notification nor a response",
                    )
                }
            }
        }
    }

    fn response(&self, raw: &RawValue, members: &Members<'_>, key: &str) -> Outcome {
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
        let mut replacements = Vec::with_capacity(members.0.len());
        let mut problem = None;
        for (name, value) in &members.0 {
            let replaced = match name.as_ref() {
                "result" => self.fence_result(&pending.asked, value, &mut notes),
                "error" => match pending.asked {
                    Asked::CallTool(_) | Asked::TaskResult(_) | Asked::ReadResource(_) => {
                        fencing::error_object(value)
                    }
                    _ => Ok(None),
                },
                _ => Ok(None),
            };
            match replaced {
                Ok(replaced) => replacements.push(replaced),
                Err(Malformed(what)) => {
                    problem = Some(what);
                    break;
                }
            }
        }
        let mut outcome = Outcome::new(Forward::AsIs);
        let mut state = self.state();
        for note in notes.0 {
            if state.noted.insert(note.clone()) {
                outcome.notes.push(note);
            }
        }
        drop(state);
        if let Some(problem) = problem {
            let what = format!(
                "withheld the answer of {} to {}, which cannot be fenced: {problem}",
                self.name(),
                pending.describe()
            );
            outcome.forward = Forward::Rewritten(error_reply(
                &pending.id,
                INTERNAL_ERROR,
                &format!("fence mcp: {what}"),
            ));
            outcome.notes.push(what);
        } else if replacements.iter().any(Option::is_some) {
            let mut out = Vec::with_capacity(raw.get().len() + 256);
            members.write_with(&mut out, &replacements);
            outcome.forward = Forward::Rewritten(out);
        }
        outcome
    }

    fn fence_result(
        &self,
        asked: &Asked,
        result: &RawValue,
        notes: &mut Notes,
    ) -> fencing::Rewrite {
        match asked {
            Asked::CallTool(tool) => {
                if fencing::is_task_handle(result) {
                    if let Some(task) = fencing::task_id(result) {
                        self.state().tasks.insert(task, tool.clone());
                    }
                }
                fencing::call_tool_result(result, &Source::tool(tool), notes)
            }
            Asked::TaskResult(task) => {
                fencing::call_tool_result(result, &self.task_source(task.as_deref()), notes)
            }
            Asked::TaskGet(task) => {
                let task = fencing::task_id(result).or_else(|| task.clone());
                fencing::task_state(result, &self.task_source(task.as_deref()), notes)
            }
            Asked::TaskList => {
                let Some(members) = Members::of(result) else {
                    return Ok(None);
                };
                let mut replacements = Vec::with_capacity(members.0.len());
                for (name, value) in &members.0 {
                    replacements.push(match (name.as_ref(), elements(value)) {
                        ("tasks", Some(tasks)) => {
                            let mut each = Vec::with_capacity(tasks.len());
                            for task in &tasks {
                                let source = self.task_source(fencing::task_id(task).as_deref());
                                each.push(fencing::task_state(task, &source, notes)?);
                            }
                            each.iter().any(Option::is_some).then(|| {
                                let mut out = Vec::with_capacity(value.get().len() + 256);
                                json::write_array(&mut out, &tasks, &each);
                                out
                            })
                        }
                        _ => None,
                    });
                }
                Ok(replacements.iter().any(Option::is_some).then(|| {
                    let mut out = Vec::with_capacity(result.get().len() + 256);
                    members.write_with(&mut out, &replacements);
                    out
                }))
            }
            Asked::ReadResource(uri) => fencing::read_resource_result(result, uri.as_deref()),
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
                Ok(None)
            }
            Asked::Other => Ok(None),
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

    fn task_notification(&self, raw: &RawValue, members: &Members<'_>) -> Outcome {
        let mut notes = Notes::default();
        let mut replacements = Vec::with_capacity(members.0.len());
        for (name, value) in &members.0 {
            let replaced = if name == "params" {
                let source = self.task_source(fencing::task_id(value).as_deref());
                match fencing::task_state(value, &source, &mut notes) {
                    Ok(replaced) => replaced,
                    Err(Malformed(problem)) => {
                        let mut outcome = Outcome::new(Forward::Nothing);
                        outcome.notes.push(format!(
                            "dropped a task status notification that cannot be fenced: {problem}"
                        ));
                        return outcome;
                    }
                }
            } else {
                None
            };
            replacements.push(replaced);
        }
        let mut outcome = Outcome::new(Forward::AsIs);
        outcome.notes = notes.0;
        if replacements.iter().any(Option::is_some) {
            let mut out = Vec::with_capacity(raw.get().len() + 256);
            members.write_with(&mut out, &replacements);
            outcome.forward = Forward::Rewritten(out);
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
        let too_big = format!(
            "{size} bytes, over the limit of {limit} bytes (raise it with --max-message-bytes)"
        );
        let key = skimmed
            .and_then(|message| message.id.as_ref())
            .and_then(|id| match id {
                serde_json::Value::String(_) | serde_json::Value::Number(_) => Some(id.to_string()),
                _ => None,
            });
        match (skimmed, key) {
            (
                Some(Skimmed {
                    method: Some(method),
                    ..
                }),
                Some(key),
            ) => {
                let id = RawValue::from_string(key)
                    .unwrap_or_else(|_| unreachable!("an id's JSON is JSON"));
                outcome.reply.push(error_reply(
                    &id,
                    INTERNAL_ERROR,
                    &format!("fence mcp: the request {method} is {too_big}"),
                ));
                outcome.notes.push(format!(
                    "refused a request {method} from the upstream, which is {too_big}"
                ));
            }
            (Some(Skimmed { method: None, .. }), Some(key)) => {
                match self.state().client.remove(&key) {
                    Some(pending) => {
                        let what = format!(
                            "dropped the answer to {}, which is {too_big}",
                            pending.describe()
                        );
                        outcome.forward = Forward::Rewritten(error_reply(
                            &pending.id,
                            INTERNAL_ERROR,
                            &format!("fence mcp: {what}"),
                        ));
                        outcome.notes.push(what);
                    }
                    None => outcome.notes.push(format!(
                        "dropped an answer for id {key}, which no request is waiting on, of {too_big}"
                    )),
                }
            }
            (
                Some(Skimmed {
                    method: Some(method),
                    ..
                }),
                None,
            ) => {
                outcome.notes.push(format!(
                    "dropped a notification {method}, which is {too_big}"
                ));
            }
            _ => outcome
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
        let too_big = format!(
            "{size} bytes, over the limit of {limit} bytes (raise it with --max-message-bytes)"
        );
        let id = skimmed
            .and_then(|message| message.id.as_ref())
            .filter(|id| id.is_string() || id.is_number())
            .map(|id| {
                RawValue::from_string(id.to_string())
                    .unwrap_or_else(|_| unreachable!("an id's JSON is JSON"))
            });
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
