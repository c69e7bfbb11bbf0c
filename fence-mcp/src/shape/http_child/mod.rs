//! HTTP front, child upstream (`fence mcp --listen ADDR -- COMMAND…`): the proxy is the
//! Streamable HTTP server, and each session is a server process of its own.
//!
//! A POST without `Mcp-Session-Id` whose message is `initialize` starts a session in the
//! handshake era (2025-03-26 to 2025-11-25): a new server process, and an id the response
//! names, which every later request of that session carries. Requests without a session id
//! that are not `initialize` are the stateless era's (2026-07-28): they share one server
//! process of their own, started on the first. A session's process ends when the client
//! deletes the session, when no request has named it for an hour, or when the proxy stops.
//!
//! Each request's answer goes back on the response to the POST that carried it: an event
//! stream (when the client accepts one) that ends once every request in the POST is
//! answered, or else one JSON body. What the server says of its own accord (its requests,
//! notifications) goes to the session's GET stream when one is open, else to a POST stream
//! still open, else waits (up to a thousand messages) for the next GET stream. A stream its
//! client does not read holds up the server's output once [`STREAM_MESSAGES`] wait on it, as a
//! stdio client that does not read holds up a stdio server.
//!
//! At most [`MAX_SESSIONS`] sessions (so processes) run at once; past them, an `initialize`
//! is refused with 503. Every process a session started is ended by the one path that ends a
//! child server ([`crate::upstream::child::end`]), and, with the subreaper, what it left
//! outside its process group is reaped while the proxy runs and ended when it stops.

use std::collections::HashMap;
use std::io::BufReader;
use std::process::{Child, ExitCode};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode};
use hyper::body::Incoming;
use tokio::sync::mpsc;

mod routes;

use routes::{Hop, Route, Routed, Routes, answer_id};

use crate::engine::{Deliver, Engine, collected, deliver, report};
use crate::front::http::{
    Backend, Body, Listening, empty, json_response, read_body, refusal, streamed,
};
use crate::lines::{Sink, next_outcome};
use crate::options::{ChildServer, HttpFront, Options};
use crate::session::{Session, Side};
use crate::upstream::child::{self, Stage};
use crate::upstream::reaper::{Reaper, Swept};
use crate::wire::header::SESSION_ID;
use crate::wire::message::{Renumbered, Sent, with_id};
use crate::wire::sse::message_event;
use crate::wire::{EVENT_STREAM, joined};

/// How many sessions, each a server process, run at once.
pub(crate) const MAX_SESSIONS: usize = 256;

/// How many messages may wait on one stream for its client to read them.
pub(crate) const STREAM_MESSAGES: usize = 256;

/// Serves the HTTP front in front of a stdio server per session until a signal ends the
/// proxy; then ends every server, and what they left behind.
pub(crate) async fn serve(options: &Options, front: &HttpFront, server: &ChildServer) -> ExitCode {
    let engine = match Engine::open(options) {
        Ok(engine) => Arc::new(engine),
        Err(code) => return code,
    };
    let voice = engine.session();
    let (reaper, trouble) = Reaper::start(server.subreaper());
    if let Some(trouble) = trouble {
        report(&voice, &trouble);
    }
    let children = Arc::new(Children::new(engine, options, server, reaper));
    crate::front::http::serve(front, options.max_message_bytes(), voice, children).await
}

/// How long a session no request has named is kept.
const IDLE: Duration = Duration::from_secs(60 * 60);

/// The stdio servers behind the front, one per session.
pub(crate) struct Children {
    engine: Arc<Engine>,
    server: ChildServer,
    grace: Duration,
    limit: usize,
    reaper: Arc<Mutex<Option<Reaper>>>,
    sessions: Mutex<HashMap<String, Arc<Server>>>,
    stateless: Mutex<Option<Arc<Server>>>,
}

impl Backend for Children {
    async fn handle(&self, request: Request<Incoming>, front: &Listening) -> Response<Body> {
        Children::handle(self, request, front).await
    }

    fn end(&self) {
        self.end_all();
    }
}

/// One server process and its session.
struct Server {
    session: Session,
    input: Arc<Sink<std::process::ChildStdin>>,
    process: Mutex<Child>,
    reaper: Arc<Mutex<Option<Reaper>>>,
    routes: Mutex<Routes>,
    used: Mutex<Instant>,
    /// The stateless era's server, whose streams' closing cancels their requests, and whose
    /// requests (of many clients, each counting its ids from the start) get ids of its own.
    stateless: bool,
    /// The last id the proxy gave a stateless request.
    last_id: AtomicU64,
}

