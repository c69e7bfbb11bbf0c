//! Where each message of a session's server goes: the response of the POST whose request it
//! answers, the stream of the request it reports progress on or the subscription it belongs
//! to, the session's GET stream, a POST stream still open, or the backlog the next GET stream
//! begins with.

use std::collections::{HashMap, VecDeque};

use tokio::sync::mpsc;

use crate::json::Members;
use crate::wire::message::{
    Replaced, progress_token, subscription_id, with_id, with_progress_token,
};

/// Messages of the server's own kept for a GET stream that is not open yet.
pub(super) const BACKLOG: usize = 1000;

#[derive(Default)]
pub(super) struct Routes {
    /// Where the answer to each waiting request goes, by its id's exact JSON (as the server
    /// knows it).
    pub(super) waiting: HashMap<String, Route>,
    /// The session's GET stream, when open.
    pub(super) listener: Option<mpsc::Sender<Routed>>,
    pub(super) backlog: VecDeque<Vec<u8>>,
    /// The server closed its output.
    pub(super) gone: bool,
}

/// The response a request's answer goes back on.
pub(super) struct Route {
    pub(super) sender: mpsc::Sender<Routed>,
    /// Whether it is an event stream, which may carry the server's other messages too.
    pub(super) stream: bool,
    /// What the client wrote, when the proxy gave the request an id of its own.
    pub(super) original: Option<Replaced>,
}

/// A message on its way to a POST's response.
pub(super) struct Routed {
    /// The id (as the server knows it) of the request it answers, if it is an answer.
    pub(super) answers: Option<String>,
    pub(super) message: Vec<u8>,
}

impl Routed {
    /// A message that answers none of the POST's requests.
    pub(super) fn other(message: Vec<u8>) -> Routed {
        Routed {
            answers: None,
            message,
        }
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
    /// The backlog the next GET stream begins with.
    Backlog,
}

impl Routes {
    /// Where `message` goes next, from `hop` on: the stream, the message as it goes there, and
    /// whether it is the only place it may go (a closed stream then drops it); `None` once it
    /// is delivered (to the backlog) or dropped.
    pub(super) fn next(
        &mut self,
        hop: &mut Hop,
        message: Vec<u8>,
    ) -> Option<(mpsc::Sender<Routed>, Routed, bool)> {
        if *hop == Hop::Answer {
            *hop = Hop::Subscription;
            if let Some(id) = answer_id(&message) {
                if let Some(route) = self.waiting.remove(&id) {
                    let message = match &route.original {
                        Some(original) => with_id(&message, &original.id).unwrap_or(message),
                        None => message,
                    };
                    let answers = Some(id);
                    return Some((route.sender, Routed { answers, message }, true));
                }
            }
            // A stateless request's progress goes on its own stream with its client's token,
            // and never to another client's stream (there is no other on which it is the
            // client's).
            let progress = progress_token(&message).and_then(|token| {
                let route = self.waiting.get(&token)?;
                Some((route, route.original.as_ref()?.token.as_deref()?))
            });
            if let Some((route, token)) = progress {
                if !route.stream {
                    return None;
                }
                let message = with_progress_token(&message, token).unwrap_or(message);
                return Some((route.sender.clone(), Routed::other(message), true));
            }
        }
        if *hop == Hop::Subscription {
            *hop = Hop::Listener;
            if let Some(route) = subscription_id(&message).and_then(|id| self.waiting.get(&id)) {
                let message = match &route.original {
                    Some(original) => with_id(&message, &original.id).unwrap_or(message),
                    None => message,
                };
                return Some((route.sender.clone(), Routed::other(message), false));
            }
        }
        if *hop == Hop::Listener {
            *hop = Hop::Open;
            if let Some(listener) = self
                .listener
                .as_ref()
                .filter(|listener| !listener.is_closed())
            {
                return Some((listener.clone(), Routed::other(message), false));
            }
            self.listener = None;
        }
        self.listener = self
            .listener
            .take()
            .filter(|listener| !listener.is_closed());
        self.waiting.retain(|_, route| !route.sender.is_closed());
        if *hop == Hop::Open {
            if let Some(route) = self.waiting.values().find(|route| route.stream) {
                let sender = route.sender.clone();
                *hop = Hop::Backlog;
                return Some((sender, Routed::other(message), false));
            }
        }
        if self.backlog.len() == BACKLOG {
            self.backlog.pop_front();
        }
        self.backlog.push_back(message);
        None
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
