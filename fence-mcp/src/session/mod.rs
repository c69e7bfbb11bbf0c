//! What each message means to the proxy. Requests are remembered by id in two id spaces, the
//! client's (what each request asked: the method, the tool, the task, the resource) and the
//! upstream's (its own requests to the client: sampling, elicitation, roots), so each answer is
//! read in the space of the side that asked, and ids are matched as the clients match them
//! ([`crate::ids`]).
//!
//! The rule for the upstream's messages: a message answers a client's request only when it has
//! an `id`, no `method`, exactly one `result` or `error` member, that member an object, and its
//! id reads as the id of exactly one waiting request. Everything else that is not a request or
//! a notification is garbage: dropped, reported, and it answers nothing — a waiting request
//! stays waiting. So nothing the upstream sends reaches the client as an answer the proxy has
//! not read as one.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::value::RawValue;

use crate::fencing::{CallResult, Fencing};
use crate::ids::{self, BadId};
use crate::json::{self, Members, elements};
use crate::pin::{Kind, Pinning};
use crate::requests::{Answered, Found, Requests};
use crate::said::{excerpt, shown};

mod answer;
mod asked;
mod oversized;
mod told;
#[cfg(feature = "http")]
mod unnamed;

use asked::{Asked, Pending, asked};
pub(crate) use oversized::Skimmed;

/// The side a message came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Client,
    Upstream,
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
    /// Messages of the proxy's own that go on after `forward`: the errors for several requests
    /// one oversized line named.
    pub(crate) also: Vec<Vec<u8>>,
    pub(crate) reply: Vec<Vec<u8>>,
    pub(crate) notes: Vec<String>,
}

