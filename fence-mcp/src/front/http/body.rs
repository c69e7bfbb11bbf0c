//! The bodies the HTTP front reads and writes: a request's body read up to the limit (an
//! oversized one read through once for its ids, never held), and responses whole, streamed,
//! or the front's own refusals.

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use tokio::sync::mpsc;

use crate::engine::report;
use crate::session::{Session, Side};
use crate::wire::{ChannelReader, JSON, joined};

/// The error of a body the front passes on as it comes from the upstream.
pub(crate) type BodyError = Box<dyn std::error::Error + Send + Sync>;

/// The body of a response the front sends.
pub(crate) type Body = UnsyncBoxBody<Bytes, BodyError>;

/// A whole body.
pub(crate) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

/// A body of `first`, then what the sender gives, each piece sent to the client as soon as it
/// is given; it ends when the sender is dropped, and the sender's `send` fails once the client
/// has gone. The pieces of `first` are there when the body is first read, so they leave with
/// the response's head, in one write.
pub(crate) fn streamed_after(first: Vec<Bytes>) -> (mpsc::Sender<Bytes>, Body) {
    let (sender, receiver) = mpsc::channel::<Bytes>(32);
    let rest = futures_util::stream::unfold(receiver, |mut receiver| async move {
        let piece = receiver.recv().await?;
        Some((Ok::<_, BodyError>(Frame::data(piece)), receiver))
    });
    let stream = futures_util::StreamExt::chain(pieces(first), rest);
    (sender, StreamBody::new(stream).boxed_unsync())
}

/// A body of these pieces and nothing more.
pub(crate) fn pieces_body(pieces_of: Vec<Bytes>) -> Body {
    StreamBody::new(pieces(pieces_of)).boxed_unsync()
}

fn pieces(
    pieces: Vec<Bytes>,
) -> impl futures_util::Stream<Item = Result<Frame<Bytes>, BodyError>> + Send + 'static {
    futures_util::stream::iter(pieces.into_iter().map(|piece| Ok(Frame::data(piece))))
}

/// A response with a JSON body.
pub(crate) fn json_response(status: StatusCode, body: impl Into<Bytes>) -> Response<Body> {
    let mut response = Response::new(full(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(http::header::CONTENT_TYPE, HeaderValue::from_static(JSON));
    response
}

/// The front's refusal of a request it will not pass on: `status`, and a JSON-RPC error
/// saying why (for no request in particular).
pub(crate) fn refusal(status: StatusCode, code: i64, message: &str) -> Response<Body> {
    let mut body = Vec::with_capacity(message.len() + 64);
    body.extend_from_slice(br#"{"jsonrpc":"2.0","id":null,"error":{"code":"#);
    body.extend_from_slice(code.to_string().as_bytes());
    body.extend_from_slice(br#","message":"#);
    crate::json::write_string(&mut body, &format!("fence mcp: {message}"));
    body.extend_from_slice(b"}}");
    json_response(status, body)
}

/// Reads a request's body whole, up to `limit` bytes; a longer one is read through once (never
/// held) and the client gets 413 and a JSON-RPC error for each request it named.
pub(crate) async fn read_body(
    body: Incoming,
    limit: usize,
    session: &Session,
) -> Result<Vec<u8>, Response<Body>> {
    let mut body = body;
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return Err(refusal(
                StatusCode::BAD_REQUEST,
                -32700,
                "the request's body broke off",
            ));
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if bytes.len() + data.len() > limit {
            // The whole frame, for its ids: what is past the limit in it is the rest of the
            // body too.
            bytes.extend_from_slice(&data);
            return Err(oversized(bytes, body, limit, session).await);
        }
        bytes.extend_from_slice(&data);
    }
    Ok(bytes)
}

/// The 413 for a body over the limit: the rest of it streamed once through `serde_json` (on a
/// blocking thread, fed as it arrives) for the ids of its requests, each of which gets an
/// error.
async fn oversized(
    start: Vec<u8>,
    mut rest: Incoming,
    limit: usize,
    session: &Session,
) -> Response<Body> {
    let (pieces, received) = std::sync::mpsc::sync_channel::<Bytes>(8);
    let skim = tokio::task::spawn_blocking(move || {
        let reader =
            std::io::Read::chain(std::io::Cursor::new(start), ChannelReader::new(received));
        crate::lines::skim_all(reader)
    });
    while let Some(Ok(frame)) = rest.frame().await {
        if let Ok(data) = frame.into_data() {
            if pieces.send(data).is_err() {
                break;
            }
        }
    }
    drop(pieces);
    let (skimmed, size) = skim.await.unwrap_or((None, 0));
    let outcome = session.oversized(Side::Client, skimmed.as_ref(), size, limit);
    for note in &outcome.notes {
        report(session, note);
    }
    json_response(StatusCode::PAYLOAD_TOO_LARGE, joined(outcome.reply))
}

/// An empty response with `status`.
pub(crate) fn empty(status: StatusCode) -> Response<Body> {
    let mut response = Response::new(full(Bytes::new()));
    *response.status_mut() = status;
    response
}
