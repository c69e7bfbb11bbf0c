//! Streamable HTTP as both halves speak it: the media types and headers the proxy reads, the
//! messages of a JSON body, server-sent events ([`sse`]), and what the proxy reads of the
//! messages it sends ([`message`]). No I/O here: the front serves, the upstream requests.

pub(crate) mod message;
pub(crate) mod sse;

/// The headers of Streamable HTTP the proxy reads or writes, by name.
pub(crate) mod header {
    /// The session a request belongs to, as the server named it.
    pub(crate) const SESSION_ID: &str = "mcp-session-id";
    /// The protocol version the session negotiated.
    pub(crate) const PROTOCOL_VERSION: &str = "mcp-protocol-version";
    /// The last event a client received on a stream it resumes.
    pub(crate) const LAST_EVENT_ID: &str = "last-event-id";
    /// The 2026-07-28 protocol's repetition of a request's method.
    pub(crate) const METHOD: &str = "mcp-method";
    /// The 2026-07-28 protocol's repetition of a request's name, URI or task id.
    pub(crate) const NAME: &str = "mcp-name";
    /// The prefix of the 2026-07-28 protocol's headers repeating a tool's arguments.
    pub(crate) const PARAM_PREFIX: &str = "mcp-param-";
}

/// The media types the proxy reads.
pub(crate) const JSON: &str = "application/json";
pub(crate) const EVENT_STREAM: &str = "text/event-stream";

/// What a body's `Content-Type` says it is, to the most lenient of the official clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyKind {
    Json,
    EventStream,
    Other,
}

impl BodyKind {
    /// The kind of a body with these headers, as the most lenient client reads them. The
    /// TypeScript SDK reads an event stream when the type *includes* `text/event-stream`, and
    /// else JSON when it includes `application/json` (`fetch` joins several `Content-Type`
    /// headers with `, `); the Python SDK lowercases the type (decoded as Latin-1) and reads
    /// the part before `;`. So the proxy reads every `Content-Type` header, as Latin-1,
    /// lowercased, and takes the first of the two it finds anywhere in them: whatever it
    /// reads the body as, it writes its own `Content-Type` for it, so every client then reads
    /// the body as the proxy did.
    pub(crate) fn of(headers: &http::HeaderMap) -> BodyKind {
        let mut types = Vec::new();
        for value in headers.get_all(http::header::CONTENT_TYPE) {
            types.extend(value.as_bytes().iter().map(u8::to_ascii_lowercase));
            types.extend_from_slice(b", ");
        }
        if memchr::memmem::find(&types, EVENT_STREAM.as_bytes()).is_some() {
            BodyKind::EventStream
        } else if memchr::memmem::find(&types, JSON.as_bytes()).is_some() {
            BodyKind::Json
        } else {
            BodyKind::Other
        }
    }

    /// The `Content-Type` the proxy writes for a body of this kind it read and rewrote.
    pub(crate) fn content_type(self) -> Option<http::HeaderValue> {
        match self {
            BodyKind::Json => Some(http::HeaderValue::from_static(JSON)),
            BodyKind::EventStream => Some(http::HeaderValue::from_static(EVENT_STREAM)),
            BodyKind::Other => None,
        }
    }
}

/// Adds what a JSON-RPC POST of the proxy's own says of its body and of the answer it takes:
/// `Content-Type: application/json`, and `Accept` for a JSON body or an event stream.
pub(crate) fn posting(headers: &mut http::HeaderMap) {
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(JSON),
    );
    headers.insert(
        http::header::ACCEPT,
        http::HeaderValue::from_static("application/json, text/event-stream"),
    );
}

/// Whether a body was sent compressed (`Content-Encoding` other than `identity`): the proxy
/// asks for none, and cannot rewrite one.
pub(crate) fn compressed(headers: &http::HeaderMap) -> bool {
    headers
        .get_all(http::header::CONTENT_ENCODING)
        .iter()
        .any(|value| {
            value
                .to_str()
                .map_or(true, |value| !value.trim().eq_ignore_ascii_case("identity"))
        })
}

/// Headers that belong to one connection (RFC 9110, 7.6.1), which a proxy never forwards.
pub(crate) fn hop_by_hop(name: &http::HeaderName, connection: &http::HeaderMap) -> bool {
    const HOP_BY_HOP: [&str; 8] = [
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
    ];
    HOP_BY_HOP.contains(&name.as_str())
        || name == http::header::UPGRADE
        || connection
            .get_all(http::header::CONNECTION)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .any(|listed| listed.trim().eq_ignore_ascii_case(name.as_str()))
}

/// The messages of a JSON body answering a POST (`batch`: one that was a batch): the body,
/// or, when it is a batch though the POST was none (a server may answer so), each of its
/// messages, for a client that sent no batch refuses one.
pub(crate) fn answers(body: &[u8], batch: bool) -> Vec<&[u8]> {
    let elements = serde_json::from_slice::<&serde_json::value::RawValue>(body)
        .ok()
        .filter(|raw| !batch && raw.get().starts_with('['))
        .and_then(crate::json::elements)
        .filter(|elements| !elements.is_empty());
    match elements {
        Some(elements) => elements
            .into_iter()
            .map(|message| message.get().as_bytes())
            .collect(),
        None => vec![body],
    }
}

/// One message as it is, several as a JSON-RPC batch.
pub(crate) fn joined(mut messages: Vec<Vec<u8>>) -> Vec<u8> {
    if messages.len() == 1 {
        return messages.pop().unwrap_or_default();
    }
    batch(&messages)
}

/// A JSON-RPC batch of `messages`, however many.
pub(crate) fn batch(messages: &[Vec<u8>]) -> Vec<u8> {
    let mut out =
        Vec::with_capacity(messages.iter().map(Vec::len).sum::<usize>() + messages.len() + 1);
    out.push(b'[');
    for (at, message) in messages.iter().enumerate() {
        if at > 0 {
            out.push(b',');
        }
        out.extend_from_slice(message);
    }
    out.push(b']');
    out
}

/// A blocking `Read` over pieces of a body sent from the async side, for `serde_json`'s
/// streaming reader.
pub(crate) struct ChannelReader {
    pieces: std::sync::mpsc::Receiver<bytes::Bytes>,
    current: bytes::Bytes,
}

impl ChannelReader {
    pub(crate) fn new(pieces: std::sync::mpsc::Receiver<bytes::Bytes>) -> ChannelReader {
        ChannelReader {
            pieces,
            current: bytes::Bytes::new(),
        }
    }
}

impl std::io::Read for ChannelReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.current.is_empty() {
            match self.pieces.recv() {
                Ok(piece) => self.current = piece,
                Err(_) => return Ok(0),
            }
        }
        let take = buf.len().min(self.current.len());
        buf[..take].copy_from_slice(&self.current.split_to(take));
        Ok(take)
    }
}
