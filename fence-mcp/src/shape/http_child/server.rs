//! One server process behind `--listen -- SERVER` and its session: the POSTs and the GET
//! stream of its client (or, for the stateless server, of every stateless client), the thread
//! that reads its output and routes each message, and its end.

use std::io::BufReader;
use std::process::{Child, ChildStdin, ChildStdout};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use http::{HeaderValue, Response, StatusCode};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;

use super::PRIMED_FROM;
use super::queue::Receiver;
use super::routes::{Heading, Hop, Next, Route, Routes, answer_id};
use super::stateless::{Renumbered, fresh_id};
use super::stream::{Carries, REPLAY_BYTES, REPLAY_STREAMS, Routed, Stream};
use crate::engine::{Deliver, Engine, collected, deliver, report};
use crate::front::http::body::BodyError;
use crate::front::http::{Body, empty, json_response, refusal};
use crate::json::elements;
use crate::lines::{Sink, next_outcome};
use crate::options::ChildServer;
use crate::said::shown;
use crate::session::{Session, Side};
use crate::upstream::child::{self, Stage};
use crate::upstream::reaper::Reaper;
use crate::wire::message::{Sent, negotiated, with_id};
use crate::wire::{EVENT_STREAM, joined};

/// How long the stateless server's output waits for one client to read: that server is every
/// stateless client's, and a client that does not read would hold up the others' answers.
pub(crate) const STALL: Duration = Duration::from_secs(10);

/// One server process and its session.
pub(super) struct Server {
    session: Session,
    input: Arc<Sink<ChildStdin>>,
    process: Mutex<Child>,
    reaper: Arc<Mutex<Option<Reaper>>>,
    routes: Mutex<Routes>,
    /// When a request last named the session, or a client last waited on one of its
    /// responses.
    used: Mutex<Instant>,
    /// The stateless era's server: its requests (of many clients, each counting its ids from
    /// the start) get ids of its own, and a client closing a request's stream, or its
    /// connection, cancels the request.
    stateless: bool,
    /// Whether the protocol version the session negotiated (its `initialize` answer's) is one
    /// whose clients read a priming event; unset until that answer passes.
    primed: OnceLock<bool>,
}

impl Server {
    /// Starts a server process for a new session (`stateless`: for the stateless requests of
    /// every client), and the thread that reads its output, taking messages of up to `limit`
    /// bytes.
    pub(super) fn start(
        engine: &Engine,
        server: &ChildServer,
        reaper: &Arc<Mutex<Option<Reaper>>>,
        stateless: bool,
        limit: usize,
    ) -> Result<Arc<Server>, String> {
        let started = {
            let reaping = reaper.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(reaping) = reaping.as_ref() else {
                return Err("the proxy is stopping".to_owned());
            };
            child::start(server, reaping)
        };
        let started = started.map_err(|err| child::cannot_start(server, &err).0)?;
        let output = started.output;
        let server = Arc::new(Server {
            session: if stateless {
                engine.shared_session()
            } else {
                engine.session()
            },
            input: Arc::new(Sink::new(started.input)),
            process: Mutex::new(started.child),
            reaper: reaper.clone(),
            routes: Mutex::new(Routes::new(stateless)),
            used: Mutex::new(Instant::now()),
            stateless,
            primed: OnceLock::new(),
        });
        let reading = server.clone();
        thread::spawn(move || reading.read(output, limit));
        Ok(server)
    }

    /// The routes of the server's messages; never held while a message is sent.
    fn routes(&self) -> MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether a request's stream starts with a priming event: the request names a protocol
    /// version whose clients read one, or the session negotiated one (a client may name an
    /// older version in its header than the one it negotiated; it still reads what it
    /// negotiated).
    pub(super) fn primes(&self, headers: &http::HeaderMap) -> bool {
        super::primes(headers) || self.primed.get() == Some(&true)
    }

    /// The session, whose voice the proxy speaks of it with.
    pub(super) fn session(&self) -> &Session {
        &self.session
    }

    /// Whether the server has closed its output (it exited, or crashed).
    pub(super) fn gone(&self) -> bool {
        self.routes().gone
    }

    /// A request names the session now.
    pub(super) fn touch(&self) {
        *self.used.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
    }

    /// Whether, at `now`, the session has had no request and no client waiting on any of its
    /// responses for `idle`.
    pub(super) fn idle(&self, idle: Duration, now: Instant) -> bool {
        let open = self.routes().open();
        let mut used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        if open {
            *used = now;
        }
        now.saturating_duration_since(*used) >= idle
    }

