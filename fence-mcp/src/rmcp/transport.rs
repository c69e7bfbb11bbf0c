//! [`FencedTransport`]: an rmcp client transport with the proxy inside it. Every message the
//! client sends, and every message the server sends, passes the proxy's own session on its way,
//! the server's through the gate, as a stdio line through `fence mcp` does; what comes out is
//! what the proxy would write, read back into rmcp's types. So the table is the proxy's by
//! construction, for every method rmcp has or will have.
//!
//! rmcp's transports hand over typed messages, not bytes. A message is written out as the JSON
//! its type serialises to, which is all rmcp would hand the program of it, read by the session,
//! and read back into rmcp's type when the session rewrote it. Whatever cannot make that round
//! is withheld, and the request waiting on it gets an error instead, as through the proxy.

use std::collections::VecDeque;

use rmcp::ErrorData;
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use serde::Deserialize;
use tokio::sync::mpsc;

use crate::engine::{Deliver, deliver, report};
use crate::gate;
use crate::session::Session;

/// What the session calls the server until its `initialize` answer gives its name: in the
/// notes on stderr, and in `mcp:<name>`, the source of a task's result whose start it did not
/// see.
const UNNAMED: &str = "server";

/// How many of the proxy's own answers to the client's requests (a request refused, as one
/// sent after the server closed its output) wait for the client to read them. Past it, sending
/// the next request waits.
pub(crate) const REFUSALS_WAITING: usize = 64;

/// An rmcp client transport whose messages pass the proxy's fencing table: each tool result
/// fenced, each resource's text fenced, the server's words about itself and every error
/// neutralised, what cannot be fenced withheld, as `fence mcp` does. Serve a client over it
/// (`handler.serve(FencedTransport::new(transport))`, or [`FencedClient::serve`]), and every
/// method of the client, rmcp's own included, receives what the proxy would have passed on.
///
/// What the proxy would say on stderr (what it withheld or dropped, and why), the transport
/// says on stderr, each line prefixed `fence mcp (<the server's name>): `.
///
/// [`FencedClient::serve`]: super::FencedClient::serve
#[derive(Debug)]
pub struct FencedTransport<T> {
    inner: T,
    session: Session,
    /// Messages for the client, read and fenced, not handed over yet: what one message of the
    /// server's became, or the errors for every waiting request once the server closed.
    ready: VecDeque<ServerJsonRpcMessage>,
    /// The proxy's own answers to the client's requests, from [`Transport::send`].
    refusals: mpsc::Receiver<ServerJsonRpcMessage>,
    refuse: mpsc::Sender<ServerJsonRpcMessage>,
    /// The server closed its output: once `ready` is empty, nothing more comes.
    closed: bool,
}

impl<T: Transport<RoleClient>> FencedTransport<T> {
    /// `inner` with the proxy's table on every message through it.
    pub fn new(inner: T) -> FencedTransport<T> {
        let (refuse, refusals) = mpsc::channel(REFUSALS_WAITING);
        FencedTransport {
            inner,
            session: Session::new(UNNAMED.to_owned(), false),
            ready: VecDeque::new(),
            refusals,
            refuse,
            closed: false,
        }
    }

    /// Results lose their `structuredContent`, and listed tools their `outputSchema`, rather
    /// than keep them neutralised: what `fence mcp --structured-content remove` does.
    #[must_use]
    pub fn removing_structured_content(self) -> FencedTransport<T> {
        FencedTransport {
            session: self.session.removing_structured_content(),
            ..self
        }
    }

