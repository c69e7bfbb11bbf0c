//! Stdio front, URL upstream (`fence mcp --url URL`): each line the client writes is sent to the
//! upstream in a POST of its own, and every message of each response (a JSON body, or each
//! `message` event of a stream) goes through the gate and the session and out on stdout as a
//! line.
//!
//! The proxy is the HTTP client here, so it does what a client's transport does: it keeps the
//! `Mcp-Session-Id` the upstream gave in answer to `initialize` and the negotiated
//! `MCP-Protocol-Version`, sends both on every request after it, sends the 2026-07-28
//! protocol's `Mcp-Method` and `Mcp-Name` headers, opens the GET stream for the upstream's own
//! messages once the session is initialized (before the client's next message goes up, as the
//! SDKs' clients open it before their next request), and deletes the session when the client
//! leaves.

use std::collections::HashMap;
use std::io::BufReader;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use http::{HeaderMap, HeaderValue, Method};
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};
use tokio::task::{AbortHandle, JoinSet};

use crate::engine::{Deliver, Engine, collected, deliver, report};
use crate::gate;
use crate::json::Members;
use crate::lines::next_outcome;
use crate::options::{Options, RemoteServer};
use crate::session::{Outcome, Session, Side};
use crate::upstream::url::{Aside, Remote};
use crate::wire::header::{METHOD, NAME, PROTOCOL_VERSION, SESSION_ID};
use crate::wire::message::{ParamHeaders, Sent, header_value, negotiated};
use crate::wire::posting;

mod read;

/// How many requests the client may have in flight at once; its next waits until one is
/// answered.
const MAX_FLIGHTS: usize = 256;

/// How many lines for the client's stdout may wait to be written: past them, reading the
/// upstream waits for the client to read.
const OUT_LINES: usize = 64;

/// How long the client's next message waits, once `notifications/initialized` is accepted, for
/// the upstream to answer the GET stream's request with its head: a server that sends a request
/// of its own on the GET stream as soon as the client's next request arrives (an elicitation
/// from a tool) finds the stream open. Past it, the message goes up all the same.
const GET_STREAM_OPENING: Duration = Duration::from_secs(3);

/// How long to wait before reconnecting a stream whose server named no `retry`: what both
/// official SDKs' clients wait.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);

/// The longest wait a server's `retry` is honoured up to; past it, the proxy reconnects after
/// this long (a client's request would time out before a longer wait ended).
const RETRY_CEILING: Duration = Duration::from_secs(60);

/// How many reconnects of one stream in a row may bring no event before the proxy gives it up:
/// a reconnect that brings one starts the count again.
const MAX_EMPTY_RESUMES: u32 = 8;

/// What reading one response came to.
#[derive(Debug, Default)]
struct Read {
    /// What stopped it from answering, when it did not simply end.
    why: Option<String>,
    /// The id of its stream's last event, to resume it from.
    last_id: Option<String>,
    /// The last `retry` its stream named, in milliseconds.
    retry: Option<u64>,
    /// How many events it had.
    events: u32,
}

impl Read {
    /// What reading a stream resumed after `self` came to: its own id and `retry`, else still
    /// those of the stream before it.
    fn then(self, resumed: Read) -> Read {
        Read {
            last_id: resumed.last_id.or(self.last_id),
            retry: resumed.retry.or(self.retry),
            ..resumed
        }
    }

    /// How long to wait before reconnecting the stream: its server's last `retry`, up to
    /// [`RETRY_CEILING`], else [`DEFAULT_RETRY`].
    fn wait(&self) -> Duration {
        self.retry.map_or(DEFAULT_RETRY, |ms| {
            Duration::from_millis(ms).min(RETRY_CEILING)
        })
    }

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
        // Told once the GET stream has its head (or could not be opened; dropped unsent when
        // it is not opened at all).
        let (opened, open) = oneshot::channel::<()>();
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
                tokio::spawn(async move { link.listen(Some(opened)).await });
            }
        });
        if let Some(key) = alone {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.flying.insert(key, flight);
        }
        if initialized {
            // The client's next message waits here: the loop that reads them is the caller.
            let _ = tokio::time::timeout(GET_STREAM_OPENING, open).await;
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
    /// with a GET and its last event's id, as a client's transport does, after the wait its
    /// server's last `retry` asked, for as long as the server keeps it resumable: until a GET
    /// is refused (404, 405), or [`MAX_EMPTY_RESUMES`] reconnects in a row bring no event.
    async fn answered(
        &self,
        sent: &Sent,
        response: reqwest::Result<reqwest::Response>,
        initialize: bool,
    ) {
        let mut read = match response {
            Ok(response) => self.read_response(response, initialize, sent).await,
            Err(err) => Read::failed(self.unreachable(&err)),
        };
        let mut empty = 0;
        while let Some(last_id) = read.last_id.clone() {
            if !sent.requests.iter().any(|id| self.session.waiting(id)) {
                break;
            }
            if empty == MAX_EMPTY_RESUMES {
                read.why = Some(format!(
                    "the upstream {} ended its event stream without answering, and {empty} \
                     reconnects in a row (GET with Last-Event-ID) brought no event",
                    self.remote.url()
                ));
                break;
            }
            tokio::time::sleep(read.wait()).await;
            match self.resume(&last_id, initialize, &mut None).await {
                Ok(resumed) => {
                    empty = if resumed.events > 0 { 0 } else { empty + 1 };
                    read = read.then(resumed);
                }
                Err(Some(refused)) => {
                    read.why.get_or_insert(refused);
                    break;
                }
                Err(None) => empty += 1,
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
        if let Some(version) = negotiated(message).and_then(|v| HeaderValue::from_str(&v).ok()) {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.protocol = Some(version);
        }
    }

    /// Opens the GET stream the upstream sends its own messages on, once, and keeps it open:
    /// when it ends, it is opened again (with `Last-Event-ID`, so nothing is missed) after the
    /// upstream's `retry`, while the session lasts, until a GET is refused (404, 405: a server
    /// without one) or [`MAX_EMPTY_RESUMES`] in a row bring no event. `opened` is told when the
    /// first GET has its answer's head, or failed.
    async fn listen(&self, mut opened: Option<oneshot::Sender<()>>) {
        {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            if state.listening || state.session_id.is_none() {
                return;
            }
            state.listening = true;
        }
        let mut read = Read::default();
        let mut empty = 0;
        while empty < MAX_EMPTY_RESUMES {
            let last_id = read.last_id.clone().unwrap_or_default();
            match self.resume(&last_id, false, &mut opened).await {
                Ok(resumed) => {
                    empty = if resumed.events > 0 { 0 } else { empty + 1 };
                    read = read.then(resumed);
                }
                Err(Some(_)) => return,
                Err(None) => empty += 1,
            }
            tokio::time::sleep(read.wait()).await;
        }
        report(
            &self.session,
            &format!(
                "stopped listening on the upstream's GET stream: {empty} reconnects in a row \
                 brought no event; what the server sends of its own accord no longer reaches \
                 the client"
            ),
        );
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