impl Children {
    fn new(
        engine: Arc<Engine>,
        options: &Options,
        server: &ChildServer,
        reaper: Reaper,
    ) -> Children {
        Children {
            engine,
            server: server.clone(),
            grace: options.grace(),
            limit: options.max_message_bytes(),
            reaper: Arc::new(Mutex::new(Some(reaper))),
            sessions: Mutex::new(HashMap::new()),
            stateless: Mutex::new(None),
        }
    }

    async fn handle(&self, request: Request<Incoming>, front: &Listening) -> Response<Body> {
        let (parts, body) = request.into_parts();
        let key = parts
            .headers
            .get(SESSION_ID)
            .map(|id| String::from_utf8_lossy(id.as_bytes()).into_owned());
        let known = key.as_deref().map(|key| self.known(key));
        if let Some(None) = known {
            return refusal(
                StatusCode::NOT_FOUND,
                -32001,
                "no such session (it ended or expired): initialize a new one",
            );
        }
        let known = known.flatten();
        match parts.method {
            Method::POST => {
                let body = match read_body(body, front.limit, &front.voice).await {
                    Ok(body) => body,
                    Err(refused) => return refused,
                };
                let (server, new_id) = match known {
                    Some(server) => (server, None),
                    None => match self.start(&body) {
                        Ok(started) => started,
                        Err(Refused::Full) => {
                            let why = format!(
                                "{MAX_SESSIONS} sessions are running, as many as the proxy \
                                 runs at once; end one (DELETE) or try again later"
                            );
                            report(&front.voice, &why);
                            return refusal(StatusCode::SERVICE_UNAVAILABLE, -32000, &why);
                        }
                        Err(Refused::Failed(why)) => {
                            report(&front.voice, &why);
                            return refusal(StatusCode::BAD_GATEWAY, -32000, &why);
                        }
                    },
                };
                let streams = accepts_stream(&parts.headers);
                let mut response = server.post(&body, streams).await;
                if let Some(id) = new_id.and_then(|id| HeaderValue::from_str(&id).ok()) {
                    response.headers_mut().insert(SESSION_ID, id);
                }
                response
            }
            Method::GET => match known {
                Some(server) => server.listen(),
                None => refusal(
                    StatusCode::METHOD_NOT_ALLOWED,
                    -32000,
                    "a GET stream needs a session (Mcp-Session-Id)",
                ),
            },
            Method::DELETE => match (known, key) {
                (Some(server), Some(key)) => {
                    self.sessions
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .remove(&key);
                    let grace = self.grace;
                    tokio::task::spawn_blocking(move || server.end(grace));
                    empty(StatusCode::NO_CONTENT)
                }
                _ => refusal(
                    StatusCode::METHOD_NOT_ALLOWED,
                    -32000,
                    "DELETE needs a session (Mcp-Session-Id)",
                ),
            },
            _ => refusal(
                StatusCode::METHOD_NOT_ALLOWED,
                -32000,
                "the MCP endpoint takes POST, GET and DELETE",
            ),
        }
    }

    /// The server of a session the client names; `None` for an id the proxy never gave or
    /// that has ended.
    fn known(&self, key: &str) -> Option<Arc<Server>> {
        let sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        let server = sessions.get(key)?.clone();
        *server.used.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
        Some(server)
    }

    /// The server for a POST that names no session: a new session's, for `initialize` (with
    /// the session's new id); the stateless one's for anything else.
    fn start(&self, body: &[u8]) -> Result<(Arc<Server>, Option<String>), Refused> {
        let initialize = Sent::read(body).method.as_deref() == Some("initialize");
        if !initialize {
            let mut stateless = self
                .stateless
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if let Some(server) = stateless.as_ref().filter(|server| !server.gone()) {
                return Ok((server.clone(), None));
            }
            let server = self.spawn(true).map_err(Refused::Failed)?;
            *stateless = Some(server.clone());
            return Ok((server, None));
        }
        let grace = self.grace;
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        sessions.retain(|_, server| {
            let idle = now
                .duration_since(*server.used.lock().unwrap_or_else(PoisonError::into_inner))
                >= IDLE;
            if idle || server.gone() {
                let server = server.clone();
                thread::spawn(move || server.end(grace));
            }
            !idle && !server.gone()
        });
        if sessions.len() >= MAX_SESSIONS {
            return Err(Refused::Full);
        }
        let server = self.spawn(false).map_err(Refused::Failed)?;
        let id = session_id();
        sessions.insert(id.clone(), server.clone());
        Ok((server, Some(id)))
    }

