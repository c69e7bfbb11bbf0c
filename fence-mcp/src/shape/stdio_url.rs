//! Stdio front, URL upstream (`fence mcp --url URL`): each line the client writes is sent to the
//! upstream in a POST of its own, and every message of each response (a JSON body, or each
//! `message` event of a stream) goes through the gate and the session and out on stdout as a
//! line.
//!
//! The proxy is the HTTP client here, so it does what a client's transport does: it keeps the
//! `Mcp-Session-Id` the upstream gave in answer to `initialize` and the negotiated
//! `MCP-Protocol-Version`, sends both on every request after it, sends the 2026-07-28
//! protocol's `Mcp-Method` and `Mcp-Name` headers, opens the GET stream for the upstream's own
//! messages once the session is initialized, and deletes the session when the client leaves.

use std::collections::HashMap;
use std::io::BufReader;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use http::{HeaderMap, HeaderValue, Method, StatusCode};
use serde_json::value::RawValue;
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, JoinSet};

use crate::engine::{Deliver, Engine, collected, deliver, report};
use crate::gate::{self, Asked, Head, Passage};
use crate::json::Members;
use crate::lines::next_outcome;
use crate::options::{Options, RemoteServer};
use crate::session::{Outcome, Session, Side};
use crate::upstream::url::{Aside, Remote, Unread, error_chain, read_whole};
use crate::wire::header::{LAST_EVENT_ID, METHOD, NAME, PROTOCOL_VERSION, SESSION_ID};
use crate::wire::message::{ParamHeaders, Sent, header_value};
use crate::wire::sse::{Event, Framed, Framer};
use crate::wire::{BodyKind, EVENT_STREAM, answers, posting};

/// How many requests the client may have in flight at once; its next waits until one is
/// answered.
const MAX_FLIGHTS: usize = 256;

/// How many lines for the client's stdout may wait to be written: past them, reading the
/// upstream waits for the client to read.
const OUT_LINES: usize = 64;

/// What reading one response came to.
#[derive(Debug, Default)]
struct Read {
    /// What stopped it from answering, when it did not simply end.
    why: Option<String>,
    /// The id of its stream's last event, to resume it from.
    last_id: Option<String>,
    /// How many events it had.
    events: u32,
}

impl Read {
    fn failed(why: String) -> Read {
        Read {
            why: Some(why),
            ..Read::default()
        }
    }

    fn failed_or_done(why: Option<String>) -> Read {
        Read {
            why,
            ..Read::default()
        }
    }
}

/// The proxy's link to the upstream, shared by every request in flight.
struct Link {
    remote: Arc<Remote>,
    session: Session,
    limit: usize,
    /// Lines for the client's stdout.
    out: mpsc::Sender<Vec<u8>>,
    /// The proxy's own answers to the upstream's requests, on their way.
    aside: Aside,
    state: Mutex<LinkState>,
}

#[derive(Default)]
struct LinkState {
    session_id: Option<HeaderValue>,
    protocol: Option<HeaderValue>,
    /// Whether the GET stream was opened (it is, once, after `notifications/initialized`).
    listening: bool,
    /// Notes already made, so each is made once.
    said: Vec<&'static str>,
    /// The `Mcp-Param-*` headers the listed tools ask for.
    params: ParamHeaders,
    /// The flight of each POST of one request, by the request's id (its JSON text): a
    /// cancellation ends it, which closes the request's stream (in 2026-07-28, that is the
    /// cancellation).
    flying: HashMap<String, AbortHandle>,
}

