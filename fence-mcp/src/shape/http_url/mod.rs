//! HTTP front, URL upstream (`fence mcp --listen ADDR --url URL`): a reverse proxy. Every request goes upstream with the client's headers (less the hop-by-hop ones and
//! those the proxy owns: `Host`, `Content-Length`, `Accept-Encoding`, and `--header`'s), and
//! every response comes back with its status and headers; only the JSON-RPC messages in its
//! body are read, each through the session of its `Mcp-Session-Id` (or, with none, a session
//! of its own), and written again where the session says so. An SSE stream is rewritten event
//! by event and flushed per event.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::request::Parts;
use http::{HeaderMap, Method, Response, StatusCode};
use hyper::body::Incoming;
use serde_json::value::RawValue;

use crate::engine::{Engine, collected, report};
use crate::front::http::{
    Backend, Body, Listening, empty, full, json_response, read_body, refusal,
};
use crate::gate::{self, Asked, ErrorBody, Head};
use crate::options::{HttpFront, Options, RemoteServer};
use crate::session::Session;
use crate::upstream::url::{Aside, Remote, Unread, error_chain, read_whole};
use crate::wire::header::SESSION_ID;
use crate::wire::message::Sent;
use crate::wire::sse::message_event;
use crate::wire::{BodyKind, EVENT_STREAM, answers, hop_by_hop, joined, posting};

pub(crate) mod checks;
mod relay;