    fn spawn(&self, stateless: bool) -> Result<Arc<Server>, String> {
        let started = {
            let reaper = self.reaper.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(reaper) = reaper.as_ref() else {
                return Err("the proxy is stopping".to_owned());
            };
            child::start(&self.server, reaper)
        };
        let started = started.map_err(|err| child::cannot_start(&self.server, &err).0)?;
        let output = started.output;
        let server = Arc::new(Server {
            session: self.engine.session(),
            input: Arc::new(Sink::new(started.input)),
            process: Mutex::new(started.child),
            reaper: self.reaper.clone(),
            routes: Mutex::new(Routes::default()),
            used: Mutex::new(Instant::now()),
            stateless,
            last_id: AtomicU64::new(0),
        });
        let reader = server.clone();
        let limit = self.limit;
        thread::spawn(move || reader.read(output, limit));
        Ok(server)
    }

    /// Ends every server, when the proxy stops, then what they left behind.
    fn end_all(&self) {
        let grace = self.grace;
        let mut servers: Vec<Arc<Server>> = self
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .map(|(_, server)| server)
            .collect();
        servers.extend(
            self.stateless
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
        let ending: Vec<_> = servers
            .into_iter()
            .map(|server| thread::spawn(move || server.end(grace)))
            .collect();
        for thread in ending {
            let _ = thread.join();
        }
        let reaper = self
            .reaper
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(Swept::Left(left)) = reaper.map(|reaper| reaper.end_all(grace)) {
            eprintln!(
                "fence mcp: {left} process(es) the servers left behind did not exit within {} \
                 ms of SIGKILL; leaving them",
                grace.as_millis()
            );
        }
    }
}

/// Why no server was found for a request.
enum Refused {
    /// As many sessions as the proxy runs are running.
    Full,
    /// The server could not be started, why.
    Failed(String),
}

/// Whether a request's `Accept` takes an event stream.
fn accepts_stream(headers: &http::HeaderMap) -> bool {
    headers
        .get_all(http::header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|kind| {
            let kind = kind.split(';').next().unwrap_or("").trim();
            kind.eq_ignore_ascii_case(EVENT_STREAM) || kind == "*/*"
        })
}

/// A new session's id: 128 random bits, in hex.
fn session_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No system randomness: still unique within this process, if guessable.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos());
        bytes = nanos.to_le_bytes();
    }
    bytes
        .iter()
        .fold(String::with_capacity(32), |mut id, byte| {
            use std::fmt::Write as _;
            let _ = write!(id, "{byte:02x}");
            id
        })
}