    /// One POST's body: through the session, to the server; its answers on the response (an
    /// event stream when `streams`, resumable in a session, starting with a priming event when
    /// `primes`; else JSON).
    pub(super) async fn post(&self, body: &[u8], streams: bool, primes: bool) -> Response<Body> {
        let renumbered = self.stateless.then(|| Renumbered::new(body, fresh_id));
        let mut first = Vec::new();
        let body = match &renumbered {
            Some(renumbered) => {
                for note in &renumbered.notes {
                    report(&self.session, note);
                }
                first.extend(renumbered.refused.iter().cloned());
                renumbered.body.as_deref()
            }
            None => Some(body),
        };
        let original = |id: &str| renumbered.as_ref()?.replaced(id).cloned();
        // The proxy's own answers, to the clients' ids.
        let restored = |message: Vec<u8>| {
            answer_id(&message)
                .and_then(|id| original(&id))
                .and_then(|original| with_id(&message, &original.id))
                .unwrap_or(message)
        };
        let mut replies = Vec::new();
        let mut onward = None;
        if let Some(body) = body {
            let outcome = self.session.client_line(body);
            let on = collected(&self.session, outcome, body, |reply| replies.push(reply));
            onward = (!on.is_empty()).then(|| joined(on));
        }
        first.extend(replies.into_iter().map(restored));
        let sent = onward.as_deref().map(Sent::read).unwrap_or_default();
        if sent.requests.is_empty() && first.is_empty() {
            if let Some(message) = onward.as_mut() {
                self.input.send(message);
            }
            return empty(StatusCode::ACCEPTED);
        }
        let carries = match (streams, self.stateless) {
            (false, _) => Carries::Json,
            (true, true) => Carries::Events,
            (true, false) => Carries::Resumable { listens: false },
        };
        let unanswered = sent.requests.iter().map(|id| id.get().to_owned());
        let (stream, answered) = {
            let mut routes = self.routes();
            let (stream, answered) = routes.streams.open(carries, unanswered.collect());
            for id in &sent.requests {
                let route = Route {
                    stream: stream.clone(),
                    original: original(id.get()),
                };
                routes.waiting.insert(id.get().to_owned(), route);
            }
            (stream, answered)
        };
        if primes {
            stream.prime();
        }
        for message in first {
            stream.put(Routed::other(message));
        }
        if let Some(message) = onward.as_mut() {
            if !self.input.send(message) {
                let why = format!(
                    "{} has exited; the session is over: initialize a new one",
                    self.session.name()
                );
                for id in &sent.requests {
                    if let Some(error) = self.session.abandon(id, &why) {
                        let answers = Some(id.get().to_owned());
                        let message = restored(error);
                        stream.put(Routed { answers, message });
                    }
                }
                self.routes()
                    .waiting
                    .retain(|_, route| route.stream.alive());
            }
        }
        if sent.requests.is_empty() {
            stream.finish();
        }
        let cancels = self.stateless.then(|| self.input.clone());
        if !streams {
            let _waiting = Waiting {
                stream,
                cancels: cancels.map(|input| (input, "the client closed its connection")),
            };
            let mut answered = answered;
            let mut messages = Vec::new();
            while let Some(message) = answered.recv().await {
                messages.push(Vec::from(message));
            }
            return json_response(StatusCode::OK, joined(messages));
        }
        let waiting = Waiting {
            stream,
            cancels: cancels.map(|input| (input, "the client closed its stream")),
        };
        event_stream(answered, Some(waiting))
    }

    /// A new GET stream of the session: the server's own messages, from the backlog on,
    /// after a priming event when `primes`. It takes the place of the GET stream before it,
    /// whose client reads no more (it can resume it).
    pub(super) fn listen(&self, primes: bool) -> Response<Body> {
        let mut routes = self.routes();
        let (stream, received) = routes
            .streams
            .open(Carries::Resumable { listens: true }, Vec::new());
        if primes {
            stream.prime();
        }
        routes.listen_on(&stream);
        event_stream(received, None)
    }

    /// A stream of the session resumed after the event `last` (a `Last-Event-ID`): the events
    /// it kept after that one, then the rest of it (a GET stream becomes the session's GET
    /// stream again). 400 for an id that names no stream the session keeps.
    pub(super) fn resume(&self, last: &str) -> Response<Body> {
        let mut routes = self.routes();
        let Some((stream, after)) = routes.streams.find(last) else {
            drop(routes);
            let why = format!(
                "the Last-Event-ID {} names no stream this session keeps (it keeps its last \
                 {REPLAY_STREAMS}): its events cannot be sent again; send its requests again",
                shown(last)
            );
            report(&self.session, &why);
            return refusal(StatusCode::BAD_REQUEST, -32000, &why);
        };
        let (received, missed) = stream.resume(after);
        if stream.listens() {
            routes.listen_on(&stream);
        }
        drop(routes);
        if missed {
            report(
                &self.session,
                &format!(
                    "resumed a stream after {}, some of whose later events were forgotten \
                     (past {REPLAY_BYTES} bytes of events): its client misses them (an answer \
                     among them is an error for its request)",
                    shown(last)
                ),
            );
        }
        event_stream(received, None)
    }

    /// Reads the server's output until it ends, routing each message.
    fn read(&self, output: ChildStdout, limit: usize) {
        let mut reader = BufReader::with_capacity(1 << 16, output);
        let mut line = Vec::new();
        while let Some(outcome) =
            next_outcome(&self.session, limit, Side::Upstream, &mut reader, &mut line)
        {
            let mut to = Routing {
                server: self,
                line: &line,
            };
            deliver(&self.session, outcome, &mut to);
        }
        for error in self.session.upstream_gone() {
            self.route(error);
        }
        let mut routes = self.routes();
        routes.gone = true;
        routes.finish_all();
    }

