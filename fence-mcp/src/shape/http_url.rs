//! HTTP front, URL upstream (`fence mcp --listen ADDR --url URL`): a reverse proxy. Every request goes upstream with the client's headers (less the hop-by-hop ones and
//! those the proxy owns: `Host`, `Content-Length`, `Accept-Encoding`, and `--header`'s), and
//! every response comes back with its status and headers; only the JSON-RPC messages in its
//! body are read, each through the session of its `Mcp-Session-Id` (or, with none, a session
//! of its own), and written again where the session says so. An SSE stream is rewritten event
//! by event and flushed per event.

use std::collections::HashMap;
use std::future::Future;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Poll;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::request::Parts;
use http::{HeaderMap, Method, Response, StatusCode};
use hyper::body::Incoming;
use serde_json::value::RawValue;

use crate::engine::{Deliver, Engine, collected, deliver, report};
use crate::front::http::{
    Backend, Body, Listening, empty, full, json_response, pieces_body, read_body, refusal,
    streamed_after,
};
use crate::gate::{self, Head, Passage};
use crate::options::{HttpFront, Options, RemoteServer};
use crate::session::Session;
use crate::upstream::url::{Aside, Remote, Unread, error_chain, read_whole};
use crate::wire::header::SESSION_ID;
use crate::wire::message::Sent;
use crate::wire::sse::{Event, Framed, Framer, message_event};
use crate::wire::{answers, hop_by_hop, joined, posting};

/// Serves the HTTP front in front of the server at a URL until a signal ends the proxy.
pub(crate) async fn serve(options: &Options, front: &HttpFront, server: &RemoteServer) -> ExitCode {
    let engine = match Engine::open(options) {
        Ok(engine) => Arc::new(engine),
        Err(code) => return code,
    };
    let voice = engine.session();
    let remote = match Remote::new(server) {
        Ok(remote) => Arc::new(remote),
        Err(problem) => {
            report(&voice, &problem);
            return ExitCode::from(2);
        }
    };
    let reverse = Arc::new(Reverse::new(engine, remote));
    crate::front::http::serve(front, options.max_message_bytes(), voice, reverse).await
}

/// How many answered streams are read apart at once (so their connections can be used again),
/// and for how long each at most.
const MAX_DRAINS: usize = 64;
const DRAIN_PATIENCE: Duration = Duration::from_secs(30);

/// How many sessions the upstream created are kept at once; past them, the one named least
/// recently is forgotten.
const MAX_SESSIONS: usize = 4096;

/// How many of the upstream's chunks, there already, may go with a stream's head: a stream
/// that never pauses still gets its head at once.
const FIRST_CHUNKS: usize = 16;

/// How long a session no request has named is kept (checked when another is kept).
const IDLE: Duration = Duration::from_secs(60 * 60);

/// A session, and when a request last named it.
type Kept = (Arc<Session>, Instant);

/// The reverse proxy's state: the upstream, and a session per `Mcp-Session-Id` the upstream
/// created.
pub(crate) struct Reverse {
    engine: Arc<Engine>,
    remote: Arc<Remote>,
    sessions: Mutex<HashMap<Vec<u8>, Kept>>,
    /// The proxy's own answers to the upstream's requests, on their way.
    aside: Arc<Aside>,
    /// The answered streams being read apart, so their connections can be used again.
    drains: Arc<tokio::sync::Semaphore>,
}

impl Backend for Reverse {
    async fn handle(&self, request: http::Request<Incoming>, front: &Listening) -> Response<Body> {
        Reverse::handle(self, request, front).await
    }
}

impl Reverse {
    pub(crate) fn new(engine: Arc<Engine>, remote: Arc<Remote>) -> Reverse {
        Reverse {
            engine,
            remote,
            sessions: Mutex::new(HashMap::new()),
            aside: Arc::new(Aside::default()),
            drains: Arc::new(tokio::sync::Semaphore::new(MAX_DRAINS)),
        }
    }

