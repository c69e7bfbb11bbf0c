//! One response of a session's server, and, for an event stream of a session (not of the
//! stateless server), what it keeps so that its client can resume it (the 2025-11-25 spec's
//! "Resumability and Redelivery", SEP-1699).
//!
//! Each event of a session's streams has an id unique within the session, `S-N`: the number
//! `S` of its stream (a POST's, or a GET's) and its own number `N` on it, from 0. A client
//! whose stream breaks sends a GET with the last id it received as `Last-Event-ID`, which
//! names the stream: the proxy replays that stream's events after it and carries on with the
//! rest of the stream, as if it had never broken. So each stream keeps its events
//! ([`REPLAY_BYTES`] of them), and an event of a stream whose client has gone (an answer, or
//! whatever else was on its way there) is kept for that client's resumption, not lost; each
//! session keeps its last [`REPLAY_STREAMS`] streams.
//!
//! The stateless server's streams (2026-07-28) are not resumable: a client of that revision
//! has no session to resume a stream in (a GET names one), and closing a stream is how it
//! cancels its requests, which the proxy then does. Nor is a JSON body. Those responses are
//! the queue alone, as before: what their client has gone from goes elsewhere, or nowhere.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use serde_json::value::RawValue;

use super::queue::{MESSAGE_COST, Receiver, Sender, Unsent, queue};
use crate::session::error_reply;
use crate::wire::sse::{identified_event, message_event, priming_event};

/// How many bytes of events each resumable stream keeps for its client to resume it; each
/// event counts [`MESSAGE_COST`] more, so at most 4,096 are kept. Past it the oldest are
/// forgotten (the newest is kept, however large), and an answer among them is replaced by an
/// error for its request.
pub(crate) const REPLAY_BYTES: usize = 1 << 20;

/// How many resumable streams each session keeps, open or ended; past it, the oldest stream
/// no client is reading is forgotten, and a `Last-Event-ID` naming it gets 400.
pub(crate) const REPLAY_STREAMS: usize = 16;

/// JSON-RPC's "server error", for an answer the proxy forgot before its client resumed.
const FORGOTTEN: i64 = -32000;

/// How long a client waits, in milliseconds, before it resumes a stream that broke off: the
/// `retry` of each stream's priming event (what both official SDKs' clients wait when a stream
/// names none, said outright, as SEP-1699 asks of a server).
pub(crate) const RESUME_AFTER_MS: u64 = 1000;

/// A message of the server's on its way to a response.
#[derive(Debug)]
pub(super) struct Routed {
    /// The id (as the server knows it) of the request it answers, if it is an answer.
    pub(super) answers: Option<String>,
    pub(super) message: Vec<u8>,
}

impl Routed {
    /// A message that answers no request of the response's.
    pub(super) fn other(message: Vec<u8>) -> Routed {
        Routed {
            answers: None,
            message,
        }
    }
}

/// A message a stream did not take, given back: to go elsewhere, or to be dropped.
#[derive(Debug)]
pub(super) struct Returned {
    pub(super) message: Vec<u8>,
    /// Whether the stream's client read nothing for the patience it was given (the stream is
    /// closed now), rather than being gone.
    pub(super) stalled: bool,
}

/// What a response carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Carries {
    /// One JSON body, once every request is answered.
    Json,
    /// An event stream that cannot be resumed: the stateless server's.
    Events,
    /// An event stream of a session, each event with an id, kept for resumption; `listens`
    /// for a GET stream (which no answer ends).
    Resumable { listens: bool },
}

/// One response: where its messages queue for its client, and, resumable, what it keeps.
#[derive(Debug)]
pub(super) struct Stream {
    /// Its number in its session (0 for one that is not resumable).
    number: u64,
    carries: Carries,
    state: Mutex<State>,
}

/// An event kept for a resumption.
#[derive(Debug)]
struct Kept {
    /// Its number on the stream.
    at: u64,
    event: Bytes,
    /// What it is to the bound.
    kind: Held,
}