/// Serves the stdio client on this process's stdin and stdout until it leaves.
pub(crate) async fn serve(options: &Options, server: &RemoteServer) -> ExitCode {
    let engine = match Engine::open(options) {
        Ok(engine) => engine,
        Err(code) => return code,
    };
    let remote = match Remote::new(server) {
        Ok(remote) => Arc::new(remote),
        Err(problem) => {
            report(&engine.session(), &problem);
            return ExitCode::from(2);
        }
    };
    let (input, output) = crate::front::stdio::client();
    let (out, lines) = mpsc::channel::<Vec<u8>>(OUT_LINES);
    thread::spawn(move || write_lines(&output, lines));
    let link = Arc::new(Link {
        remote,
        session: engine.session(),
        limit: options.max_message_bytes(),
        out,
        aside: Aside::default(),
        state: Mutex::new(LinkState::default()),
    });
    let (sent, mut to_send) = mpsc::channel::<Vec<u8>>(16);
    let reader = link.clone();
    thread::spawn(move || read_client(&reader, input, &sent));

    let mut flights = JoinSet::new();
    // Watched from here on: a signal stream made anew on each turn would miss a signal that
    // came between two.
    let mut signal = std::pin::pin!(crate::signals::signalled());
    let code = loop {
        tokio::select! {
            message = to_send.recv(), if flights.len() < MAX_FLIGHTS => match message {
                Some(message) => link.dispatch(message, &mut flights).await,
                None => break None,
            },
            signal = &mut signal => break Some(signal),
            Some(_) = flights.join_next(), if !flights.is_empty() => {}
        }
    };
    if code.is_none() {
        // The client closed its input: what is in flight may still be read.
        let _ = tokio::time::timeout(options.grace(), async {
            while flights.join_next().await.is_some() {}
        })
        .await;
    }
    flights.abort_all();
    link.delete().await;
    ExitCode::from(code.unwrap_or(0))
}

/// The id a `notifications/cancelled` names (`params.requestId`).
fn cancelled_id(message: &[u8]) -> Option<Box<RawValue>> {
    let raw = serde_json::from_slice::<&RawValue>(message).ok()?;
    let params = Members::of(Members::of(raw)?.one("params").ok()??)?;
    params.one("requestId").ok()?.map(RawValue::to_owned)
}

/// Writes each line to stdout, flushed, until the channel closes or the client stops reading.
fn write_lines(stdout: &std::io::Stdout, mut lines: mpsc::Receiver<Vec<u8>>) {
    let mut stdout = stdout.lock();
    while let Some(mut line) = lines.blocking_recv() {
        if crate::lines::write_line(&mut stdout, &mut line).is_err() {
            return;
        }
    }
}

/// Where a client line's outcome goes: on to the upstream's queue, back to stdout.
struct FromClient<'a> {
    line: &'a [u8],
    upstream: &'a mpsc::Sender<Vec<u8>>,
    out: &'a mpsc::Sender<Vec<u8>>,
}

impl Deliver for FromClient<'_> {
    fn as_it_came(&mut self) -> bool {
        self.upstream.blocking_send(self.line.to_vec()).is_ok()
    }

    fn onward(&mut self, message: Vec<u8>) -> bool {
        self.upstream.blocking_send(message).is_ok()
    }

    fn back(&mut self, message: Vec<u8>) {
        let _ = self.out.blocking_send(message);
    }
}

/// Reads the client's lines until its input ends: each goes through the session; what goes on
/// is sent to `upstream`, what goes back is written to the client.
fn read_client(proxy: &Link, input: std::io::Stdin, upstream: &mpsc::Sender<Vec<u8>>) {
    let mut reader = BufReader::with_capacity(1 << 16, input);
    let mut line = Vec::new();
    while let Some(outcome) = next_outcome(
        &proxy.session,
        proxy.limit,
        Side::Client,
        &mut reader,
        &mut line,
    ) {
        let mut to = FromClient {
            line: &line,
            upstream,
            out: &proxy.out,
        };
        if !deliver(&proxy.session, outcome, &mut to) {
            return;
        }
    }
}

