//! An event stream from the upstream, relayed to the client event by event.

use std::future::Future;
use std::sync::Arc;
use std::task::Poll;

use bytes::Bytes;
use http::{HeaderMap, Method};

use super::{DRAIN_PATIENCE, FIRST_CHUNKS, abandoned, session_headers};
use crate::engine::{Deliver, deliver, report};
use crate::front::http::{Body, pieces_body, streamed_after};
use crate::gate::{self, Passage};
use crate::session::Session;
use crate::upstream::url::{Aside, Remote, error_chain};
use crate::wire::message::Sent;
use crate::wire::sse::{Event, Framed, Framer, message_event};

/// `future`'s output when it is ready now, or once the tasks it waits on have run (a few turns
/// of the runtime, which also reads what the sockets already hold); `None` when it waits on the
/// network.
async fn soon<F: Future>(future: F) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    for _ in 0..3 {
        let polled =
            std::future::poll_fn(|context| Poll::Ready(future.as_mut().poll(context))).await;
        if let Poll::Ready(output) = polled {
            return Some(output);
        }
        tokio::task::yield_now().await;
    }
    None
}

/// Where one event's outcome goes: its pieces for the client, in order, and the replies for
/// the upstream. The proxy writes every event again from the fields it read (see
/// [`crate::wire::sse`]), so no quirk of the upstream's framing reaches a client.
struct Events<'a, 'e> {
    event: &'a Event<'e>,
    pieces: Vec<Bytes>,
    replies: &'a mut Vec<Vec<u8>>,
}

impl Deliver for Events<'_, '_> {
    fn as_it_came(&mut self) -> bool {
        // Its fields written again as the proxy read them, its data included.
        let message = self.event.message().unwrap_or_default().to_vec();
        self.pieces.extend(self.event.rewritten_around(message));
        true
    }

    fn rewritten(&mut self, message: Vec<u8>) -> bool {
        self.pieces.extend(self.event.rewritten_around(message));
        true
    }

    fn onward(&mut self, message: Vec<u8>) -> bool {
        self.pieces.push(message_event(&message).into());
        true
    }

    fn back(&mut self, message: Vec<u8>) {
        self.replies.push(message);
    }

    fn nothing(&mut self) {
        // The event without its data: a client dispatches nothing, yet still takes its id.
        self.pieces.push(self.event.rewritten(None).into());
    }
}

/// Where a relayed stream is, after a chunk of it.
enum Step {
    /// More is to come.
    More,
    /// Every request of the POST is answered: the stream is over for the client (a server ends
    /// it there), whenever the upstream's own end arrives.
    Answered,
    /// The upstream's stream ended or broke off.
    Ended,
}

/// An event stream from the upstream, relayed to the client event by event: each `message`
/// event's data through the session, every event written again as a client reads it. When the stream
/// ends without an event id to resume it by, each request of `sent` still waiting gets its
/// error as an event of the proxy's own.
pub(super) struct Relay {
    response: reqwest::Response,
    session: Arc<Session>,
    remote: Arc<Remote>,
    aside: Arc<Aside>,
    /// The headers of a message of the proxy's own to the upstream.
    headers: HeaderMap,
    sent: Sent,
    limit: usize,
    framer: Framer,
    /// Whether an event named an id, by which the client may resume the stream.
    resumable: bool,
    /// The proxy's own answers to the upstream's requests in the stream, to be sent.
    replies: Vec<Vec<u8>>,
    /// The streams being read apart once answered.
    drains: Arc<tokio::sync::Semaphore>,
}

impl Relay {
    /// A relay of `response`, the upstream's stream answering `sent` (nothing, for a GET).
    pub(super) fn new(
        response: reqwest::Response,
        session: Arc<Session>,
        remote: Arc<Remote>,
        aside: Arc<Aside>,
        sent: Sent,
        limit: usize,
        drains: Arc<tokio::sync::Semaphore>,
    ) -> Relay {
        Relay {
            headers: session_headers(response.headers()),
            response,
            session,
            remote,
            aside,
            sent,
            limit,
            framer: Framer::new(limit),
            resumable: false,
            replies: Vec::new(),
            drains,
        }
    }

    /// The client's body: what the upstream has already sent, which goes to the client with
    /// the head in one write (for a small call, the whole answer), then the rest as it comes,
    /// relayed by a task of its own. `extra` are the proxy's own answers, first.
    pub(super) async fn start(mut self, extra: Vec<Vec<u8>>) -> Body {
        let mut first: Vec<Bytes> = extra
            .iter()
            .map(|message| message_event(message).into())
            .collect();
        let mut step = Step::More;
        for _ in 0..FIRST_CHUNKS {
            let Some(next) = soon(self.response.chunk()).await else {
                break;
            };
            step = self.step(next, &mut first);
            self.reply().await;
            if !matches!(step, Step::More) {
                break;
            }
        }
        match step {
            Step::More => {
                let (pieces, body) = streamed_after(first);
                tokio::spawn(async move { self.run(&pieces).await });
                body
            }
            Step::Answered => {
                self.drain();
                pieces_body(first)
            }
            Step::Ended => pieces_body(first),
        }
    }