use relay::Relay;

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
        let asked = if parts.method == Method::GET {
            Asked::Get
        } else {
            Asked::Other
        };
        self.respond(Asking::stream(asked), response, session, front)
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
        let (onward, sent, replies) = match outbound(session, &body) {
            Outbound::Upstream {
                onward,
                sent,
                replies,
            } => (onward, sent, replies),
            Outbound::Answered(answered) => return answered,
        };
        let request = self
            .remote
            .request(Method::POST, &parts.headers)
            .body(onward);
        match request.send().await {
            Ok(response) => {
                let asking = Asking {
                    asked: Asked::Post,
                    sent,
                    extra: replies,
                    events: accepts_events(&parts.headers),
                };
                self.respond(asking, response, session.clone(), front).await
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

    /// The upstream's response to what the client was `asking`, for the client: its status
    /// and headers (each value neutralised, `Content-Type` the proxy's own for a body it read),
    /// its body's messages read through the session, and any other body neutralised.
    async fn respond(
        &self,
        asking: Asking,
        response: reqwest::Response,
        session: Arc<Session>,
        front: &Listening,
    ) -> Response<Body> {
        let Asking {
            asked,
            sent,
            extra,
            events,
        } = asking;
        let status = response.status();
        // A session the upstream created (or knows): named in a response that is no error.
        if let Some(id) = response
            .headers()
            .get(SESSION_ID)
            .filter(|_| status.is_success())
        {
            self.keep(id.as_bytes(), &session);
        }
        let read = gate::head(asked, status, response.headers());
        let head = response_head(status, response.headers(), &read);
        match read {
            Head::Withheld(why) => {
                report(&session, why);
                withheld(&session, &sent, extra, why)
            }
            Head::Events => {
                let relay = Relay::new(
                    response,
                    session,
                    self.remote.clone(),
                    self.aside.clone(),
                    sent,
                    front.limit,
                    self.drains.clone(),
                );
                let body = relay.start(extra).await;
                head.body(body).unwrap_or_else(|_| broken())
            }
            Head::Json => {
                let body = match self.whole(response, &session, front).await {
                    Ok(body) => body,
                    Err(why) => return withheld(&session, &sent, extra, &why),
                };
                let mut messages = extra;
                if !body.iter().all(u8::is_ascii_whitespace) {
                    let read = |session: &Session, message: &[u8]| {
                        gate::answering(session, message, &sent.requests)
                    };
                    messages.extend(
                        self.read_messages(&session, answers(&body, sent.batch), read)
                            .await,
                    );
                }
                messages.extend(abandoned(
                    &session,
                    &sent.requests,
                    "the upstream's JSON response did not answer it",
                ));
                if messages.is_empty() {
                    return head.body(full(Bytes::new())).unwrap_or_else(|_| broken());
                }
                if messages.len() > 1 && !sent.batch {
                    // A client that sent no batch refuses one (the Python SDK with an error that
                    // quotes it whole): each message an event of a stream, when it takes one.
                    return as_events(head, messages, events, &session);
                }
                head.body(full(joined(messages)))
                    .unwrap_or_else(|_| broken())
            }
            Head::Error => {
                self.error_response(head, response, &session, (&sent, extra), front)
                    .await
            }
            // `202 Accepted` for requests: their answers come on another stream (the client's
            // GET), where the proxy reads them; the body, which no client reads, neutralised.
            Head::Inert if status == StatusCode::ACCEPTED => head
                .body(neutralised(response))
                .unwrap_or_else(|_| broken()),
            Head::Inert if status.is_success() && !sent.requests.is_empty() => {
                let why =
                    format!("the upstream answered {status} with neither JSON nor an event stream");
                report(&session, &why);
                withheld(&session, &sent, extra, &why)
            }
            Head::Inert => head
                .body(neutralised(response))
                .unwrap_or_else(|_| broken()),
        }
    }

    /// The client's response to an error status's `response` (`head` its head so far),
    /// answering `sent` and the proxy's own answers `extra`: the body read by its content
    /// ([`gate::error_body`]), its messages through the gate (an error with no id answering
    /// the requests of `sent`), and all of it neutralised, for clients show it whole.
    async fn error_response(
        &self,
        head: http::response::Builder,
        response: reqwest::Response,
        session: &Session,
        (sent, extra): (&Sent, Vec<Vec<u8>>),
        front: &Listening,
    ) -> Response<Body> {
        let body = match self.whole(response, session, front).await {
            Ok(body) => body,
            Err(why) => return withheld(session, sent, extra, &why),
        };
        let (body, kind) = match gate::error_body(&body) {
            ErrorBody::Messages(messages) => {
                let each = |session: &Session, message: &[u8]| {
                    gate::error_message(session, message, &sent.requests)
                };
                let mut read = extra;
                read.extend(self.read_messages(session, messages, each).await);
                // No client reads a message from an error status, and the TypeScript SDK
                // shows the whole body: the fence's own markers too are neutralised.
                (gate::shown(&joined(read)), BodyKind::Json)
            }
            ErrorBody::Neutralised { body, json: true } => (body, BodyKind::Json),
            ErrorBody::Neutralised { body, json: false } => (body, BodyKind::Other),
            ErrorBody::Unreadable(why) => {
                report(session, &why);
                return withheld(session, sent, extra, &why);
            }
        };
        // The client reads the status as its requests' failure: none is waiting.
        let _ = abandoned(session, &sent.requests, "");
        let head = match kind.content_type() {
            Some(json) => head.header(http::header::CONTENT_TYPE, json),
            None => head,
        };
        head.body(full(body)).unwrap_or_else(|_| broken())
    }

    /// A response's body whole, up to the limit; why not, reported, when it cannot be.
    async fn whole(
        &self,
        response: reqwest::Response,
        session: &Session,
        front: &Listening,
    ) -> Result<Vec<u8>, String> {
        read_whole(response, front.limit).await.map_err(|unread| {
            let why = match unread {
                Unread::OverLimit(limit) => Unread::over_limit(limit),
                Unread::Broke(err) => {
                    format!("the upstream's response broke off: {}", error_chain(&err))
                }
            };
            report(session, &why);
            why
        })
    }

    /// The messages of a body, each read through the gate by `read`: what goes to the client.
    /// The proxy's own answers to the upstream's requests among them are sent.
    async fn read_messages(
        &self,
        session: &Session,
        messages: Vec<&[u8]>,
        read: impl Fn(&Session, &[u8]) -> crate::session::Outcome,
    ) -> Vec<Vec<u8>> {
        let headers = session_headers(&HeaderMap::new());
        let mut out = Vec::new();
        for message in messages {
            let outcome = read(session, message);
            let mut replies = Vec::new();
            out.extend(collected(session, outcome, message, |reply| {
                replies.push(reply);
            }));
            self.reply(replies, &headers).await;
        }
        out
    }

    /// Sends the proxy's own answers to the upstream's requests, each in a POST.
    async fn reply(&self, replies: Vec<Vec<u8>>, headers: &HeaderMap) {
        for reply in replies {
            let request = self.remote.request(Method::POST, headers).body(reply);
            self.aside.send(request).await;
        }
    }
}

/// What a client asked, as far as the response to it goes.
struct Asking {
    asked: Asked,
    /// What its POST sent upstream (nothing, for a stream).
    sent: Sent,
    /// The proxy's own answers to the requests of its POST that it refused.
    extra: Vec<Vec<u8>>,
    /// Whether it takes an event stream in answer.
    events: bool,
}

impl Asking {
    /// A GET (or any other method but POST), which sends no message.
    fn stream(asked: Asked) -> Asking {
        Asking {
            asked,
            sent: Sent::default(),
            extra: Vec::new(),
            events: true,
        }
    }
}

/// Whether a request's `Accept` takes an event stream.
fn accepts_events(headers: &HeaderMap) -> bool {
    headers
        .get_all(http::header::ACCEPT)
        .iter()
        .any(|value| memchr::memmem::find(value.as_bytes(), EVENT_STREAM.as_bytes()).is_some())
}

/// The several messages answering a POST that was no batch: each an event of a stream, when
/// the client takes one; else the answers alone (a notification beside them is dropped, and
/// reported), which the client reads as it read one.
fn as_events(
    mut head: http::response::Builder,
    messages: Vec<Vec<u8>>,
    events: bool,
    session: &Session,
) -> Response<Body> {
    if events {
        if let Some(headers) = head.headers_mut() {
            headers.insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static(EVENT_STREAM),
            );
        }
        let stream: Vec<u8> = messages
            .iter()
            .flat_map(|message| message_event(message))
            .collect();
        return head.body(full(stream)).unwrap_or_else(|_| broken());
    }
    let (answers, others): (Vec<_>, Vec<_>) = messages.into_iter().partition(|message| {
        serde_json::from_slice::<&RawValue>(message)
            .ok()
            .and_then(crate::json::Members::of)
            .is_some_and(|members| {
                !matches!(members.one("result"), Ok(None))
                    || !matches!(members.one("error"), Ok(None))
            })
    });
    for other in &others {
        report(
            session,
            &format!(
                "dropped a message of the upstream's beside the answer to a client that takes                  JSON only, which cannot be sent it: {}",
                String::from_utf8_lossy(other)
            ),
        );
    }
    head.body(full(joined(answers)))
        .unwrap_or_else(|_| broken())
}