    /// The session a request names by its `Mcp-Session-Id`, when the upstream created it; else
    /// a new one, for the request alone (a stateless request, an `initialize`, or an id the
    /// upstream did not name, which it answers 404 itself), kept only once the upstream names
    /// it ([`keep`](Self::keep)). So an id a client makes up costs nothing past its request,
    /// and cannot push a session the upstream made out of the map.
    fn session(&self, key: Option<&[u8]>) -> Arc<Session> {
        if let Some(key) = key {
            let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some((session, used)) = sessions.get_mut(key) {
                *used = Instant::now();
                return session.clone();
            }
        }
        Arc::new(self.engine.session())
    }

    /// Keeps `session` under `key`, an id the upstream named in a successful response's
    /// `Mcp-Session-Id` (it created the session, or knows it), unless a session is kept under
    /// it already. Sessions no request has named for [`IDLE`] are forgotten first, then the
    /// one named least recently when [`MAX_SESSIONS`] are kept.
    fn keep(&self, key: &[u8], session: &Arc<Session>) {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        if let Some((_, used)) = sessions.get_mut(key) {
            *used = now;
            return;
        }
        sessions.retain(|_, (_, used)| now.duration_since(*used) < IDLE);
        forget_least_recent(&mut sessions);
        sessions.insert(key.to_vec(), (session.clone(), now));
    }

    async fn handle(&self, request: http::Request<Incoming>, front: &Listening) -> Response<Body> {
        let (parts, body) = request.into_parts();
        let key = parts
            .headers
            .get(SESSION_ID)
            .map(|id| id.as_bytes().to_vec());
        let session = self.session(key.as_deref());
        if parts.method == Method::POST {
            return self.post(&parts, body, &session, front).await;
        }
        let body = match read_body(body, front.limit, &session).await {
            Ok(body) => body,
            Err(refused) => return refused,
        };
        let request = self
            .remote
            .request(parts.method.clone(), &parts.headers)
            .body(body);
        let response = match request.send().await {
            Ok(response) => response,
            Err(err) => return self.unreachable(&session, &err),
        };
        if parts.method == Method::DELETE && response.status().is_success() {
            if let Some(key) = &key {
                let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
                sessions.remove(key);
            }
        }
        self.respond(response, session, Sent::default(), Vec::new(), front)
            .await
    }

    async fn post(
        &self,
        parts: &Parts,
        body: Incoming,
        session: &Arc<Session>,
        front: &Listening,
    ) -> Response<Body> {
        let body = match read_body(body, front.limit, session).await {
            Ok(body) => body,
            Err(refused) => return refused,
        };
        let outcome = session.client_line(&body);
        let mut replies = Vec::new();
        let onward = collected(session, outcome, &body, |reply| replies.push(reply));
        if onward.is_empty() {
            if replies.is_empty() {
                return empty(StatusCode::ACCEPTED);
            }
            return json_response(StatusCode::OK, joined(replies));
        }
        let onward = joined(onward);
        let sent = Sent::read(&onward);
        let request = self
            .remote
            .request(Method::POST, &parts.headers)
            .body(onward);
        match request.send().await {
            Ok(response) => {
                self.respond(response, session.clone(), sent, replies, front)
                    .await
            }
            Err(err) => {
                let why = self.unreachable_note(session, &err);
                let errors = abandoned(session, &sent.requests, &why);
                if errors.is_empty() {
                    refusal(StatusCode::BAD_GATEWAY, -32000, &why)
                } else {
                    json_response(StatusCode::BAD_GATEWAY, joined(errors))
                }
            }
        }
    }

    fn unreachable_note(&self, session: &Session, err: &reqwest::Error) -> String {
        let why = format!(
            "cannot reach the upstream {}: {}",
            self.remote.url(),
            error_chain(err)
        );
        report(session, &why);
        why
    }