impl Outcome {
    fn new(forward: Forward) -> Outcome {
        Outcome {
            forward,
            also: Vec::new(),
            reply: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The line goes on as it came, unread: what an open gate makes of everything.
    #[cfg_attr(not(fence_gate_open), allow(dead_code))]
    pub(crate) fn as_it_came() -> Outcome {
        Outcome::new(Forward::AsIs)
    }

    /// Nothing goes on; the side that sent the line gets `error` back.
    fn refused(error: Vec<u8>) -> Outcome {
        let mut outcome = Outcome::new(Forward::Nothing);
        outcome.reply.push(error);
        outcome
    }

    /// The answer to `pending` is withheld: the client gets an error saying `what` in its
    /// place, and stderr says it too.
    fn withhold(&mut self, pending: &Pending, what: String) {
        self.forward = Forward::Rewritten(withheld(pending, &what));
        self.notes.push(what);
    }
}

/// The error the client gets for `pending` in place of an answer the proxy withheld.
fn withheld(pending: &Pending, what: &str) -> Vec<u8> {
    error_reply(&pending.id, INTERNAL_ERROR, &format!("fence mcp: {what}"))
}

/// JSON-RPC's "parse error", for a client line that is not JSON.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's "internal error", for an answer the proxy withheld.
const INTERNAL_ERROR: i64 = -32603;
/// JSON-RPC's "invalid request".
const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC's "invalid params".
const INVALID_PARAMS: i64 = -32602;
/// The code MCP SDKs use when the connection closed before an answer.
const CONNECTION_CLOSED: i64 = -32000;

/// The `id` of an error answering no request in particular.
const NO_ID: &str = "null";

#[derive(Debug)]
struct State {
    /// The client's requests not answered yet.
    client: Requests<Pending>,
    /// The client's requests answered last, for an answer the upstream sends again.
    answered: Answered<Pending>,
    /// The upstream's requests to the client not answered yet: their methods.
    server: Requests<String>,
    /// Tasks started by a `tools/call`: task id to tool name.
    tasks: HashMap<String, String>,
    /// The upstream closed its output: nothing more will be answered.
    gone: bool,
    /// The upstream's name, as given or as the server said it; [`shown`] before any use in
    /// the proxy's own text.
    name: String,
    /// Whether `name` came from `--name`, and so is not replaced by the server's own.
    named: bool,
    /// Notes already made, so each is made once.
    noted: HashSet<String>,
    /// How many requests were waiting when the upstream closed its output.
    unanswered: usize,
    /// Remove `structuredContent` from results, and `outputSchema` from listed tools.
    remove_structured: bool,
    /// The warnings for the client, and whether it asked for them.
    told: told::Told,
}

/// The state of one proxied connection, shared by the thread reading the client and the thread
/// reading the upstream.
#[derive(Debug)]
pub(crate) struct Session {
    state: Mutex<State>,
    /// The pin the server's definitions are held to, when there is one.
    pin: Option<Arc<Pinning>>,
}

/// `{"jsonrpc":"2.0","id":…,"error":{"code":…,"message":…}}`
pub(crate) fn error_reply(id: &RawValue, code: i64, message: &str) -> Vec<u8> {
    error_with_id(id.get(), code, message)
}

fn error_with_id(id: &str, code: i64, message: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + message.len());
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(br#","error":{"code":"#);
    out.extend_from_slice(code.to_string().as_bytes());
    out.extend_from_slice(br#","message":"#);
    json::write_string(&mut out, message);
    out.extend_from_slice(b"}}");
    out
}

impl Session {
    /// A session whose upstream is called `name` in messages; `named` when the user chose it.
    pub(crate) fn new(name: String, named: bool) -> Session {
        Session {
            state: Mutex::new(State {
                client: Requests::default(),
                answered: Answered::new(answer::ANSWERED_KEPT),
                server: Requests::default(),
                tasks: HashMap::new(),
                gone: false,
                name,
                named,
                noted: HashSet::new(),
                unanswered: 0,
                remove_structured: false,
                told: told::Told::default(),
            }),
            pin: None,
        }
    }

    /// The session holds what the server lists to `pin`.
    pub(crate) fn pinned(mut self, pin: Arc<Pinning>) -> Session {
        self.pin = Some(pin);
        self
    }

    /// The session removes `structuredContent` from results and `outputSchema` from listed
    /// tools, rather than neutralise the one and keep the other.
    pub(crate) fn removing_structured_content(self) -> Session {
        self.state().remove_structured = true;
        self
    }

    /// The rules for fencing one message.
    fn fencing(&self) -> Fencing {
        Fencing {
            remove_structured: self.state().remove_structured,
            notes: Vec::new(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // The state stays consistent between statements, so a panic elsewhere does not spoil it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What the proxy calls the upstream, as it may say it.
    pub(crate) fn name(&self) -> String {
        shown(&self.state().name)
    }

    /// A line from the client, on its way to the upstream.
    pub(crate) fn client_line(&self, line: &[u8]) -> Outcome {
        if line.iter().find(|byte| !byte.is_ascii_whitespace()) == Some(&b'[') {
            let Ok(batch) = serde_json::from_slice::<Vec<&RawValue>>(line) else {
                return client_garbage(line);
            };
            if batch.is_empty() {
                return Outcome::refused(error_with_id(
                    NO_ID,
                    INVALID_REQUEST,
                    "fence mcp: an empty batch is not a request",
                ));
            }
            return batch_of(&batch, line.len(), |message| {
                self.client_message(message.get().as_bytes())
            });
        }
        self.client_message(line)
    }

    fn client_message(&self, line: &[u8]) -> Outcome {
        let Some(members) = std::str::from_utf8(line)
            .ok()
            .and_then(|text| serde_json::from_str::<Members<'_>>(text).ok())
        else {
            return client_garbage(line);
        };
        let (Ok(id), Ok(method)) = (members.one("id"), members.one("method")) else {
            return Outcome::refused(error_with_id(
                NO_ID,
                INVALID_REQUEST,
                "fence mcp: a message with two `id` or two `method` members",
            ));
        };
        // `"id": null` is not a request's id; a message with one is passed on as it came, and
        // anything answering it is for no request.
        let id = id.filter(|id| id.get() != NO_ID);
        let Some(method) = method else {
            // The client's answer to one of the upstream's requests.
            if let Some(keys) = id.and_then(|id| ids::keys(id).ok()) {
                let mut state = self.state();
                if let Found::One(handle) = state.server.find(&keys) {
                    state.server.remove(handle);
                }
            }
            return Outcome::new(Forward::AsIs);
        };
        let refuse = |code: i64, message: &str| {
            Outcome::refused(error_with_id(
                id.map_or(NO_ID, RawValue::get),
                code,
                &format!("fence mcp: {message}"),
            ))
        };
        let Ok(Some(method)) = json::text(method) else {
            return refuse(INVALID_REQUEST, "the method is not a string");
        };
        let params = members.one("params").ok().flatten();
        let sets_level = (method == "logging/setLevel").then_some(params);
        let Some(id) = id else {
            if method == "notifications/cancelled" {
                self.cancelled(params);
            }
            return Outcome::new(Forward::AsIs);
        };
        let keys = match ids::request_keys(id) {
            Ok(keys) => keys,
            Err(bad) => {
                return Outcome::refused(error_with_id(
                    NO_ID,
                    INVALID_REQUEST,
                    &format!(
                        "fence mcp: a request's id {}; use a string or an integer",
                        bad.problem()
                    ),
                ));
            }
        };
        let asked = match asked(&method, params) {
            Ok(asked) => asked,
            Err(problem) => return refuse(INVALID_PARAMS, &problem),
        };
        if let Err(why) = self.pin_allows(&asked) {
            let mut outcome = Outcome::refused(error_reply(
                id,
                INVALID_PARAMS,
                &format!("fence mcp: {why}"),
            ));
            outcome.notes.push(format!("refused a request: {why}"));
            return outcome;
        }
        let mut state = self.state();
        if state.gone {
            let message = format!(
                "fence mcp: {} has exited; restart the MCP server",
                shown(&state.name)
            );
            return Outcome::refused(error_reply(id, CONNECTION_CLOSED, &message));
        }
        let pending = Pending {
            method: method.into_owned(),
            asked,
            id: id.to_owned(),
            cancelled: false,
        };
        let named = keys.clone();
        if state.client.insert(keys, pending).is_err() {
            let message = format!(
                "fence mcp: request id {} is already in use by a request not answered yet \
                 (clients read ids loosely: \"1\" and 1 are one id); use a new id",
                shown(id.get())
            );
            return Outcome::refused(error_reply(id, INVALID_REQUEST, &message));
        }
        // The id names this request now: an answer sent again to one answered before under it
        // is no longer told apart from this one's, whatever ends this one.
        state.answered.forget(&named);
        drop(state);
        let mut outcome = Outcome::new(Forward::AsIs);
        if let Some(params) = sets_level {
            outcome.reply = self.set_level(params);
        }
        outcome
    }

    /// Whether the pin lets a request naming a tool or a prompt go on; else why not.
    fn pin_allows(&self, asked: &Asked) -> Result<(), String> {
        let Some(pin) = &self.pin else {
            return Ok(());
        };
        match asked {
            Asked::CallTool(tool) => pin.may_call(Kind::Tool, tool),
            Asked::GetPrompt(prompt) => pin.may_call(Kind::Prompt, prompt),
            _ => Ok(()),
        }
    }

    /// A cancellation from the client: the request it names is spared the error it would get
    /// when the upstream ends. A late answer is still fenced.
    fn cancelled(&self, params: Option<&RawValue>) {
        let keys = params
            .and_then(Members::of)
            .and_then(|params| params.one("requestId").ok().flatten())
            .and_then(|id| ids::keys(id).ok());
        if let Some(keys) = keys {
            let mut state = self.state();
            if let Found::One(handle) = state.client.find(&keys) {
                if let Some(request) = state.client.get_mut(handle) {
                    request.cancelled = true;
                }
            }
        }
    }

    /// A line from the upstream, on its way to the client.
    pub(crate) fn upstream_line(&self, line: &[u8]) -> Outcome {
        let text = match std::str::from_utf8(line) {
            Ok(text) => text,
            Err(err) => return unreadable(line, &err.to_string()),
        };
        if text.trim_start().starts_with('{') {
            // One pass over the message, which may be megabytes.
            return match answer::read_message(text, |id| self.awaits_call(id)) {
                Ok((members, call)) => self.upstream_message(text, &members, call),
                Err(_) => self.upstream_object(text),
            };
        }
        let raw: &RawValue = match serde_json::from_str(text) {
            Ok(raw) => raw,
            Err(err) => return unreadable(line, &err.to_string()),
        };
        if !raw.get().starts_with('[') {
            return unreadable(line, "not a JSON-RPC message");
        }
        let Some(batch) = elements(raw).filter(|batch| !batch.is_empty()) else {
            return unreadable(line, "an empty batch");
        };
        batch_of(&batch, line.len(), |message| match Members::of(message) {
            Some(members) => self.upstream_message(message.get(), &members, None),
            None => unreadable(message.get().as_bytes(), "not a JSON-RPC message"),
        })
    }

    /// A message from the upstream that is an object, read as [`Members`] (a result read
    /// apart by [`answer::read_message`] is not), or why it cannot be read.
    fn upstream_object(&self, json: &str) -> Outcome {
        match serde_json::from_str::<Members<'_>>(json) {
            Ok(members) => self.upstream_message(json, &members, None),
            Err(err) => unreadable(json.as_bytes(), &err.to_string()),
        }
    }

    /// Whether the request the id `id` names, waiting, is a `tools/call`.
    fn awaits_call(&self, id: &RawValue) -> bool {
        let Ok(keys) = ids::keys(id) else {
            return false;
        };
        let state = self.state();
        match state.client.find(&keys) {
            Found::One(handle) => state.client.get(handle).is_some_and(Pending::calls_a_tool),
            Found::None => match state.answered.find(&keys) {
                Found::One(handle) => state
                    .answered
                    .get(handle)
                    .is_some_and(Pending::calls_a_tool),
                Found::None | Found::Several => false,
            },
            Found::Several => false,
        }
    }

    /// One message (`json`, read as `members`) from the upstream; `call` is its `result`
    /// when [`answer::read_message`] read it as a `tools/call` result (`members` then hold
    /// `{}` in its place).
    fn upstream_message(
        &self,
        json: &str,
        members: &Members<'_>,
        call: Option<CallResult<'_>>,
    ) -> Outcome {
        let (Ok(id), Ok(method)) = (members.one("id"), members.one("method")) else {
            return unreadable(json.as_bytes(), "two `id` or two `method` members");
        };
        let answers: Vec<_> = members
            .0
            .iter()
            .filter(|(name, _)| name == "result" || name == "error")
            .collect();
        if let Some(method) = method {
            if !answers.is_empty() {
                // A client may read it as the answer to one of its requests, which the proxy
                // would then have forwarded unfenced.
                return unreadable(
                    json.as_bytes(),
                    "a `method` with a `result` or an `error`: neither a request nor an answer",
                );
            }
            let Some(method) = json::string(method) else {
                return unreadable(json.as_bytes(), "a `method` that is not a string");
            };
            return match id.filter(|id| id.get() != NO_ID) {
                // A request of the upstream's own; one whose id cannot be a request's goes on
                // too, and the client answers it as it would without the proxy.
                Some(id) => {
                    if let Ok(keys) = ids::keys(id) {
                        // A second request reusing an id is the client's to refuse.
                        let _ = self.state().server.insert(keys, method.into_owned());
                    }
                    Outcome::new(Forward::AsIs)
                }
                None if method == "notifications/tasks"
                    || method == "notifications/tasks/status" =>
                {
                    self.task_notification(json, members)
                }
                None => Outcome::new(Forward::AsIs),
            };
        }
        let Some(id) = id else {
            return unreadable(
                json.as_bytes(),
                "neither a request, a notification nor an answer",
            );
        };
        let [(kind, value)] = answers.as_slice() else {
            return unreadable(
                json.as_bytes(),
                "an answer needs exactly one `result` or `error` member",
            );
        };
        if !value.get().starts_with('{') {
            return unreadable(
                json.as_bytes(),
                &format!("an answer whose `{kind}` is not an object"),
            );
        }
        let keys = match ids::keys(id) {
            Ok(keys) => keys,
            Err(BadId::NotAnId) if id.get() == NO_ID => {
                return unreadable(json.as_bytes(), "an answer to no request (its id is null)");
            }
            Err(bad) => {
                return unreadable(
                    json.as_bytes(),
                    &format!("an answer whose id {}", bad.problem()),
                );
            }
        };
        let mut state = self.state();
        let pending = match state.client.find(&keys) {
            Found::One(handle) => {
                let is_call = state.client.get(handle).is_some_and(Pending::calls_a_tool);
                if call.is_some() && !is_call {
                    // What is waiting changed since the message was read: read it again,
                    // with its result as it came.
                    drop(state);
                    return self.upstream_object(json);
                }
                state.client.remove(handle)
            }
            Found::None => {
                drop(state);
                return self.replayed(json, members, id, &keys, call);
            }
            Found::Several => {
                drop(state);
                return dropped_answer(
                    id,
                    "which reads as the ids of several waiting requests, so no client could tell which it answers",
                );
            }
        };
        drop(state);
        match pending {
            Some(pending) => {
                let outcome = self.answer(json, members, id, &pending, call);
                self.retire(pending);
                outcome
            }
            None => self.replayed(json, members, id, &keys, call),
        }
    }

    /// The request with exactly the id `id` will not be answered (its HTTP response ended
    /// without an answer, or the upstream could not be reached): it is forgotten, and the
    /// error the client gets in its place returned, saying `why`. `None` when no such request
    /// is waiting (it was answered, or cancelled, which wants no answer).
    #[cfg(feature = "http")]
    pub(crate) fn abandon(&self, id: &RawValue, why: &str) -> Option<Vec<u8>> {
        let pending = self.take_exactly(id)?;
        (!pending.cancelled).then(|| {
            error_reply(
                &pending.id,
                CONNECTION_CLOSED,
                &format!("fence mcp: {why} (for {})", pending.describe()),
            )
        })
    }

    /// Whether the request with exactly the id `id` is still waiting for its answer.
    #[cfg(feature = "http")]
    pub(crate) fn waiting(&self, id: &RawValue) -> bool {
        let Ok(keys) = ids::keys(id) else {
            return false;
        };
        let mut state = self.state();
        match state.client.find(&keys) {
            Found::One(handle) => state
                .client
                .get_mut(handle)
                .is_some_and(|pending| pending.id.get() == id.get()),
            Found::None | Found::Several => false,
        }
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
        let name = shown(&state.name);
        let mut waiting: Vec<Pending> = state.client.drain().collect();
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
}

/// A JSON-RPC batch (of a line of `len` bytes) from either side, each message read by `one`:
/// what goes on is the batch of what goes on of each (as it came, or rewritten), in order, or
/// nothing when nothing does; the replies, the proxy's own messages and the notes of each are
/// the batch's.
fn batch_of<'a>(
    batch: &[&'a RawValue],
    len: usize,
    mut one: impl FnMut(&'a RawValue) -> Outcome,
) -> Outcome {
    let mut outcome = Outcome::new(Forward::Nothing);
    let mut kept: Vec<Cow<'a, [u8]>> = Vec::with_capacity(batch.len());
    for &message in batch {
        let each = one(message);
        outcome.reply.extend(each.reply);
        outcome.notes.extend(each.notes);
        outcome.also.extend(each.also);
        match each.forward {
            Forward::AsIs => kept.push(Cow::Borrowed(message.get().as_bytes())),
            Forward::Rewritten(json) => kept.push(Cow::Owned(json)),
            Forward::Nothing => {}
        }
    }
    if !kept.is_empty() {
        let mut out = Vec::with_capacity(len);
        let _ = json::write_elements(&mut out, &kept, |_, message, out| {
            out.extend_from_slice(message);
            Ok::<_, ()>(true)
        });
        outcome.forward = Forward::Rewritten(out);
    }
    outcome
}

/// A line from the upstream the proxy cannot read: reported and dropped, never forwarded.
fn unreadable(line: &[u8], why: &str) -> Outcome {
    let mut outcome = Outcome::new(Forward::Nothing);
    outcome.notes.push(format!(
        "dropped a line from the upstream that is not a JSON-RPC message ({why}): {}",
        excerpt(line)
    ));
    outcome
}

/// An answer from the upstream that answers no request the proxy can name: dropped and
/// reported; it answers nothing.
fn dropped_answer(id: &RawValue, why: &str) -> Outcome {
    let mut outcome = Outcome::new(Forward::Nothing);
    outcome.notes.push(format!(
        "dropped an answer with the id {}, {why}",
        shown(id.get())
    ));
    outcome
}

/// A line from the client the proxy cannot read: not JSON, or not a JSON-RPC message. It is
/// not passed on, as the proxy could not tell what its answer answers; the client gets the
/// error the upstream would have sent.
fn client_garbage(line: &[u8]) -> Outcome {
    let json = serde_json::from_slice::<&RawValue>(line).is_ok();
    let (code, what) = if json {
        (
            INVALID_REQUEST,
            "is not a JSON-RPC message the proxy can read",
        )
    } else {
        (PARSE_ERROR, "is not JSON")
    };
    let mut outcome = Outcome::refused(error_with_id(
        NO_ID,
        code,
        &format!("fence mcp: a line from the client {what}"),
    ));
    outcome.notes.push(format!(
        "refused a line from the client that {what}: {}",
        excerpt(line)
    ));
    outcome
}

#[cfg(test)]
mod tests;
