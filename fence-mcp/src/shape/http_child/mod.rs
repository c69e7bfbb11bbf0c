//! HTTP front, child upstream (`fence mcp --listen ADDR -- COMMAND…`): the proxy is the
//! Streamable HTTP server, and each session is a server process of its own.
//!
//! A POST without `Mcp-Session-Id` whose message is `initialize` starts a session in the
//! handshake era (2025-03-26 to 2025-11-25): a new server process, and an id the response
//! names, which every later request of that session carries. Requests without a session id
//! that are not `initialize` are the stateless era's (2026-07-28): they share one server
//! process of their own, started on the first ([`stateless`] keeps their clients apart). A
//! session's process ends when the client deletes the session, when it has been idle (no
//! request has named it and no client has waited on any of its responses) for
//! [`HttpFront::session_idle`], or when the proxy stops; a request naming an ended session
//! gets 404, and its client initializes a new one.
//!
//! Each request's answer goes back on the response to the POST that carried it: an event
//! stream (when the client accepts one) that ends once every request in the POST is
//! answered, or else one JSON body. Every event of a session's streams has an id, each stream
//! starts with a priming event for a client of 2025-11-25 or later, and a GET with
//! `Last-Event-ID` resumes the stream it names ([`stream`]): what the server sends for a client
//! whose stream broke is kept for it. What the server says of its own accord (its requests,
//! notifications) goes to the session's GET stream when one is open, else to a POST stream
//! still open, else waits ([`routes::BACKLOG`]) for the next GET stream. A response its client
//! does not read holds up the server's output once [`queue::STREAM_BYTES`] wait on it, as a
//! stdio client that does not read holds up a stdio server.
//!
//! At most [`HttpFront::max_sessions`] sessions (so processes) run at once, besides the
//! stateless one; past them, an `initialize` is refused with 503 and `Retry-After`. Every
//! process a session started is ended by the one path that ends a child server
//! ([`crate::upstream::child::end`]) and reaped, and, with the subreaper, what it left outside
//! its process group is reaped while the proxy runs and ended when it stops.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use http::{HeaderValue, Method, Request, Response, StatusCode};
use hyper::body::Incoming;

mod queue;
mod routes;
mod server;
mod stateless;
mod stream;

use server::Server;

use crate::engine::{Engine, report};
use crate::front::http::{Backend, Body, Listening, empty, read_body, refusal};
use crate::options::{ChildServer, HttpFront, Options};
use crate::upstream::child;
use crate::upstream::reaper::{Reaper, Swept};
use crate::wire::EVENT_STREAM;
use crate::wire::header::{LAST_EVENT_ID, PROTOCOL_VERSION, SESSION_ID};
use crate::wire::message::Sent;

/// What `Retry-After` says to a client refused for want of a session: a hint, since a session
/// ends when its client deletes it or it idles.
const RETRY_AFTER_SECONDS: u64 = 10;

/// Serves the HTTP front in front of a stdio server per session until a signal ends the
/// proxy; then ends every server, and what they left behind.
pub(crate) async fn serve(options: &Options, front: &HttpFront, server: &ChildServer) -> ExitCode {
    let engine = match Engine::open(options) {
        Ok(engine) => Arc::new(engine),
        Err(code) => return code,
    };
    let voice = engine.session();
    // Each session starts the server anew, on a client's first request: a command that cannot
    // start stops the proxy now, rather than fail every session after saying it listens.
    if let Err(why) = child::check(server) {
        report(&voice, &why);
        return ExitCode::from(2);
    }
    let (reaper, trouble) = Reaper::start(server.subreaper());
    if let Some(trouble) = trouble {
        report(&voice, &trouble);
    }
    let children = Arc::new(Children::new(engine, options, front, server, reaper));
    let sweeping = children.clone();
    // Dropped with the runtime, once the front has stopped.
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(sweep_every(sweeping.idle));
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            sweeping.sweep();
        }
    });
    crate::front::http::serve(front, options.max_message_bytes(), voice, children).await
}

/// How often sessions are looked over for idleness: a quarter of `idle`, from 100 ms to 30 s.
fn sweep_every(idle: Duration) -> Duration {
    (idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(30))
}

/// The stdio servers behind the front, one per session.
pub(crate) struct Children {
    engine: Arc<Engine>,
    server: ChildServer,
    grace: Duration,
    limit: usize,
    max_sessions: usize,
    idle: Duration,
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

impl Children {
    /// No server running yet: they start with their sessions.
    fn new(
        engine: Arc<Engine>,
        options: &Options,
        front: &HttpFront,
        server: &ChildServer,
        reaper: Reaper,
    ) -> Children {
        Children {
            engine,
            server: server.clone(),
            grace: options.grace(),
            limit: options.max_message_bytes(),
            max_sessions: front.max_sessions(),
            idle: front.session_idle(),
            reaper: Arc::new(Mutex::new(Some(reaper))),
            sessions: Mutex::new(HashMap::new()),
            stateless: Mutex::new(None),
        }
    }

