//! Where each message of a session's server goes: the response of the POST whose request it
//! answers, the stream of the request it reports progress on or the subscription it belongs
//! to, the session's GET stream, a POST stream still open, or the backlog the next GET stream
//! begins with.
//!
//! The stateless server's clients share it, so what names a request of one of them goes to
//! that request's response or nowhere: an answer, progress or a subscription's notification
//! naming no request the proxy gave that id or token to (still waiting) is dropped, and stderr
//! says so.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use super::stateless::{Named, Replaced, progress_named, subscription_named};
use super::stream::{Routed, Stream, Streams};
use crate::json::Members;
use crate::said::shown;
use crate::wire::message::{with_id, with_progress_token};

/// How many of the server's own messages are kept for a GET stream that is not open yet.
pub(crate) const BACKLOG: usize = 1000;

/// How many bytes of them are kept; past either bound, the oldest is dropped (the newest is
/// kept, however large).
pub(crate) const BACKLOG_BYTES: usize = 1 << 20;

/// The routes of one server's messages.
#[derive(Debug)]
pub(super) struct Routes {
    /// Where the answer to each waiting request goes, by its id's exact JSON (as the server
    /// knows it).
    pub(super) waiting: HashMap<String, Route>,
    /// The session's GET stream, when open.
    pub(super) listener: Option<Arc<Stream>>,
    /// The session's resumable streams.
    pub(super) streams: Streams,
    backlog: VecDeque<Vec<u8>>,
    /// The bytes of `backlog`.
    backlogged: usize,
    /// The server closed its output.
    pub(super) gone: bool,
    /// The stateless server, which many clients share.
    stateless: bool,
}

/// The response a request's answer goes back on.
#[derive(Debug)]
pub(super) struct Route {
    /// The response; an event stream may carry the server's other messages too.
    pub(super) stream: Arc<Stream>,
    /// What the client wrote, when the proxy gave the request an id of its own.
    pub(super) original: Option<Replaced>,
}

/// What routing reads of one server message, once: the request it answers, the progress token
/// and the subscription it names.
#[derive(Debug)]
pub(super) struct Heading {
    answers: Option<String>,
    progress: Named,
    subscription: Named,
}

impl Heading {
    /// Reads `message` (one message, which the session has read as JSON-RPC).
    pub(super) fn read(message: &[u8]) -> Heading {
        let mut heading = Heading {
            answers: None,
            progress: Named::Nothing,
            subscription: Named::Nothing,
        };
        let members = std::str::from_utf8(message)
            .ok()
            .and_then(|text| serde_json::from_str::<Members<'_>>(text).ok());
        let Some(members) = members else {
            return heading;
        };
        if members.one("method").is_ok_and(|method| method.is_none()) {
            heading.answers = members
                .one("id")
                .ok()
                .flatten()
                .map(|id| id.get().to_owned());
        }
        heading.progress = progress_named(&members);
        heading.subscription = subscription_named(&members);
        heading
    }
}

/// Where a message of the server's is being routed: each [`Routes::next`] tries one, and a
/// stream found closed sends it to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Hop {
    /// An answer to a waiting request, or a stateless request's progress.
    Answer,
    /// A 2026-07-28 subscription's notification, on its `subscriptions/listen` stream.
    Subscription,
    /// The session's GET stream.
    Listener,
    /// A POST stream still open.
    Open,
}

/// Where a message goes next.
#[derive(Debug)]
pub(super) enum Next {
    /// To this stream, as this; the `bool` says whether it is the only place it may go (a
    /// stream that does not take it then drops it).
    To(Arc<Stream>, Routed, bool),
    /// Nowhere more: it is in the backlog, or has nowhere to go (progress for a request
    /// answered as JSON).
    Done,
    /// Dropped, and stderr says this.
    Dropped(String),
}

impl Routes {
    /// The routes of a new server's messages; `stateless` for the server the stateless
    /// requests of every client share.
    pub(super) fn new(stateless: bool) -> Routes {
        Routes {
            waiting: HashMap::new(),
            listener: None,
            streams: Streams::default(),
            backlog: VecDeque::new(),
            backlogged: 0,
            gone: false,
            stateless,
        }
    }

    /// Where `message`, read as `heading`, goes next, from `hop` on.
    pub(super) fn next(&mut self, hop: &mut Hop, heading: &Heading, mut message: Vec<u8>) -> Next {
        if *hop == Hop::Answer {
            *hop = Hop::Subscription;
            message = match self.answer_or_progress(heading, message) {
                Ok(next) => return next,
                Err(message) => message,
            };
        }
        if *hop == Hop::Subscription {
            *hop = Hop::Listener;
            match &heading.subscription {
                Named::This(id) => {
                    let stateless = self.stateless;
                    let route = self.waiting.get(id).filter(|route| {
                        !stateless
                            || route
                                .original
                                .as_ref()
                                .is_some_and(|original| original.listens)
                    });
                    if let Some(route) = route {
                        let message = restored(route, message);
                        return Next::To(route.stream.clone(), Routed::other(message), stateless);
                    }
                    if stateless {
                        return Next::Dropped(format!(
                            "dropped a notification for the subscription {}, which no stateless \
                             subscriptions/listen still open was given",
                            shown(id)
                        ));
                    }
                }
                Named::Unreadable(why) if self.stateless => {
                    return Next::Dropped(format!(
                        "dropped a notification whose subscription cannot be read: {why}"
                    ));
                }
                Named::Unreadable(_) | Named::Nothing => {}
            }
        }
        if *hop == Hop::Listener {
            *hop = Hop::Open;
            if let Some(listener) = self.listener.as_ref().filter(|listener| listener.reading()) {
                return Next::To(listener.clone(), Routed::other(message), false);
            }
            self.listener = None;
        }
        self.waiting.retain(|_, route| route.stream.alive());
        if *hop == Hop::Open {
            let open = self
                .waiting
                .values()
                .find(|route| route.stream.events() && route.stream.reading());
            if let Some(route) = open {
                // Once: should this stream close too, the message waits in the backlog.
                return Next::To(route.stream.clone(), Routed::other(message), false);
            }
        }
        self.keep(message);
        Next::Done
    }