    fn unreachable(&self, session: &Session, err: &reqwest::Error) -> Response<Body> {
        let why = self.unreachable_note(session, err);
        refusal(StatusCode::BAD_GATEWAY, -32000, &why)
    }

    /// The upstream's response, for the client: its status and headers, its body's messages
    /// read through the session. `extra` are the proxy's own answers to requests of the same
    /// body it refused.
    async fn respond(
        &self,
        response: reqwest::Response,
        session: Arc<Session>,
        sent: Sent,
        extra: Vec<Vec<u8>>,
        front: &Listening,
    ) -> Response<Body> {
        let status = response.status();
        // A session the upstream created (or knows): named in a response that is no error.
        if let Some(id) = response
            .headers()
            .get(SESSION_ID)
            .filter(|_| status.is_success())
        {
            self.keep(id.as_bytes(), &session);
        }
        let read = gate::head(status, response.headers());
        let mut head = Response::builder().status(status);
        for (name, value) in response.headers() {
            if !hop_by_hop(name, response.headers()) && name != http::header::CONTENT_LENGTH {
                head = head.header(name, value);
            }
        }
        match read {
            Head::Withheld(why) => {
                report(&session, why);
                withheld(&session, &sent, extra, why)
            }
            Head::Events => {
                let relay = Relay {
                    headers: session_headers(response.headers()),
                    response,
                    session,
                    remote: self.remote.clone(),
                    aside: self.aside.clone(),
                    sent,
                    limit: front.limit,
                    framer: Framer::new(front.limit),
                    resumable: false,
                    replies: Vec::new(),
                    drains: self.drains.clone(),
                };
                let body = relay.start(extra).await;
                head.body(body).unwrap_or_else(|_| broken())
            }
            Head::Json => {
                let body = match read_whole(response, front.limit).await {
                    Ok(body) => body,
                    Err(unread) => {
                        let why = match unread {
                            Unread::OverLimit(limit) => Unread::over_limit(limit),
                            Unread::Broke(err) => {
                                format!("the upstream's response broke off: {}", error_chain(&err))
                            }
                        };
                        report(&session, &why);
                        return withheld(&session, &sent, extra, &why);
                    }
                };
                let headers = session_headers(&HeaderMap::new());
                let mut messages = extra;
                if !body.iter().all(u8::is_ascii_whitespace) {
                    for message in answers(&body, sent.batch) {
                        let outcome = gate::message(&session, message);
                        let mut replies = Vec::new();
                        messages.extend(collected(&session, outcome, message, |reply| {
                            replies.push(reply);
                        }));
                        self.reply(replies, &headers).await;
                    }
                }
                messages.extend(abandoned(
                    &session,
                    &sent.requests,
                    "the upstream's JSON response did not answer it",
                ));
                if messages.is_empty() {
                    return head.body(full(Bytes::new())).unwrap_or_else(|_| broken());
                }
                head.body(full(joined(messages)))
                    .unwrap_or_else(|_| broken())
            }
            Head::Inert if status.is_success() && !sent.requests.is_empty() => {
                let why =
                    format!("the upstream answered {status} with neither JSON nor an event stream");
                report(&session, &why);
                withheld(&session, &sent, extra, &why)
            }
            Head::Inert => {
                if !status.is_success() {
                    // The client reads the status as its requests' failure: none is waiting.
                    let _ = abandoned(&session, &sent.requests, "");
                }
                let stream = futures_util::TryStreamExt::map_ok(response.bytes_stream(), |bytes| {
                    hyper::body::Frame::data(bytes)
                });
                let stream = futures_util::TryStreamExt::map_err(stream, |err| {
                    Box::new(err) as Box<dyn std::error::Error + Send + Sync>
                });
                let body =
                    http_body_util::BodyExt::boxed_unsync(http_body_util::StreamBody::new(stream));
                head.body(body).unwrap_or_else(|_| broken())
            }
        }
    }