    /// Sends the server's message, or each of a batch of them, to where it belongs.
    fn route(&self, message: Vec<u8>) {
        let batch = message
            .iter()
            .find(|byte| !byte.is_ascii_whitespace())
            .is_some_and(|byte| *byte == b'[');
        if !batch {
            return self.route_one(message);
        }
        let each: Vec<Vec<u8>> = std::str::from_utf8(&message)
            .ok()
            .and_then(|text| serde_json::from_str::<&serde_json::value::RawValue>(text).ok())
            .and_then(elements)
            .map(|all| {
                all.iter()
                    .map(|one| one.get().as_bytes().to_vec())
                    .collect()
            })
            .unwrap_or_default();
        for one in each {
            self.route_one(one);
        }
    }

    /// Sends one message of the server's to where it belongs, waiting while that response's
    /// queue is full (never with the routes held): on the stateless server, which every
    /// stateless client shares, for [`STALL`] at most, then that response is closed.
    fn route_one(&self, mut message: Vec<u8>) {
        if self.primed.get().is_none() && !self.stateless {
            // Read until the session's `initialize` is answered, its first answer.
            if let Some(version) = negotiated(&message) {
                let _ = self.primed.set(version.as_str() >= PRIMED_FROM);
            }
        }
        let heading = Heading::read(&message);
        let patience = self.stateless.then_some(STALL);
        let mut hop = Hop::Answer;
        loop {
            let next = self.routes().next(&mut hop, &heading, message);
            match next {
                Next::To(stream, routed, last) => match stream.send(routed, patience, last) {
                    Ok(()) => return,
                    Err(returned) => {
                        if returned.stalled {
                            report(
                                &self.session,
                                &format!(
                                    "closed a stateless client's response that read nothing for \
                                     {} s while the server every stateless client shares waited \
                                     on it",
                                    STALL.as_secs()
                                ),
                            );
                        }
                        if last {
                            return;
                        }
                        message = returned.message;
                    }
                },
                Next::Done => return,
                Next::Dropped(why) => {
                    report(&self.session, &why);
                    return;
                }
            }
        }
    }

    /// Ends the server: its responses closed, its input closed, then SIGTERM and SIGKILL to its
    /// process group, each after `grace`; it is reaped.
    pub(super) fn end(&self, grace: Duration) {
        self.routes().close_all();
        self.input.close();
        let mut process = self.process.lock().unwrap_or_else(PoisonError::into_inner);
        let wait = |poll| {
            thread::sleep(poll);
            false
        };
        child::end(&mut process, grace, Stage::Wait, wait, |note| {
            report(&self.session, note);
        });
        let reaper = self.reaper.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(reaper) = reaper.as_ref() {
            reaper.forget(process.id());
        }
    }
}

/// A POST's response as its body holds it. On the stateless server, the requests its client
/// stops waiting for (it closes the stream, or the connection, before they are answered) are
/// cancelled when it is dropped: in 2026-07-28 closing the stream is the cancellation.
struct Waiting {
    stream: Arc<Stream>,
    /// The server's input, and the reason a cancellation gives; `None` in a session.
    cancels: Option<(Arc<Sink<ChildStdin>>, &'static str)>,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let Some((input, reason)) = &self.cancels else {
            return;
        };
        for id in self.stream.unanswered() {
            let mut cancel = format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id},"reason":"{reason}"}}}}"#
            )
            .into_bytes();
            input.send(&mut cancel);
        }
    }
}

/// An event stream of what `received` gives, until it ends (a POST's, once every request is
/// answered). The client's going drops the stream, which closes the queue (what the server
/// sends for it then is kept for a resumption, goes elsewhere, or nowhere) and, on the
/// stateless server, cancels what `waiting` still waits for.
fn event_stream(received: Receiver, waiting: Option<Waiting>) -> Response<Body> {
    let stream = futures_util::stream::unfold(
        (received, waiting),
        move |(mut received, waiting)| async move {
            let event = received.recv().await?;
            Some((Ok::<_, BodyError>(Frame::data(event)), (received, waiting)))
        },
    );
    let mut response = Response::new(StreamBody::new(stream).boxed_unsync());
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static(EVENT_STREAM),
    );
    response.headers_mut().insert(
        http::header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache"),
    );
    response
}

/// Where the outcome of one of the server's lines goes: on to its stream, back to the server.
struct Routing<'a> {
    server: &'a Server,
    line: &'a [u8],
}

impl Deliver for Routing<'_> {
    fn as_it_came(&mut self) -> bool {
        self.server.route(self.line.to_vec());
        true
    }

    fn onward(&mut self, message: Vec<u8>) -> bool {
        self.server.route(message);
        true
    }

    fn back(&mut self, mut message: Vec<u8>) {
        self.server.input.send(&mut message);
    }
}
