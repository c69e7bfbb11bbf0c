//! Reading the upstream's responses: a JSON body, an error status's body, an event stream (and
//! one resumed with `Last-Event-ID`), each message through the gate into the session.

use http::{HeaderValue, Method, StatusCode};
use tokio::sync::oneshot;

use super::{Link, Read};
use crate::engine::report;
use crate::gate::{self, Asked, ErrorBody, Head, Passage};
use crate::upstream::url::{Unread, error_chain, read_whole};
use crate::wire::header::{LAST_EVENT_ID, SESSION_ID};
use crate::wire::message::Sent;
use crate::wire::sse::{Event, Framed, Framer};
use crate::wire::{EVENT_STREAM, answers};

impl Link {
    /// Reconnects a stream with a GET after its event `last_id` (none: the GET stream, opened
    /// anew), and reads it. Not read: `Some` when the upstream refuses to resume it (404: the
    /// session is gone; 405: it serves no GET), why; `None` when this reconnect failed.
    pub(super) async fn resume(
        &self,
        last_id: &str,
        initialize: bool,
        opened: &mut Option<oneshot::Sender<()>>,
    ) -> Result<Read, Option<String>> {
        let mut headers = self.session_headers();
        headers.insert(http::header::ACCEPT, HeaderValue::from_static(EVENT_STREAM));
        if !last_id.is_empty() {
            let id = HeaderValue::from_str(last_id).map_err(|_| None)?;
            headers.insert(LAST_EVENT_ID, id);
        }
        let response = self.remote.request(Method::GET, &headers).send().await;
        if let Some(opened) = opened.take() {
            let _ = opened.send(());
        }
        match response {
            Ok(response)
                if response.status().is_success()
                    && gate::head(Asked::Get, response.status(), response.headers())
                        == Head::Events =>
            {
                Ok(self.read_stream(response, initialize).await)
            }
            Ok(response)
                if matches!(
                    response.status(),
                    StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED
                ) =>
            {
                Err(Some(format!(
                    "the upstream {} ended its response without answering, and refused to \
                     resume its event stream ({})",
                    self.remote.url(),
                    response.status()
                )))
            }
            Ok(_) | Err(_) => Err(None),
        }
    }

    pub(super) fn unreachable(&self, err: &reqwest::Error) -> String {
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
    pub(super) async fn read_response(
        &self,
        response: reqwest::Response,
        initialize: bool,
        sent: &Sent,
    ) -> Read {
        let head = gate::head(Asked::Post, response.status(), response.headers());
        if head == Head::Events {
            return self.read_stream(response, initialize).await;
        }
        Read::failed_or_done(self.read_other(response, head, initialize, sent).await)
    }

    /// Reads a response that is not an event stream, answering `sent`; what stopped it from
    /// answering.
    pub(super) async fn read_other(
        &self,
        response: reqwest::Response,
        head: Head,
        initialize: bool,
        sent: &Sent,
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
            // The upstream's own error, when it sent one, answers the requests.
            let _ = self.read_error(response, initialize, sent).await;
            return Some(why);
        }
        match head {
            Head::Withheld(why) => {
                self.note_once("withheld", why);
                Some(why.to_owned())
            }
            Head::Json => self.read_json(response, initialize, sent).await,
            // The body of an error status still carries JSON-RPC (an error for a request, or
            // one with no id for the POST's requests), whatever its type says.
            Head::Error => self.read_error(response, initialize, sent).await,
            // Nothing a client reads as messages: nothing for a stdio client.
            Head::Inert => None,
            // Never for a POST's answer, which `read_response` reads as a stream.
            Head::Events => Some(format!(
                "the upstream {} answered {status}",
                self.remote.url()
            )),
        }
    }

    /// A response's body, whole; why not, reported, when it cannot be read.
    pub(super) async fn body(&self, response: reqwest::Response) -> Result<Vec<u8>, String> {
        match read_whole(response, self.limit).await {
            Ok(body) => Ok(body),
            Err(Unread::OverLimit(limit)) => {
                let why = Unread::over_limit(limit);
                report(&self.session, &why);
                Err(why)
            }
            Err(Unread::Broke(err)) => Err(self.unreachable(&err)),
        }
    }

    /// Reads an error status's body, answering `sent`: its JSON-RPC messages through the gate
    /// into the session, anything else not at all (no client reads it as messages). Says
    /// what stopped it from answering: the status.
    pub(super) async fn read_error(
        &self,
        response: reqwest::Response,
        initialize: bool,
        sent: &Sent,
    ) -> Option<String> {
        let status = response.status();
        let body = match self.body(response).await {
            Ok(body) => body,
            Err(why) => return Some(why),
        };
        if let ErrorBody::Messages(messages) = gate::error_body(&body) {
            for message in messages {
                let read = gate::answering(&self.session, message, &sent.requests);
                self.upstream_message(message, initialize, Some(read)).await;
            }
        }
        Some(format!(
            "the upstream {} answered {status}",
            self.remote.url()
        ))
    }

    /// Reads a JSON response answering `sent` into the session, each of its [`answers`] a
    /// line of its own.
    pub(super) async fn read_json(
        &self,
        response: reqwest::Response,
        initialize: bool,
        sent: &Sent,
    ) -> Option<String> {
        let body = match self.body(response).await {
            Ok(body) => body,
            Err(why) => return Some(why),
        };
        if body.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        for message in answers(&body, sent.batch) {
            let read = gate::answering(&self.session, message, &sent.requests);
            self.upstream_message(message, initialize, Some(read)).await;
        }
        None
    }

    /// Reads a stream's events until it ends or breaks off.
    pub(super) async fn read_stream(
        &self,
        mut response: reqwest::Response,
        initialize: bool,
    ) -> Read {
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

    pub(super) async fn framed(&self, framed: Framed, initialize: bool, read: &mut Read) {
        read.events += 1;
        match framed {
            Framed::Event(raw) => {
                let event = Event::read(&raw);
                if let Some(id) = event.id() {
                    read.last_id =
                        Some(String::from_utf8_lossy(id).into_owned()).filter(|id| !id.is_empty());
                }
                read.retry = event.retry().or(read.retry);
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
}
