//! An HTTP client and a stdio server (`fence mcp --listen ADDR -- COMMAND…`): the proxy is the
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
//! still open, else waits (up to a thousand messages) for the next GET stream.

use std::collections::{HashMap, VecDeque};
use std::io::BufReader;
use std::process::Child;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode};
use hyper::body::Incoming;
use tokio::sync::mpsc;

use super::front::{Body, Front, json_response, read_body, refusal, streamed};
use super::message::{
    Renumbered, Replaced, Sent, progress_token, subscription_id, with_id, with_progress_token,
};
use super::sse::message_event;
use crate::json::Members;
use crate::options::Options;
use crate::proxy::{Engine, Sink, kill, next_outcome, report, spawn, terminate, widen_pipe};
use crate::session::{Forward, Session, Side};

const SESSION_ID: &str = "mcp-session-id";

/// How long a session no request has named is kept.
const IDLE: Duration = Duration::from_secs(60 * 60);

/// Messages of the server's own kept for a GET stream that is not open yet.
const BACKLOG: usize = 1000;

/// The stdio servers behind the front, one per session.
pub(crate) struct Children {
    engine: Arc<Engine>,
    options: Options,
    sessions: Mutex<HashMap<String, Arc<Server>>>,
    stateless: Mutex<Option<Arc<Server>>>,
}

/// One server process and its session.
struct Server {
    session: Session,
    input: Arc<Sink<std::process::ChildStdin>>,
    process: Mutex<Child>,
    routes: Mutex<Routes>,
    used: Mutex<Instant>,
    /// The stateless era's server, whose streams' closing cancels their requests, and whose
    /// requests (of many clients, each counting its ids from the start) get ids of its own.
    stateless: bool,
    /// The last id the proxy gave a stateless request.
    last_id: AtomicU64,
}

#[derive(Default)]
struct Routes {
    /// Where the answer to each waiting request goes, by its id's exact JSON (as the server
    /// knows it).
    waiting: HashMap<String, Route>,
    /// The session's GET stream, when open.
    listener: Option<mpsc::UnboundedSender<Vec<u8>>>,
    backlog: VecDeque<Vec<u8>>,
    /// The server closed its output.
    gone: bool,
}

/// The response a request's answer goes back on.
struct Route {
    sender: mpsc::UnboundedSender<Routed>,
    /// Whether it is an event stream, which may carry the server's other messages too.
    stream: bool,
    /// What the client wrote, when the proxy gave the request an id of its own.
    original: Option<Replaced>,
}

/// A message on its way to a POST's response.
struct Routed {
    /// The id (as the server knows it) of the request it answers, if it is an answer.
    answers: Option<String>,
    message: Vec<u8>,
}

impl Children {
    pub(crate) fn new(engine: Arc<Engine>, options: &Options) -> Children {
        Children {
            engine,
            options: options.clone(),
            sessions: Mutex::new(HashMap::new()),
            stateless: Mutex::new(None),
        }
    }

    pub(crate) async fn handle(&self, request: Request<Incoming>, front: &Front) -> Response<Body> {
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
                        Err(why) => {
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
                    let grace = self.options.grace();
                    tokio::task::spawn_blocking(move || server.end(grace));
                    super::empty(StatusCode::NO_CONTENT)
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
    fn start(&self, body: &[u8]) -> Result<(Arc<Server>, Option<String>), String> {
        let initialize = Sent::read(body).method.as_deref() == Some("initialize");
        if !initialize {
            let mut stateless = self
                .stateless
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if let Some(server) = stateless.as_ref().filter(|server| !server.gone()) {
                return Ok((server.clone(), None));
            }
            let server = self.spawn(true)?;
            *stateless = Some(server.clone());
            return Ok((server, None));
        }
        let server = self.spawn(false)?;
        let id = session_id();
        let grace = self.options.grace();
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
        sessions.insert(id.clone(), server.clone());
        Ok((server, Some(id)))
    }

    fn spawn(&self, stateless: bool) -> Result<Arc<Server>, String> {
        let mut child = spawn(&self.options).map_err(|err| {
            format!(
                "cannot start {:?}: {err}; check the command after `--`",
                self.options.command()
            )
        })?;
        let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            unreachable!("both pipes were asked for")
        };
        widen_pipe(&input);
        widen_pipe(&output);
        let server = Arc::new(Server {
            session: self.engine.session(),
            input: Arc::new(Sink::new(input)),
            process: Mutex::new(child),
            routes: Mutex::new(Routes::default()),
            used: Mutex::new(Instant::now()),
            stateless,
            last_id: AtomicU64::new(0),
        });
        let reader = server.clone();
        let limit = self.options.max_message_bytes();
        thread::spawn(move || reader.read(output, limit));
        Ok(server)
    }

    /// Ends every server, when the proxy stops.
    pub(crate) fn end_all(&self) {
        let grace = self.options.grace();
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
    }
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
            kind.eq_ignore_ascii_case(super::EVENT_STREAM) || kind == "*/*"
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

impl Routed {
    /// A message that answers none of the POST's requests.
    fn other(message: Vec<u8>) -> Routed {
        Routed {
            answers: None,
            message,
        }
    }
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
        for note in &outcome.notes {
            report(&self.session, note);
        }
        let mut onward = match outcome.forward {
            Forward::AsIs => Some(body.to_vec()),
            Forward::Rewritten(message) => Some(message),
            Forward::Nothing => None,
        };
        let sent = onward.as_deref().map(Sent::read).unwrap_or_default();
        let (answers, mut answered) = mpsc::unbounded_channel();
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
        let mut first: Vec<_> = outcome.reply.into_iter().map(restored).collect();
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
            return super::empty(StatusCode::ACCEPTED);
        }
        if !streams {
            let mut messages = first;
            for _ in &sent.requests {
                match answered.recv().await {
                    Some(routed) => messages.push(routed.message),
                    None => break,
                }
            }
            return json_response(StatusCode::OK, super::joined(messages));
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
            HeaderValue::from_static(super::EVENT_STREAM),
        );
        response.headers_mut().insert(
            http::header::CACHE_CONTROL,
            HeaderValue::from_static("no-cache"),
        );
        response
    }