    /// Sends the proxy's own answers to the upstream's requests, each in a POST.
    async fn reply(&self, replies: Vec<Vec<u8>>, headers: &HeaderMap) {
        for reply in replies {
            let request = self.remote.request(Method::POST, headers).body(reply);
            self.aside.send(request).await;
        }
    }
}

/// Forgets the session named least recently, when as many as are kept are there.
fn forget_least_recent(sessions: &mut HashMap<Vec<u8>, Kept>) {
    if sessions.len() < MAX_SESSIONS {
        return;
    }
    let oldest = sessions
        .iter()
        .min_by_key(|(_, (_, used))| *used)
        .map(|(key, _)| key.clone());
    if let Some(oldest) = oldest {
        sessions.remove(&oldest);
    }
}

/// The headers a message of the proxy's own to the upstream carries in a session.
fn session_headers(response: &HeaderMap) -> HeaderMap {
    let mut headers = HeaderMap::new();
    posting(&mut headers);
    if let Some(id) = response.get(SESSION_ID) {
        headers.insert(SESSION_ID, id.clone());
    }
    headers
}

/// The errors for the requests of `sent` still waiting, saying `why`.
fn abandoned(session: &Session, requests: &[Box<RawValue>], why: &str) -> Vec<Vec<u8>> {
    requests
        .iter()
        .filter_map(|id| session.abandon(id, why))
        .collect()
}

/// The response in place of one the proxy cannot pass on: an error for each request of `sent`.
fn withheld(session: &Session, sent: &Sent, extra: Vec<Vec<u8>>, why: &str) -> Response<Body> {
    let mut messages = extra;
    messages.extend(abandoned(session, &sent.requests, why));
    if messages.is_empty() {
        return refusal(StatusCode::BAD_GATEWAY, -32000, why);
    }
    json_response(StatusCode::BAD_GATEWAY, joined(messages))
}

fn broken() -> Response<Body> {
    refusal(
        StatusCode::BAD_GATEWAY,
        -32000,
        "the upstream's response headers cannot be passed on",
    )
}

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

/// Where one event's outcome goes: its pieces for the client, in order (`None`: the event as it
/// came), and the replies for the upstream.
struct Events<'a, 'e> {
    event: &'a Event<'e>,
    pieces: Vec<Option<Bytes>>,
    replies: &'a mut Vec<Vec<u8>>,
}

impl Deliver for Events<'_, '_> {
    fn as_it_came(&mut self) -> bool {
        self.pieces.push(None);
        true
    }

    fn rewritten(&mut self, message: Vec<u8>) -> bool {
        let pieces = self.event.rewritten_around(message);
        self.pieces.extend(pieces.into_iter().map(Some));
        true
    }

    fn onward(&mut self, message: Vec<u8>) -> bool {
        self.pieces.push(Some(message_event(&message).into()));
        true
    }

    fn back(&mut self, message: Vec<u8>) {
        self.replies.push(message);
    }

    fn nothing(&mut self) {
        // The event without its data: a client dispatches nothing, yet still takes its id.
        self.pieces.push(Some(self.event.rewritten(None).into()));
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
/// event's data through the session, every other event and line as it came. When the stream
/// ends without an event id to resume it by, each request of `sent` still waiting gets its
/// error as an event of the proxy's own.
struct Relay {
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
    /// The client's body: what the upstream has already sent, which goes to the client with
    /// the head in one write (for a small call, the whole answer), then the rest as it comes,
    /// relayed by a task of its own. `extra` are the proxy's own answers, first.
    async fn start(mut self, extra: Vec<Vec<u8>>) -> Body {
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
            Passage::Inert => {
                drop(event);
                if !raw.is_empty() {
                    out.push(raw.into());
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
        let pieces = to.pieces;
        drop(event);
        let mut raw = Some(raw);
        for piece in pieces {
            let piece = match piece {
                Some(piece) => piece,
                // The event as it came, moved rather than copied.
                None => raw.take().map(Bytes::from).unwrap_or_default(),
            };
            if !piece.is_empty() {
                out.push(piece);
            }
        }
    }
}