impl Link {
    fn note_once(&self, key: &'static str, note: &str) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if !state.said.contains(&key) {
            state.said.push(key);
            drop(state);
            report(&self.session, note);
        }
    }

    /// The headers of a request in the session: its id and protocol version once known.
    fn session_headers(&self) -> HeaderMap {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let mut headers = HeaderMap::new();
        if let Some(id) = &state.session_id {
            headers.insert(SESSION_ID, id.clone());
        }
        if let Some(version) = &state.protocol {
            headers.insert(PROTOCOL_VERSION, version.clone());
        }
        headers
    }

    /// POSTs one message. An `initialize` is waited for up to its response's headers, which
    /// give the session everything after it needs; anything else is answered in the background.
    async fn dispatch(self: &Arc<Self>, message: Vec<u8>, flights: &mut JoinSet<()>) {
        let sent = Sent::read(&message);
        if sent.method.as_deref() == Some("notifications/cancelled") {
            self.cancel(&message);
        }
        let mut headers = self.json_headers();
        if let Some(method) = sent.method.as_deref().and_then(header_value) {
            headers.insert(METHOD, method);
        }
        if let Some(name) = sent.name.as_deref().and_then(header_value) {
            headers.insert(NAME, name);
        }
        if let (Some("tools/call"), Some(tool)) = (sent.method.as_deref(), sent.name.as_deref()) {
            let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            for (name, value) in state.params.headers(tool, &message) {
                if let Ok(name) = http::HeaderName::from_bytes(name.as_bytes()) {
                    headers.insert(name, value);
                }
            }
        }
        if let Some(version) = sent.protocol.as_deref().and_then(header_value) {
            headers.insert(PROTOCOL_VERSION, version);
        }
        let request = self.remote.request(Method::POST, &headers).body(message);
        let initialize = sent.method.as_deref() == Some("initialize");
        let initialized = sent.method.as_deref() == Some("notifications/initialized");
        if initialize {
            let response = request.send().await;
            if let Ok(response) = &response {
                self.keep_session(response.headers());
            }
            let link = self.clone();
            flights.spawn(async move { link.answered(&sent, response, true).await });
            return;
        }
        let link = self.clone();
        let alone = match sent.requests.as_slice() {
            [id] => Some(id.get().to_owned()),
            _ => None,
        };
        let key = alone.clone();
        let flight = flights.spawn(async move {
            let response = request.send().await;
            let accepted = response
                .as_ref()
                .is_ok_and(|response| response.status().is_success());
            link.answered(&sent, response, false).await;
            if let Some(key) = &key {
                let mut state = link.state.lock().unwrap_or_else(PoisonError::into_inner);
                if state
                    .flying
                    .get(key)
                    .is_some_and(|handle| handle.id() == tokio::task::id())
                {
                    state.flying.remove(key);
                }
            }
            if initialized && accepted {
                // Not a flight: the client leaving does not wait for it.
                tokio::spawn(async move { link.listen().await });
            }
        });
        if let Some(key) = alone {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.flying.insert(key, flight);
        }
    }

    /// A cancellation from the client (`message`): the flight of the request it names, when
    /// that request was a POST of its own, is ended, closing its stream, and the request
    /// forgotten (it wants no answer). The cancellation itself is still sent, for an upstream
    /// of the handshake era, which reads it.
    fn cancel(&self, message: &[u8]) {
        let Some(id) = cancelled_id(message) else {
            return;
        };
        let flight = {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.flying.remove(id.get())
        };
        if let Some(flight) = flight {
            flight.abort();
            let _ = self.session.abandon(&id, "the client cancelled it");
        }
    }

    fn keep_session(&self, headers: &HeaderMap) {
        if let Some(id) = headers.get(SESSION_ID) {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.session_id = Some(id.clone());
        }
    }

    /// Reads the response to one POST, and gives every request in it that was not answered an
    /// error. An event stream that ends (or breaks off) with a request unanswered is resumed
    /// with a GET and its last event's id, as a client's transport does, while that brings
    /// events (up to three times in a row without one, ten times in all).
    async fn answered(
        &self,
        sent: &Sent,
        response: reqwest::Result<reqwest::Response>,
        initialize: bool,
    ) {
        let mut read = match response {
            Ok(response) => self.read_response(response, initialize, sent.batch).await,
            Err(err) => Read::failed(self.unreachable(&err)),
        };
        let (mut tries, mut total) = (0, 0);
        while let Some(last_id) = read.last_id.clone() {
            let waiting = sent.requests.iter().any(|id| self.session.waiting(id));
            if !waiting || tries == 3 || total == 10 {
                break;
            }
            tries += 1;
            total += 1;
            let mut headers = self.session_headers();
            headers.insert(http::header::ACCEPT, HeaderValue::from_static(EVENT_STREAM));
            let Ok(id) = HeaderValue::from_str(&last_id) else {
                break;
            };
            headers.insert(LAST_EVENT_ID, id);
            tokio::time::sleep(Duration::from_millis(100 * tries)).await;
            match self.remote.request(Method::GET, &headers).send().await {
                Ok(response)
                    if response.status().is_success()
                        && gate::head(Asked::Get, response.status(), response.headers())
                            == Head::Events =>
                {
                    let resumed = self.read_stream(response, initialize).await;
                    if resumed.events > 0 {
                        tries = 0;
                    }
                    read = Read {
                        last_id: resumed.last_id.or(read.last_id),
                        ..resumed
                    };
                }
                Ok(_) | Err(_) => break,
            }
        }
        let why = read.why.unwrap_or_else(|| {
            format!(
                "the upstream {} ended its response without answering",
                self.remote.url()
            )
        });
        for id in &sent.requests {
            if let Some(error) = self.session.abandon(id, &why) {
                let _ = self.out.send(error).await;
            }
        }
    }

    fn unreachable(&self, err: &reqwest::Error) -> String {
        let why = format!(
            "cannot reach the upstream {}: {}",
            self.remote.url(),
            error_chain(err)
        );
        report(&self.session, &why);
        why
    }

    /// Reads a response's messages into the session: what stopped it from answering, when it
    /// is not simply over, and the id to resume its stream from.
    async fn read_response(
        &self,
        response: reqwest::Response,
        initialize: bool,
        batch: bool,
    ) -> Read {
        let head = gate::head(Asked::Post, response.status(), response.headers());
        if head == Head::Events {
            return self.read_stream(response, initialize).await;
        }
        Read::failed_or_done(self.read_other(response, head, initialize, batch).await)
    }

    /// Reads a response that is not an event stream; what stopped it from answering.
    async fn read_other(
        &self,
        response: reqwest::Response,
        head: Head,
        initialize: bool,
        batch: bool,
    ) -> Option<String> {
        let status = response.status();
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            let why = format!(
                "the upstream {} answered {status}: {}",
                self.remote.url(),
                self.remote.credentials_advice()
            );
            self.note_once("auth", &why);
            return Some(why);
        }
        if status == StatusCode::NOT_FOUND && self.session_headers().contains_key(SESSION_ID) {
            let why = format!(
                "the upstream {} no longer knows this session (404): it expired or the server \
                 restarted; restart the client to start a new one",
                self.remote.url()
            );
            self.note_once("expired", &why);
            return Some(why);
        }
        match head {
            Head::Withheld(why) => {
                self.note_once("withheld", why);
                Some(why.to_owned())
            }
            // A JSON body of an error status still carries JSON-RPC (an error for a request).
            Head::Json => self.read_json(response, initialize, batch).await,
            Head::Error if BodyKind::of(response.headers()) == BodyKind::Json => {
                self.read_json(response, initialize, batch).await
            }
            // Nothing a client reads as messages: nothing for a stdio client.
            Head::Inert => None,
            // An event stream of an error status is not read.
            Head::Events | Head::Error => Some(format!(
                "the upstream {} answered {status}",
                self.remote.url()
            )),
        }
    }

    /// Reads a JSON response into the session, each of its [`answers`] a line of its own.
    async fn read_json(
        &self,
        response: reqwest::Response,
        initialize: bool,
        batch: bool,
    ) -> Option<String> {
        let status = response.status();
        let body = match read_whole(response, self.limit).await {
            Ok(body) => body,
            Err(Unread::OverLimit(limit)) => {
                let why = Unread::over_limit(limit);
                report(&self.session, &why);
                return Some(why);
            }
            Err(Unread::Broke(err)) => return Some(self.unreachable(&err)),
        };
        if body.iter().all(u8::is_ascii_whitespace) {
            return (!status.is_success())
                .then(|| format!("the upstream {} answered {status}", self.remote.url()));
        }
        for message in answers(&body, batch) {
            self.upstream_message(message, initialize, None).await;
        }
        (!status.is_success())
            .then(|| format!("the upstream {} answered {status}", self.remote.url()))
    }

    /// Reads a stream's events until it ends or breaks off.
    async fn read_stream(&self, mut response: reqwest::Response, initialize: bool) -> Read {
        let mut framer = Framer::new(self.limit);
        let mut events = Vec::new();
        let mut read = Read::default();
        loop {
            let chunk = match response.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(err) => {
                    read.why = Some(format!(
                        "the upstream's event stream broke off: {}",
                        error_chain(&err)
                    ));
                    break;
                }
            };
            framer.feed(&chunk, &mut events);
            for framed in events.drain(..) {
                self.framed(framed, initialize, &mut read).await;
            }
        }
        if let Some(framed) = framer.finish() {
            self.framed(framed, initialize, &mut read).await;
        }
        read
    }

    async fn framed(&self, framed: Framed, initialize: bool, read: &mut Read) {
        read.events += 1;
        match framed {
            Framed::Event(raw) => {
                let event = Event::read(&raw);
                if let Some(id) = event.id() {
                    read.last_id =
                        Some(String::from_utf8_lossy(id).into_owned()).filter(|id| !id.is_empty());
                }
                // An event that is no message has nothing for a stdio client.
                if let Passage::Read(outcome) = gate::event(&self.session, &event) {
                    let message = event.message().unwrap_or_default();
                    self.upstream_message(message, initialize, Some(outcome))
                        .await;
                }
            }
            Framed::Oversized(size) => report(
                &self.session,
                &format!(
                    "dropped an event of {size} bytes from the upstream, over the {}-byte limit \
                     (--max-message-bytes)",
                    self.limit
                ),
            ),
        }
    }

    /// One message from the upstream, and what the gate read of it (`None`: not read yet, as
    /// for each message of a JSON body): through the session, then to the client; what goes
    /// back to the upstream is sent in a POST of its own.
    async fn upstream_message(&self, message: &[u8], initialize: bool, read: Option<Outcome>) {
        if initialize {
            self.keep_protocol(message);
        }
        let outcome = read.unwrap_or_else(|| gate::message(&self.session, message));
        let mut replies = Vec::new();
        let onward = collected(&self.session, outcome, message, |reply| replies.push(reply));
        if !onward.is_empty() {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.params.learn(message);
        }
        for line in onward {
            let _ = self.out.send(line).await;
        }
        for reply in replies {
            let request = self
                .remote
                .request(Method::POST, &self.json_headers())
                .body(reply);
            self.aside.send(request).await;
        }
    }

    /// The headers of a JSON-RPC POST in the session.
    fn json_headers(&self) -> HeaderMap {
        let mut headers = self.session_headers();
        posting(&mut headers);
        headers
    }

    /// Keeps the protocol version an `initialize` answer negotiated, for the header.
    fn keep_protocol(&self, message: &[u8]) {
        #[derive(serde::Deserialize)]
        struct Answer<'a> {
            #[serde(borrow)]
            result: Option<Negotiated<'a>>,
        }
        #[derive(serde::Deserialize)]
        struct Negotiated<'a> {
            #[serde(rename = "protocolVersion", borrow)]
            protocol_version: Option<std::borrow::Cow<'a, str>>,
        }
        let version = serde_json::from_slice::<Answer<'_>>(message)
            .ok()
            .and_then(|answer| answer.result?.protocol_version)
            .and_then(|version| HeaderValue::from_str(&version).ok());
        if let Some(version) = version {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.protocol = Some(version);
        }
    }

    /// Opens the GET stream the upstream sends its own messages on, once, and keeps it open:
    /// when it ends, it is opened again (with `Last-Event-ID`, so nothing is missed) after the
    /// upstream's `retry`, while the session lasts. A server without one answers 405.
    async fn listen(&self) {
        {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            if state.listening || state.session_id.is_none() {
                return;
            }
            state.listening = true;
        }
        let mut last_id: Option<String> = None;
        let mut failures = 0u32;
        while failures < 5 {
            let mut headers = self.session_headers();
            headers.insert(http::header::ACCEPT, HeaderValue::from_static(EVENT_STREAM));
            if let Some(id) = last_id
                .as_deref()
                .and_then(|id| HeaderValue::from_str(id).ok())
            {
                headers.insert(LAST_EVENT_ID, id);
            }
            let response = self.remote.request(Method::GET, &headers).send().await;
            match response {
                Ok(response)
                    if response.status().is_success()
                        && gate::head(Asked::Get, response.status(), response.headers())
                            == Head::Events =>
                {
                    failures = 0;
                    let read = self.read_stream(response, false).await;
                    last_id = read.last_id.or(last_id);
                    if read.why.is_some() {
                        failures += 1;
                    }
                }
                Ok(response) if response.status() == StatusCode::METHOD_NOT_ALLOWED => return,
                Ok(response) if response.status() == StatusCode::NOT_FOUND => return,
                Ok(_) | Err(_) => failures += 1,
            }
            tokio::time::sleep(Duration::from_millis(500 << failures.min(4))).await;
        }
    }

    /// Ends the session upstream, when there is one (a server that keeps none answers 405).
    async fn delete(&self) {
        let headers = self.session_headers();
        if !headers.contains_key(SESSION_ID) {
            return;
        }
        let request = self.remote.request(Method::DELETE, &headers).send();
        let _ = tokio::time::timeout(Duration::from_secs(2), request).await;
    }
}