    /// The session's GET stream: the server's own messages, from the backlog on.
    fn listen(&self) -> Response<Body> {
        let (sender, mut received) = mpsc::unbounded_channel();
        {
            let mut routes = self.routes();
            for message in routes.backlog.drain(..) {
                let _ = sender.send(message);
            }
            routes.listener = Some(sender);
        }
        let (pieces, stream) = streamed();
        tokio::spawn(async move {
            while let Some(message) = received.recv().await {
                if pieces.send(message_event(&message).into()).await.is_err() {
                    return;
                }
            }
        });
        let mut response = Response::new(stream);
        response.headers_mut().insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static(super::EVENT_STREAM),
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
            for note in &outcome.notes {
                report(&self.session, note);
            }
            for mut reply in outcome.reply {
                self.input.send(&mut reply);
            }
            match outcome.forward {
                Forward::AsIs => self.route(line.clone()),
                Forward::Rewritten(message) => self.route(message),
                Forward::Nothing => {}
            }
            for message in outcome.also {
                self.route(message);
            }
        }
        for error in self.session.upstream_gone() {
            self.route(error);
        }
        let mut routes = self.routes();
        routes.gone = true;
        routes.waiting.clear();
        routes.listener = None;
    }

    /// Sends one message of the server's to where it belongs.
    fn route(&self, message: Vec<u8>) {
        let mut routes = self.routes();
        if let Some(id) = answer_id(&message) {
            if let Some(route) = routes.waiting.remove(&id) {
                let message = match &route.original {
                    Some(original) => with_id(&message, &original.id).unwrap_or(message),
                    None => message,
                };
                let answers = Some(id);
                let _ = route.sender.send(Routed { answers, message });
                return;
            }
        }
        // A stateless request's progress goes on its own stream with its client's token, and
        // never to another client's stream (there is no other on which it is the client's).
        let progress = progress_token(&message).and_then(|token| {
            let route = routes.waiting.get(&token)?;
            Some((route, route.original.as_ref()?.token.as_deref()?))
        });
        if let Some((route, token)) = progress {
            if route.stream {
                let message = with_progress_token(&message, token).unwrap_or(message);
                let _ = route.sender.send(Routed::other(message));
            }
            return;
        }
        // A 2026-07-28 subscription's notification goes on its `subscriptions/listen` stream.
        let message = match subscription_id(&message).and_then(|id| routes.waiting.get(&id)) {
            Some(route) => {
                let message = match &route.original {
                    Some(original) => with_id(&message, &original.id).unwrap_or(message),
                    None => message,
                };
                match route.sender.send(Routed::other(message)) {
                    Ok(()) => return,
                    Err(failed) => failed.0.message,
                }
            }
            None => message,
        };
        let message = match &routes.listener {
            Some(listener) => match listener.send(message) {
                Ok(()) => return,
                Err(failed) => {
                    routes.listener = None;
                    failed.0
                }
            },
            None => message,
        };
        routes.waiting.retain(|_, route| !route.sender.is_closed());
        let message = match routes.waiting.values().find(|route| route.stream) {
            Some(route) => match route.sender.send(Routed::other(message)) {
                Ok(()) => return,
                Err(failed) => failed.0.message,
            },
            None => message,
        };
        if routes.backlog.len() == BACKLOG {
            routes.backlog.pop_front();
        }
        routes.backlog.push_back(message);
    }

    /// Ends the server: its input closed, then SIGTERM and SIGKILL to its process group, each
    /// after `grace`.
    fn end(&self, grace: Duration) {
        self.input.close();
        let mut process = self.process.lock().unwrap_or_else(PoisonError::into_inner);
        for step in 0..3 {
            let deadline = Instant::now() + grace;
            while Instant::now() < deadline {
                if !matches!(process.try_wait(), Ok(None)) {
                    kill(&mut process);
                    return;
                }
                thread::sleep(Duration::from_millis(10));
            }
            match step {
                0 => terminate(&mut process),
                _ => kill(&mut process),
            }
        }
        let _ = process.wait();
    }
}

/// Sends a POST's answers on its event stream: `first` (the proxy's own), then each message
/// routed to it, until every request of `requests` is answered or the client closes the stream,
/// which in the stateless 2026-07-28 protocol cancels the requests still waiting.
async fn stream_answers(
    first: Vec<Vec<u8>>,
    mut answered: mpsc::UnboundedReceiver<Routed>,
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

/// The id of an answer (a message with an `id` and no `method`), as its exact JSON.
fn answer_id(message: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(message).ok()?;
    let raw: &serde_json::value::RawValue = serde_json::from_str(text).ok()?;
    let members = Members::of(raw)?;
    if members.one("method").ok()?.is_some() {
        return None;
    }
    Some(members.one("id").ok()??.get().to_owned())
}