/// What a kept event is to [`REPLAY_BYTES`].
#[derive(Debug)]
enum Held {
    /// An answer, and its id as its client wrote it: when it is forgotten, an error for the
    /// request takes its place.
    Answer(Box<RawValue>),
    /// The error in place of an answer forgotten, which is never forgotten itself (there is at
    /// most one for each request of the POST).
    InPlace,
    /// Anything else, forgotten past the bound.
    Other,
}

impl Kept {
    fn cost(&self) -> usize {
        self.event.len() + MESSAGE_COST
    }
}

#[derive(Debug, Default)]
struct State {
    /// The number of its next event.
    next: u64,
    /// The events kept, oldest first (resumable streams only).
    kept: VecDeque<Kept>,
    /// What `kept` counts for against [`REPLAY_BYTES`].
    bytes: usize,
    /// The number of the last event forgotten, if any was.
    forgot: Option<u64>,
    /// Where its events go to its client, while one reads (or may read) it.
    sender: Option<Sender>,
    /// The requests it answers still unanswered (their ids as the server knows them).
    unanswered: Vec<String>,
    /// No more events: every request answered, the server gone, or the stream forgotten.
    over: bool,
}

impl State {
    /// Whether a client reads the stream now.
    fn reading(&self) -> bool {
        self.sender
            .as_ref()
            .is_some_and(|sender| !sender.is_closed())
    }
}

/// What the error in place of a forgotten answer says.
const FORGOTTEN_WORDS: &str = "its answer was forgotten before the client resumed its stream";