    /// Where an answer goes (its request's response), and, on the stateless server, progress
    /// (its request's stream, or nowhere); the message back when it is neither.
    fn answer_or_progress(&mut self, heading: &Heading, message: Vec<u8>) -> Result<Next, Vec<u8>> {
        if let Some(id) = &heading.answers {
            if let Some(route) = self.waiting.remove(id) {
                let message = restored(&route, message);
                let answers = Some(id.clone());
                return Ok(Next::To(route.stream, Routed { answers, message }, true));
            }
            if self.stateless {
                return Ok(Next::Dropped(format!(
                    "dropped an answer to the request {}, whose client no longer waits for it",
                    shown(id)
                )));
            }
        }
        if !self.stateless {
            return Err(message);
        }
        let token = match &heading.progress {
            Named::Nothing => return Err(message),
            Named::This(token) => token,
            Named::Unreadable(why) => {
                return Ok(Next::Dropped(format!(
                    "dropped a notifications/progress whose token cannot be read: {why}"
                )));
            }
        };
        let given = self
            .waiting
            .get(token)
            .and_then(|route| Some((route, route.original.as_ref()?.token.as_deref()?)));
        let Some((route, original)) = given else {
            return Ok(Next::Dropped(format!(
                "dropped a notifications/progress whose token {} the proxy gave no request still \
                 waiting (on the stateless server, progress goes to the request it was given \
                 for, or nowhere)",
                shown(token)
            )));
        };
        if !route.stream.events() {
            // A client that takes JSON answers has nowhere to see progress.
            return Ok(Next::Done);
        }
        let message = with_progress_token(&message, original).unwrap_or(message);
        Ok(Next::To(route.stream.clone(), Routed::other(message), true))
    }

    /// Keeps one of the server's own messages for the next GET stream, dropping the oldest past
    /// [`BACKLOG`] messages or [`BACKLOG_BYTES`].
    fn keep(&mut self, message: Vec<u8>) {
        self.backlogged += message.len();
        self.backlog.push_back(message);
        while self.backlog.len() > 1
            && (self.backlog.len() > BACKLOG || self.backlogged > BACKLOG_BYTES)
        {
            if let Some(oldest) = self.backlog.pop_front() {
                self.backlogged -= oldest.len();
            }
        }
    }

    /// The messages kept for the GET stream that opens now, which they go to first.
    fn take_backlog(&mut self) -> Vec<Vec<u8>> {
        self.backlogged = 0;
        self.backlog.drain(..).collect()
    }

    /// Makes `stream` the session's GET stream, the server's messages kept for one put on it
    /// first; the client of the GET stream before it reads no more (it can resume it).
    pub(super) fn listen_on(&mut self, stream: &Arc<Stream>) {
        if let Some(before) = self.listener.replace(stream.clone()) {
            if !Arc::ptr_eq(&before, stream) {
                before.detach();
            }
        }
        for message in self.take_backlog() {
            stream.put(Routed::other(message));
        }
    }

    /// Whether a client still waits on any of the session's responses: its GET stream, or a
    /// request's answer.
    pub(super) fn open(&self) -> bool {
        self.listener
            .as_ref()
            .is_some_and(|listener| listener.reading())
            || self.waiting.values().any(|route| route.stream.reading())
    }

    /// Closes every response of the session, for a session that ends: a client that does not
    /// read no longer holds up the thread reading the server.
    pub(super) fn close_all(&mut self) {
        for route in self.waiting.values() {
            route.stream.close();
        }
        for stream in self.listener.iter().chain(self.streams.all()) {
            stream.close();
        }
        self.waiting.clear();
        self.listener = None;
    }

    /// Ends every response of the session, for a server that has gone: each client reads what
    /// waits for it, then its stream's end; what was kept stays for a client that resumes.
    pub(super) fn finish_all(&mut self) {
        for route in self.waiting.values() {
            route.stream.finish();
        }
        for stream in self.listener.iter().chain(self.streams.all()) {
            stream.finish();
        }
        self.waiting.clear();
        self.listener = None;
    }
}

/// `message` with the id its client wrote back in place of the proxy's, where the proxy gave
/// the request one.
fn restored(route: &Route, message: Vec<u8>) -> Vec<u8> {
    match &route.original {
        Some(original) => with_id(&message, &original.id).unwrap_or(message),
        None => message,
    }
}

/// The id of an answer (a message with an `id` and no `method`), as its exact JSON.
pub(super) fn answer_id(message: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(message).ok()?;
    let raw: &serde_json::value::RawValue = serde_json::from_str(text).ok()?;
    let members = Members::of(raw)?;
    if members.one("method").ok()?.is_some() {
        return None;
    }
    Some(members.one("id").ok()??.get().to_owned())
}