/// What becomes of a POST's body, read through the session.
enum Outbound {
    /// Messages go upstream: them, what they ask, and the proxy's own answers to those it
    /// refused.
    Upstream {
        onward: Vec<u8>,
        sent: Sent,
        replies: Vec<Vec<u8>>,
    },
    /// Nothing goes upstream: the response to the client.
    Answered(Response<Body>),
}

/// What becomes of a POST's `body`.
fn outbound(session: &Session, body: &[u8]) -> Outbound {
    let outcome = session.client_line(body);
    let mut replies = Vec::new();
    let onward = collected(session, outcome, body, |reply| replies.push(reply));
    if onward.is_empty() {
        if replies.is_empty() {
            return Outbound::Answered(empty(StatusCode::ACCEPTED));
        }
        return Outbound::Answered(json_response(StatusCode::OK, joined(replies)));
    }
    let onward = joined(onward);
    let sent = Sent::read(&onward);
    Outbound::Upstream {
        onward,
        sent,
        replies,
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

/// The head of the client's response: the upstream's status, and its headers but those of
/// one connection, `Content-Length` (the body may be rewritten), the headers that describe the
/// body's bytes (an `ETag` or a digest of bytes the proxy may have changed), and
/// `Content-Type` of a body the proxy reads (it writes its own) — each value neutralised, for a
/// client may show one (the Python SDK puts an unexpected `Content-Type` in an error).
fn response_head(status: StatusCode, headers: &HeaderMap, read: &Head) -> http::response::Builder {
    let mut head = Response::builder().status(status);
    let own_type = match read {
        Head::Json => BodyKind::Json.content_type(),
        Head::Events => BodyKind::EventStream.content_type(),
        Head::Error | Head::Inert | Head::Withheld(_) => None,
    };
    let read_whole = !matches!(read, Head::Inert);
    for (name, value) in headers {
        let describes_bytes = matches!(
            name.as_str(),
            "content-length" | "etag" | "content-md5" | "digest" | "content-digest" | "repr-digest"
        );
        if hop_by_hop(name, headers)
            || describes_bytes
            || (read_whole && name == http::header::CONTENT_TYPE)
        {
            continue;
        }
        if let Ok(value) = http::HeaderValue::from_bytes(&gate::inert(value.as_bytes())) {
            head = head.header(name, value);
        }
    }
    match own_type {
        Some(own_type) => head.header(http::header::CONTENT_TYPE, own_type),
        None => head,
    }
}

/// The body of a response no client reads as messages, as it comes, neutralised.
fn neutralised(response: reqwest::Response) -> Body {
    let stream = futures_util::stream::unfold(
        (response, Some(fence_runtime::Neutraliser::new())),
        |(mut response, mut neutraliser)| async move {
            let mut out = Vec::new();
            let step = neutraliser.as_mut()?;
            match response.chunk().await {
                Ok(Some(chunk)) if gate::OPEN => out.extend_from_slice(&chunk),
                Ok(Some(chunk)) => step.push_bytes(&chunk, &mut out),
                Ok(None) => neutraliser.take()?.finish_bytes(&mut out),
                Err(err) => {
                    neutraliser = None;
                    let err: Box<dyn std::error::Error + Send + Sync> = Box::new(err);
                    return Some((Err(err), (response, neutraliser)));
                }
            }
            Some((
                Ok(hyper::body::Frame::data(Bytes::from(out))),
                (response, neutraliser),
            ))
        },
    );
    http_body_util::BodyExt::boxed_unsync(http_body_util::StreamBody::new(stream))
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