impl Stream {
    /// A response carrying `carries`, numbered `number` in its session, that ends once every
    /// request of `unanswered` is answered (none: at once, after what is put on it, but for a
    /// GET stream); and its receiving end, for the response's body.
    pub(super) fn new(
        number: u64,
        carries: Carries,
        unanswered: Vec<String>,
    ) -> (Stream, Receiver) {
        let (sender, receiver) = queue();
        let stream = Stream {
            number,
            carries,
            state: Mutex::new(State {
                sender: Some(sender),
                unanswered,
                ..State::default()
            }),
        };
        (stream, receiver)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether it is a session's GET stream.
    pub(super) fn listens(&self) -> bool {
        self.carries == Carries::Resumable { listens: true }
    }

    fn resumable(&self) -> bool {
        matches!(self.carries, Carries::Resumable { .. })
    }

    /// The id of its event `at`.
    fn id(&self, at: u64) -> String {
        format!("{}-{at}", self.number)
    }

    /// Whether it is an event stream (not a JSON body).
    pub(super) fn events(&self) -> bool {
        self.carries != Carries::Json
    }

    /// Whether a client reads it now.
    pub(super) fn reading(&self) -> bool {
        self.state().reading()
    }

    /// Whether a message may still go to it: it is not over, and its client is still there or
    /// may come back for it (a resumable stream).
    pub(super) fn alive(&self) -> bool {
        let state = self.state();
        !state.over && (self.resumable() || state.reading())
    }

    /// The requests it answers still unanswered.
    pub(super) fn unanswered(&self) -> Vec<String> {
        self.state().unanswered.clone()
    }

    /// Starts it with a priming event (an id, no data), after which its client can resume it.
    pub(super) fn prime(&self) {
        if !self.resumable() {
            return;
        }
        let mut state = self.state();
        let at = state.next;
        state.next += 1;
        let event = Bytes::from(priming_event(&self.id(at), RESUME_AFTER_MS));
        if let Some(sender) = &state.sender {
            sender.put(event.clone());
        }
        let kind = Held::Other;
        self.keep(&mut state, Kept { at, event, kind });
    }

    /// Puts one of the proxy's own messages on it (an answer of its own, an error), which
    /// never waits for room.
    pub(super) fn put(&self, routed: Routed) {
        let _ = self.take(routed, true, |sender, item| {
            sender.put(item);
            Ok(())
        });
    }

    /// Sends one of the server's messages to it, waiting while its client has no room for it
    /// (for `patience` at most, when there is one). `bound`: the message goes nowhere else, so
    /// a resumable stream keeps it for its client's return when no client reads it now. Given
    /// back when the stream takes no more, or (not resumable) its client has gone.
    pub(super) fn send(
        &self,
        routed: Routed,
        patience: Option<Duration>,
        bound: bool,
    ) -> Result<(), Returned> {
        self.take(routed, bound, |sender, item| sender.send(item, patience))
    }

    /// Takes `routed` onto the stream, as an event (with an id, kept, when resumable) or a
    /// JSON message, and hands it to its client through `deliver`.
    fn take(
        &self,
        routed: Routed,
        bound: bool,
        deliver: impl FnOnce(&Sender, Bytes) -> Result<(), Unsent>,
    ) -> Result<(), Returned> {
        let back = |message| Returned {
            message,
            stalled: false,
        };
        let mut state = self.state();
        if state.over || !(state.reading() || (bound && self.resumable())) {
            return Err(back(routed.message));
        }
        let answers = routed.answers.as_deref();
        if let Some(id) = answers {
            state.unanswered.retain(|waiting| waiting != id);
        }
        let ends = answers.is_some() && state.unanswered.is_empty() && !self.listens();
        state.over |= ends;
        let sender = if ends {
            state.sender.take()
        } else {
            state.sender.clone()
        };
        let (item, raw) = match self.carries {
            Carries::Json => (Bytes::from(routed.message), None),
            Carries::Events => (message_event(&routed.message).into(), Some(routed.message)),
            Carries::Resumable { .. } => {
                let at = state.next;
                state.next += 1;
                let event = Bytes::from(identified_event(Some(&self.id(at)), &routed.message));
                let kind = answers
                    .and_then(|_| client_id(&routed.message))
                    .map_or(Held::Other, Held::Answer);
                let kept = Kept {
                    at,
                    event: event.clone(),
                    kind,
                };
                self.keep(&mut state, kept);
                (event, None)
            }
        };
        drop(state);
        let Some(sender) = sender.filter(|sender| !sender.is_closed()) else {
            // Kept for the client's return, or (not resumable) for no one: an answer is
            // `bound`, and goes nowhere else.
            return Ok(());
        };
        match deliver(&sender, item) {
            Ok(()) => Ok(()),
            // Kept: a resumption replays it.
            Err(_) if self.resumable() => Ok(()),
            Err(unsent) => {
                let (item, stalled) = match unsent {
                    Unsent::Closed(item) => (item, false),
                    Unsent::Stalled(item) => (item, true),
                };
                let message = raw.unwrap_or_else(|| Vec::from(item));
                Err(Returned { message, stalled })
            }
        }
    }

    /// Keeps `kept` in `state`, forgetting the oldest events past [`REPLAY_BYTES`] (but the
    /// newest), an answer's replaced by an error for its request.
    fn keep(&self, state: &mut State, kept: Kept) {
        state.bytes += kept.cost();
        state.kept.push_back(kept);
        let mut at = 0;
        while state.bytes > REPLAY_BYTES && at + 1 < state.kept.len() {
            let old = &mut state.kept[at];
            state.bytes -= old.cost();
            match std::mem::replace(&mut old.kind, Held::InPlace) {
                Held::Answer(id) => {
                    old.event = self.forgotten(old.at, &id).into();
                    state.bytes += old.cost();
                    at += 1;
                }
                Held::InPlace => {
                    state.bytes += old.cost();
                    at += 1;
                }
                Held::Other => {
                    state.forgot = Some(state.forgot.unwrap_or(0).max(old.at));
                    state.kept.remove(at);
                }
            }
        }
    }

    /// The event in place of the answer (its event `at`) to the request `id`, forgotten.
    fn forgotten(&self, at: u64, id: &RawValue) -> Vec<u8> {
        let why = format!(
            "fence mcp: {FORGOTTEN_WORDS} (more than {REPLAY_BYTES} bytes of events came after it \
             on the stream); send the request again"
        );
        identified_event(Some(&self.id(at)), &error_reply(id, FORGOTTEN, &why))
    }

    /// A new client's reading of the stream, resumed after its event `after`: the events kept
    /// after it, then the rest of the stream as it comes (nothing more once it is over); the
    /// client reading it before, if one still does, reads no more. Whether events after
    /// `after` were forgotten (past [`REPLAY_BYTES`]), which the client then misses.
    pub(super) fn resume(&self, after: u64) -> (Receiver, bool) {
        let (sender, receiver) = queue();
        let mut state = self.state();
        for kept in state.kept.iter().filter(|kept| kept.at > after) {
            sender.put(kept.event.clone());
        }
        let missed = state.forgot.is_some_and(|forgot| forgot > after);
        if let Some(before) = state.sender.take() {
            before.close();
        }
        if !state.over {
            state.sender = Some(sender);
        }
        (receiver, missed)
    }

    /// Stops its client's reading, the stream going on (it can resume it): for a GET stream
    /// another has taken the place of.
    pub(super) fn detach(&self) {
        if let Some(sender) = &self.state().sender {
            sender.close();
        }
    }

    /// Ends the stream: no more events, and its client, once it has read what waits, reads its
    /// end. What it kept stays, for a client that resumes it.
    pub(super) fn finish(&self) {
        let mut state = self.state();
        state.over = true;
        state.sender = None;
    }

    /// Ends the stream as [`Stream::finish`] does, and closes its response, so that a client
    /// that does not read holds up no one: for a session that ends.
    pub(super) fn close(&self) {
        let mut state = self.state();
        state.over = true;
        if let Some(sender) = state.sender.take() {
            sender.close();
        }
    }

    /// Forgets the stream: its events, and any to come.
    fn forget(&self) {
        let mut state = self.state();
        state.over = true;
        state.sender = None;
        state.kept.clear();
        state.bytes = 0;
    }
}

/// The id of an answer, as its client wrote it (exact JSON).
fn client_id(message: &[u8]) -> Option<Box<RawValue>> {
    let text = std::str::from_utf8(message).ok()?;
    let raw: &RawValue = serde_json::from_str(text).ok()?;
    Some(crate::json::Members::of(raw)?.one("id").ok()??.to_owned())
}

/// A session's resumable streams, the last [`REPLAY_STREAMS`].
#[derive(Debug, Default)]
pub(super) struct Streams {
    /// The number of the next stream.
    next: u64,
    kept: VecDeque<Arc<Stream>>,
}

impl Streams {
    /// A new stream of the session carrying `carries` (see [`Stream::new`]); a resumable one is
    /// kept, forgetting the oldest no client reads past [`REPLAY_STREAMS`].
    pub(super) fn open(
        &mut self,
        carries: Carries,
        unanswered: Vec<String>,
    ) -> (Arc<Stream>, Receiver) {
        if !matches!(carries, Carries::Resumable { .. }) {
            let (stream, receiver) = Stream::new(0, carries, unanswered);
            return (Arc::new(stream), receiver);
        }
        self.next += 1;
        let (stream, receiver) = Stream::new(self.next, carries, unanswered);
        let stream = Arc::new(stream);
        self.kept.push_back(stream.clone());
        while self.kept.len() > REPLAY_STREAMS {
            let Some(oldest) = self.kept.iter().position(|stream| !stream.reading()) else {
                break;
            };
            if let Some(forgotten) = self.kept.remove(oldest) {
                forgotten.forget();
            }
        }
        (stream, receiver)
    }

    /// The stream an event id of this session names, and the event's number on it; `None` for
    /// a stream forgotten, or an id the proxy never gave.
    pub(super) fn find(&self, id: &str) -> Option<(Arc<Stream>, u64)> {
        let (number, at) = id.split_once('-')?;
        let digits =
            |text: &str| !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit());
        if !(digits(number) && digits(at)) {
            return None;
        }
        let (number, at) = (number.parse::<u64>().ok()?, at.parse::<u64>().ok()?);
        let stream = self.kept.iter().find(|stream| stream.number == number)?;
        Some((stream.clone(), at))
    }

    /// Every stream kept, to end them all.
    pub(super) fn all(&self) -> impl Iterator<Item = &Arc<Stream>> {
        self.kept.iter()
    }
}

#[cfg(test)]
mod tests;