impl Server {
    fn routes(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn gone(&self) -> bool {
        self.routes().gone
    }

    /// One POST's body: through the session, to the server; its answers on the response.
    async fn post(&self, body: &[u8], streams: bool) -> Response<Body> {
        let renumbered = self
            .stateless
            .then(|| Renumbered::new(body, || self.last_id.fetch_add(1, Ordering::Relaxed) + 1))
            .flatten();
        let body = renumbered
            .as_ref()
            .map_or(body, |renumbered| &renumbered.body);
        let original = |id: &str| renumbered.as_ref()?.replaced(id).cloned();
        // The proxy's own answers, to the client's ids.
        let restored = |message: Vec<u8>| {
            answer_id(&message)
                .and_then(|id| original(&id))
                .and_then(|original| with_id(&message, &original.id))
                .unwrap_or(message)
        };
        let outcome = self.session.client_line(body);
        let mut replies = Vec::new();
        let onward = collected(&self.session, outcome, body, |reply| replies.push(reply));
        let mut onward = (!onward.is_empty()).then(|| joined(onward));
        let sent = onward.as_deref().map(Sent::read).unwrap_or_default();
        let (answers, mut answered) = mpsc::channel(STREAM_MESSAGES);
        {
            let mut routes = self.routes();
            for id in &sent.requests {
                let route = Route {
                    sender: answers.clone(),
                    stream: streams,
                    original: original(id.get()),
                };
                routes.waiting.insert(id.get().to_owned(), route);
            }
        }
        drop(answers);
        let mut first: Vec<_> = replies.into_iter().map(restored).collect();
        if let Some(message) = onward.as_mut() {
            if !self.input.send(message) {
                let why = format!(
                    "{} has exited; the session is over: initialize a new one",
                    self.session.name()
                );
                first.extend(
                    sent.requests
                        .iter()
                        .filter_map(|id| self.session.abandon(id, &why))
                        .map(restored),
                );
                self.routes()
                    .waiting
                    .retain(|_, route| !route.sender.is_closed());
            }
        }
        if sent.requests.is_empty() && first.is_empty() {
            return empty(StatusCode::ACCEPTED);
        }
        if !streams {
            let mut messages = first;
            for _ in &sent.requests {
                match answered.recv().await {
                    Some(routed) => messages.push(routed.message),
                    None => break,
                }
            }
            return json_response(StatusCode::OK, joined(messages));
        }
        let (pieces, stream) = streamed();
        tokio::spawn(stream_answers(
            first,
            answered,
            pieces,
            sent.requests,
            self.input.clone(),
            self.stateless,
        ));
        let mut response = Response::new(stream);
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

    /// The session's GET stream: the server's own messages, from the backlog on.
    fn listen(&self) -> Response<Body> {
        let (sender, mut received) = mpsc::channel::<Routed>(STREAM_MESSAGES);
        let backlog: Vec<Vec<u8>> = {
            let mut routes = self.routes();
            routes.listener = Some(sender);
            routes.backlog.drain(..).collect()
        };
        let (pieces, stream) = streamed();
        tokio::spawn(async move {
            for message in backlog {
                if pieces.send(message_event(&message).into()).await.is_err() {
                    return;
                }
            }
            while let Some(routed) = received.recv().await {
                if pieces
                    .send(message_event(&routed.message).into())
                    .await
                    .is_err()
                {
                    return;
                }
            }
        });
        let mut response = Response::new(stream);
        response.headers_mut().insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static(EVENT_STREAM),
        );
        response
    }

    /// Reads the server's output until it ends, routing each message.
    fn read(&self, output: std::process::ChildStdout, limit: usize) {
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
        routes.waiting.clear();
        routes.listener = None;
    }

    /// Sends one message of the server's to where it belongs, waiting while that stream's
    /// client has [`STREAM_MESSAGES`] unread (never with the routes held).
    fn route(&self, mut message: Vec<u8>) {
        let mut hop = Hop::Answer;
        loop {
            let next = {
                let mut routes = self.routes();
                routes.next(&mut hop, message)
            };
            let Some((sender, routed, last)) = next else {
                return;
            };
            match sender.blocking_send(routed) {
                Ok(()) => return,
                Err(_) if last => return,
                Err(failed) => message = failed.0.message,
            }
        }
    }

    /// Ends the server: its input closed, then SIGTERM and SIGKILL to its process group, each
    /// after `grace`.
    fn end(&self, grace: Duration) {
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

/// Sends a POST's answers on its event stream: `first` (the proxy's own), then each message
/// routed to it, until every request of `requests` is answered or the client closes the stream,
/// which in the stateless 2026-07-28 protocol cancels the requests still waiting.
async fn stream_answers(
    first: Vec<Vec<u8>>,
    mut answered: mpsc::Receiver<Routed>,
    pieces: mpsc::Sender<Bytes>,
    requests: Vec<Box<serde_json::value::RawValue>>,
    input: Arc<Sink<std::process::ChildStdin>>,
    stateless: bool,
) {
    let ids: Vec<String> = requests.iter().map(|id| id.get().to_owned()).collect();
    for message in first {
        if pieces.send(message_event(&message).into()).await.is_err() {
            return;
        }
    }
    let mut unanswered = ids;
    while !unanswered.is_empty() {
        let message = tokio::select! {
            message = answered.recv() => message,
            () = pieces.closed() => None,
        };
        let Some(Routed { answers, message }) = message else {
            break;
        };
        if let Some(id) = answers {
            unanswered.retain(|waiting| *waiting != id);
        }
        if pieces.send(message_event(&message).into()).await.is_err() {
            break;
        }
    }
    if stateless && pieces.is_closed() {
        // In 2026-07-28, a client closing the stream cancels its requests.
        for id in requests
            .iter()
            .filter(|id| unanswered.iter().any(|waiting| waiting == id.get()))
        {
            let mut cancel = format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{},"reason":"the client closed its stream"}}}}"#,
                id.get()
            )
            .into_bytes();
            input.send(&mut cancel);
        }
    }
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