    /// The client's pieces of the upstream's next chunk (`None`: its end), added to `out`.
    fn step(&mut self, next: reqwest::Result<Option<Bytes>>, out: &mut Vec<Bytes>) -> Step {
        let mut events = Vec::new();
        let broke = match next {
            Ok(Some(chunk)) => {
                self.framer.feed(&chunk, &mut events);
                for each in events {
                    self.rewrite(each, out);
                }
                let sent = &self.sent.requests;
                if !sent.is_empty() && !sent.iter().any(|id| self.session.waiting(id)) {
                    return Step::Answered;
                }
                return Step::More;
            }
            Ok(None) => None,
            Err(err) => Some(error_chain(&err)),
        };
        if let Some(each) = self.framer.finish() {
            self.rewrite(each, out);
        }
        if !self.resumable {
            let why = match broke {
                Some(why) => format!("the upstream's event stream broke off ({why})"),
                None => "the upstream ended its event stream without answering".to_owned(),
            };
            for error in abandoned(&self.session, &self.sent.requests, &why) {
                out.push(message_event(&error).into());
            }
        }
        Step::Ended
    }

    /// Relays the rest of the stream to `pieces`. It stops when the client goes away, which
    /// drops the upstream's stream too (in 2026-07-28, that cancels the request).
    async fn run(mut self, pieces: &tokio::sync::mpsc::Sender<Bytes>) {
        loop {
            // A client that has gone is noticed at once, not at the upstream's next event.
            let next = tokio::select! {
                next = self.response.chunk() => next,
                () = pieces.closed() => return,
            };
            let mut out = Vec::new();
            let step = self.step(next, &mut out);
            self.reply().await;
            for piece in out {
                if pieces.send(piece).await.is_err() {
                    return;
                }
            }
            match step {
                Step::More => {}
                Step::Answered => return self.drain(),
                Step::Ended => return,
            }
        }
    }

    /// Sends the proxy's own answers to the upstream's requests, each in a POST.
    async fn reply(&mut self) {
        for reply in std::mem::take(&mut self.replies) {
            let request = self.remote.request(Method::POST, &self.headers).body(reply);
            self.aside.send(request).await;
        }
    }

    /// Reads the rest of the upstream's stream apart, so that its connection can be used again:
    /// at once when it is already here (as the end of a small call's stream usually is), else
    /// on a task of its own.
    fn drain(self) {
        let mut response = self.response;
        loop {
            match futures_util::FutureExt::now_or_never(response.chunk()) {
                Some(Ok(Some(_))) => {}
                Some(Ok(None) | Err(_)) => return,
                None => break,
            }
        }
        // At most `MAX_DRAINS` at once: past them, the response is dropped, and with it its
        // connection.
        let Ok(permit) = self.drains.try_acquire_owned() else {
            return;
        };
        tokio::spawn(async move {
            let drain = async { while let Ok(Some(_)) = response.chunk().await {} };
            let _ = tokio::time::timeout(DRAIN_PATIENCE, drain).await;
            drop(permit);
        });
    }

    /// One event of the upstream's stream, as the client receives it, added to `out` in pieces
    /// (a large message is not copied again to be framed).
    fn rewrite(&mut self, framed: Framed, out: &mut Vec<Bytes>) {
        let raw = match framed {
            Framed::Event(raw) => raw,
            Framed::Oversized(size) => {
                report(
                    &self.session,
                    &format!(
                        "dropped an event of {size} bytes from the upstream, over the {}-byte \
                         limit (--max-message-bytes)",
                        self.limit
                    ),
                );
                return;
            }
        };
        let event = Event::read(&raw);
        self.resumable |= event.id().is_some_and(|id| !id.is_empty());
        let outcome = match gate::event(&self.session, &event) {
            Passage::Read(outcome) => outcome,
            Passage::Inert(inert) => {
                if !inert.is_empty() {
                    out.push(inert.into());
                }
                return;
            }
        };
        let mut to = Events {
            event: &event,
            pieces: Vec::new(),
            replies: &mut self.replies,
        };
        deliver(&self.session, outcome, &mut to);
        out.extend(to.pieces.into_iter().filter(|piece| !piece.is_empty()));
    }
}