    /// One message from the server (`None`: the server closed its output), through the gate:
    /// what the client is to read of it goes into `ready`.
    fn read(&mut self, message: Option<ServerJsonRpcMessage>) {
        let Some(message) = message else {
            self.closed = true;
            for error in self.session.upstream_gone() {
                self.ready.extend(for_client(&self.session, &error));
            }
            return;
        };
        let json = match serde_json::to_vec(&message) {
            Ok(json) => json,
            Err(error) => {
                let why = format!("it does not serialise as JSON ({error})");
                self.ready
                    .extend(withheld(&self.session, answered(&message), &why));
                return;
            }
        };
        let outcome = gate::message(&self.session, &json);
        let mut to = ToClient {
            session: &self.session,
            came: Some(message),
            ready: &mut self.ready,
        };
        deliver(&self.session, outcome, &mut to);
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for FencedTransport<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let mut to = ToServer {
            session: &self.session,
            came: None,
            id: asked(&item),
            onward: None,
            back: Vec::new(),
        };
        match serde_json::to_vec(&item) {
            Ok(json) => {
                to.came = Some(item);
                let outcome = self.session.client_line(&json);
                deliver(&self.session, outcome, &mut to);
            }
            Err(error) => {
                let why = format!("it does not serialise as JSON ({error})");
                to.back.extend(refused(&self.session, to.id.clone(), &why));
            }
        }
        let (onward, back) = (to.onward, to.back);
        // One send at most: the future rmcp's `send` gives holds `inner` for as long as it lives.
        let send = onward.map(|message| self.inner.send(message));
        let refuse = self.refuse.clone();
        async move {
            if let Some(send) = send {
                send.await?;
            }
            for message in back {
                // Closed only once the transport is gone, and with it whoever would read it.
                if refuse.send(message).await.is_err() {
                    break;
                }
            }
            Ok(())
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            if let Some(message) = self.ready.pop_front() {
                return Some(message);
            }
            if self.closed {
                return None;
            }
            // Each branch gives up nothing when another wins: a message `inner` gave is read
            // before this returns, with no await in between.
            let message = tokio::select! {
                biased;
                Some(refusal) = self.refusals.recv() => return Some(refusal),
                message = self.inner.receive() => message,
            };
            self.read(message);
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// The id of the request a client's message is, if it is one: what a refusal answers.
fn asked(message: &ClientJsonRpcMessage) -> Option<RequestId> {
    match message {
        JsonRpcMessage::Request(request) => Some(request.id.clone()),
        _ => None,
    }
}

/// The id of the request a server's message answers, if it is an answer.
fn answered(message: &ServerJsonRpcMessage) -> Option<RequestId> {
    match message {
        JsonRpcMessage::Response(response) => Some(response.id.clone()),
        JsonRpcMessage::Error(error) => error.id.clone(),
        _ => None,
    }
}

/// A message of the server's that the table cannot pass (`why`): reported; the request it
/// answers, if any, gets an error in its place.
fn withheld(session: &Session, id: Option<RequestId>, why: &str) -> Option<ServerJsonRpcMessage> {
    report(
        session,
        &format!("withheld a message from the server: {why}"),
    );
    id.map(|id| {
        let message = format!("fence mcp: withheld the answer of the server: {why}");
        ServerJsonRpcMessage::error(ErrorData::internal_error(message, None), Some(id))
    })
}

/// A message of the client's that cannot be sent through the table (`why`): reported; the
/// client gets an error for it when it is a request.
fn refused(session: &Session, id: Option<RequestId>, why: &str) -> Option<ServerJsonRpcMessage> {
    report(
        session,
        &format!("refused a message from the client: {why}"),
    );
    id.map(|id| {
        let message = format!("fence mcp: the request cannot be sent: {why}");
        ServerJsonRpcMessage::error(ErrorData::internal_error(message, None), Some(id))
    })
}

/// The id of a JSON-RPC message, when it has one rmcp reads.
#[derive(Deserialize)]
struct Id {
    id: Option<RequestId>,
}

/// A message the session wrote for the client, in rmcp's type; when it does not read as one,
/// withheld (see [`withheld`]).
fn for_client(session: &Session, message: &[u8]) -> Option<ServerJsonRpcMessage> {
    serde_json::from_slice(message).unwrap_or_else(|error| {
        let id = serde_json::from_slice::<Id>(message)
            .ok()
            .and_then(|read| read.id);
        let why = format!("fenced, it no longer reads as rmcp's message ({error})");
        withheld(session, id, &why)
    })
}

/// Where the outcome of a server's message goes: to the client, as rmcp's type.
struct ToClient<'a> {
    session: &'a Session,
    /// The message as it came, until it goes on as it came.
    came: Option<ServerJsonRpcMessage>,
    ready: &'a mut VecDeque<ServerJsonRpcMessage>,
}

impl Deliver for ToClient<'_> {
    fn as_it_came(&mut self) -> bool {
        self.ready.extend(self.came.take());
        true
    }

    fn onward(&mut self, message: Vec<u8>) -> bool {
        self.ready.extend(for_client(self.session, &message));
        true
    }

    fn back(&mut self, _message: Vec<u8>) {
        // The session answers the server only for a line too long to hold, which a typed
        // transport never hands over.
        report(
            self.session,
            "dropped a message of the proxy's own for the server: a client's transport does not send one",
        );
    }
}

/// Where the outcome of a client's message goes: on to the server, or back to the client, in
/// rmcp's types.
struct ToServer<'a> {
    session: &'a Session,
    /// The message as it came, until it goes on as it came.
    came: Option<ClientJsonRpcMessage>,
    /// The id of the request the message is, if it is one.
    id: Option<RequestId>,
    /// What goes on: one message at most, as one message of the client's is one message on.
    onward: Option<ClientJsonRpcMessage>,
    back: Vec<ServerJsonRpcMessage>,
}

impl ToServer<'_> {
    /// `message` goes on, unless one already does: the session passes a message of the
    /// client's on as one message (it sends the proxy's own after it only for a line too long
    /// to hold, which rmcp never hands over).
    fn on(&mut self, message: ClientJsonRpcMessage) {
        if self.onward.is_some() {
            let why = "the proxy would send two messages for it, and a transport sends one";
            self.back
                .extend(refused(self.session, self.id.clone(), why));
            return;
        }
        self.onward = Some(message);
    }
}

impl Deliver for ToServer<'_> {
    fn as_it_came(&mut self) -> bool {
        if let Some(message) = self.came.take() {
            self.on(message);
        }
        true
    }

    fn onward(&mut self, message: Vec<u8>) -> bool {
        match serde_json::from_slice(&message) {
            Ok(message) => self.on(message),
            Err(error) => {
                let why =
                    format!("as the proxy passes it on, it no longer reads as rmcp's ({error})");
                self.back
                    .extend(refused(self.session, self.id.clone(), &why));
            }
        }
        true
    }

    fn back(&mut self, message: Vec<u8>) {
        self.back.extend(for_client(self.session, &message));
    }
}