    /// One request to the endpoint: a POST to a session (a new one for `initialize`, the
    /// stateless server's without one), its GET stream, or its DELETE.
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
                        Err(Refused::Full(running)) => return self.full(running, front),
                        Err(Refused::Failed(why)) => {
                            report(&front.voice, &why);
                            return refusal(StatusCode::BAD_GATEWAY, -32000, &why);
                        }
                    },
                };
                let streams = accepts_stream(&parts.headers);
                let primes = server.primes(&parts.headers);
                let mut response = server.post(&body, streams, primes).await;
                if let Some(id) = new_id.and_then(|id| HeaderValue::from_str(&id).ok()) {
                    response.headers_mut().insert(SESSION_ID, id);
                }
                response
            }
            Method::GET => match known {
                // An empty `Last-Event-ID` names no event: a new GET stream.
                Some(server) => {
                    match parts.headers.get(LAST_EVENT_ID).filter(|id| !id.is_empty()) {
                        Some(last) => server.resume(&String::from_utf8_lossy(last.as_bytes())),
                        None => server.listen(server.primes(&parts.headers)),
                    }
                }
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

    /// The 503 for an `initialize` past `--max-sessions`, with `running` sessions running.
    fn full(&self, running: usize, front: &Listening) -> Response<Body> {
        let why = format!(
            "{running} sessions are running, as many as --max-sessions allows; end one \
             (DELETE), or try again once one has ended (a session ends once idle for {} s, \
             --session-idle)",
            self.idle.as_secs()
        );
        report(&front.voice, &why);
        let mut response = refusal(StatusCode::SERVICE_UNAVAILABLE, -32000, &why);
        response.headers_mut().insert(
            http::header::RETRY_AFTER,
            HeaderValue::from(RETRY_AFTER_SECONDS),
        );
        response
    }

    /// The server of a session the client names; `None` for an id the proxy never gave or
    /// that has ended.
    fn known(&self, key: &str) -> Option<Arc<Server>> {
        let sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        let server = sessions.get(key)?.clone();
        server.touch();
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
                server.touch();
                return Ok((server.clone(), None));
            }
            let server = self.spawn(true).map_err(Refused::Failed)?;
            *stateless = Some(server.clone());
            return Ok((server, None));
        }
        self.sweep();
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        if sessions.len() >= self.max_sessions {
            return Err(Refused::Full(sessions.len()));
        }
        let server = self.spawn(false).map_err(Refused::Failed)?;
        let id = session_id();
        sessions.insert(id.clone(), server.clone());
        Ok((server, Some(id)))
    }

    /// Starts a server process for a new session (`stateless`: the stateless one).
    fn spawn(&self, stateless: bool) -> Result<Arc<Server>, String> {
        Server::start(
            &self.engine,
            &self.server,
            &self.reaper,
            stateless,
            self.limit,
        )
    }

    /// Ends every session whose server has gone, or that has been idle for `--session-idle`
    /// (the stateless server too, which the next stateless request starts again).
    fn sweep(&self) {
        let now = Instant::now();
        let mut ended = Vec::new();
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|_, server| {
                let gone = server.gone();
                let idle = !gone && server.idle(self.idle, now);
                if gone || idle {
                    ended.push((server.clone(), idle));
                }
                !(gone || idle)
            });
        {
            let mut stateless = self
                .stateless
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let idle = stateless
                .as_ref()
                .is_some_and(|server| !server.gone() && server.idle(self.idle, now));
            let gone = stateless.as_ref().is_some_and(|server| server.gone());
            if idle || gone {
                ended.extend(stateless.take().map(|server| (server, idle)));
            }
        }
        for (server, idle) in ended {
            if idle {
                report(
                    server.session(),
                    &format!(
                        "ended a session idle for {} s (no request named it, no client waited \
                         on it; --session-idle): its server is ended, and a request naming the \
                         session gets 404",
                        self.idle.as_secs()
                    ),
                );
            }
            let grace = self.grace;
            tokio::task::spawn_blocking(move || server.end(grace));
        }
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
            .map(|server| std::thread::spawn(move || server.end(grace)))
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
    /// As many sessions as the proxy runs are running: how many.
    Full(usize),
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

/// The first protocol revision whose clients read a priming event (an event with empty data):
/// an older client's reader may take it for a message it cannot parse (the official TypeScript
/// server primes no older client, for that reason).
const PRIMED_FROM: &str = "2025-11-25";

/// Whether a request's stream starts with a priming event: its `MCP-Protocol-Version` is
/// [`PRIMED_FROM`] or later (revisions are dates, so they compare as text).
fn primes(headers: &http::HeaderMap) -> bool {
    headers
        .get(PROTOCOL_VERSION)
        .and_then(|version| version.to_str().ok())
        .is_some_and(|version| version.trim() >= PRIMED_FROM)
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
