//! How each official MCP SDK's HTTP client reads a response: what it hands its caller from an
//! HTTP response to a Streamable HTTP request.
//!
//! The oracle the `--listen` proxy is held to over HTTP (see [`crate::http_exchange`]): a
//! response the proxy sends a client is read here as the TypeScript SDK 1.32.2
//! (`StreamableHTTPClientTransport`) and the Python SDK `mcp` 2.3.0 (`streamable_http_client`)
//! read it, and what they hand on is checked. Written naively and apart from `fence-mcp`, on
//! purpose: it shares none of the proxy's HTTP, SSE, JSON or id code.
//!
//! [`read`] takes the [`Request`] (a POST and its body, the GET stream, or a resumed one), the
//! [`Response`] (status, raw header list, body in the chunks it arrives in) and answers with
//! what the SDK hands on, in order: each JSON-RPC message its transport dispatches to its
//! session, as its parser and schema read it ([`Handed::Message`]); each JSON-RPC error it
//! makes up for the waiting request ([`Handed::MadeUp`], Python); each error it raises
//! ([`Handed::Raised`]: the request's `send` rejects, TypeScript) or reports without failing a
//! request ([`Handed::Reported`]: `onerror`, or an exception Python hands its session); and
//! whether it opens the stream again ([`Handed::Reconnects`]). An error's text is exact, but
//! where a library writes its own message about the input ([`Said::quotes`]: V8's
//! `SyntaxError`, zod's issues, pydantic's `ValidationError`) the model names what that message
//! may quote rather than spelling it.
//!
//! `tests/checks/http_readers.rs` holds the models to the real SDKs: it serves a table of
//! hostile raw responses to both and compares what they hand on with what [`read`] says.
//!
//! # The rules, and where they were read
//!
//! TypeScript: files under `node_modules/@modelcontextprotocol/sdk/dist/cjs/` unless named
//! otherwise. Python: files under `site-packages/`.
//!
//! **The response's head.**
//! - Headers, TypeScript: Node 20's `fetch` (undici; its source is Node's, not in the install,
//!   so this is as observed): names lowercased, a value's leading spaces and tabs dropped and
//!   its trailing ones kept, every byte read as Latin-1; a control character other than a tab
//!   in a value makes `fetch` fail (`TypeError: fetch failed`). `Headers.get` joins every value
//!   of a name with `", "`.
//! - Headers, Python: `httpx2/_models.py` `Headers.encoding` (every name and value decoded as
//!   ASCII when all are, else as UTF-8 when all are, else all as Latin-1) and
//!   `Headers.__getitem__` (values joined with `", "`); `httpcore2`'s parser (as observed)
//!   strips the spaces and tabs around a value and keeps control characters.
//! - Redirects (a 301, 302, 303, 307 or 308 with a `Location`): `shared/transport.js`
//!   `fetchWithinOrigin` and `followWithinOrigin`, `mcp/shared/_httpx_utils.py`
//!   `stream_within_origin`. Both follow one within the endpoint's origin and report one they
//!   do not follow naming its target; the model does not resolve URLs, and reads no redirect
//!   ([`Unmodelled`]).
//! - No body: `fetch` gives a 204, 205 or 304 none; `h11` a 204 or a 304.
//!
//! **A POST** (`client/streamableHttp.js` `send`; `mcp/client/streamable_http.py`
//! `_handle_post_request`).
//! - TypeScript, a status outside 2xx: the body as text (`response.text()`), raised as
//!   `Streamable HTTP error: Error POSTing to endpoint: <body>` (no auth provider is
//!   configured, so a 401 or 403 is no different).
//! - TypeScript, 202: nothing. Any other 2xx answering a POST with no request in it (one with
//!   `method` and `id`): nothing.
//! - TypeScript, the Content-Type: `shared/mediaType.js` `mediaTypeEssence` on the joined value
//!   (`content-type/index.js` `parse`, lowercased; when it throws, the text before the first
//!   `;`, JavaScript-trimmed and lowercased, unless empty or the rest holds a comma).
//!   `text/event-stream`: the stream below. `application/json`: `response.json()` (a BOM
//!   dropped), each message of a batch or the one message through the schema, every one or
//!   none dispatched. Anything else: raised as `Streamable HTTP error: Unexpected content
//!   type: <the joined value, or null>`.
//! - Python: only a request (the body a `JSONRPCRequest`; the SDK POSTs no batches) reads its
//!   response. 202: made up `server answered a request with 202 Accepted` (-32600). 400 and
//!   above: when the lowercased joined Content-Type starts with `application/json` and the body
//!   is a `JSONRPCError`, that error with the request's id; otherwise made up: 404 `Not Found`
//!   (-32601) for `initialize`, `Session terminated` (-32600) for any other request (the model
//!   assumes a session), any other status `Server returned an error response` (-32603).
//! - Python, below 400: the lowercased joined Content-Type starting with `application/json`:
//!   the body (`_handle_json_response`; strict UTF-8, no BOM) as one message, its id as
//!   written, or made up `Failed to parse JSON response: <ValidationError>` (-32700); starting
//!   with `text/event-stream`: the stream below; anything else: made up `Unexpected content
//!   type: <the lowercased value>` (-32600).
//!
//! **The GET stream and a resumed one.**
//! - TypeScript (`_startOrAuthSse`, `resumeStream`, `send` with a resumption token): outside
//!   2xx, 405 is nothing; any other raises `Streamable HTTP error: Failed to open SSE stream:
//!   <the reason phrase>` (the model takes the reason phrase a Rust server writes: `http`'s
//!   canonical one, `<none>` for a status with none). Any 2xx with a body is read as an event
//!   stream, whatever its Content-Type.
//! - Python, the GET stream (`handle_get_stream`; the SDK resumes it from its own last event
//!   id, and has no other way to resume one): outside 2xx, or a Content-Type that is not
//!   `text/event-stream` (`httpx2/_sse.py` `EventSource._check_content_type`: the text before
//!   `;`, Python-stripped, lowercased): nothing, and it reconnects. A request's stream resumed
//!   (`_handle_reconnection`): the same, then events answer the request as a POST's do.
//!
//! **Event streams, TypeScript** (`_handleSseStream`; `eventsource-parser/dist/index.cjs`
//! `createParser`; `eventsource-parser/dist/stream.cjs` `EventSourceParserStream`).
//! - Text: `TextDecoderStream`: UTF-8, U+FFFD for each maximal invalid subpart, one BOM
//!   dropped at the stream's very start only. The parser then drops `ï»¿` (the BOM's bytes
//!   read as Latin-1) from the start of the first non-empty chunk it is fed, and only there.
//! - Lines (`processLines`): CR, LF and CRLF end a line; a CR that is the stream's last
//!   character ends nothing; the text after the last line ending is never read (the stream
//!   has no `flush`).
//! - Fields (`parseLine`, `processField`): names exact and case-sensitive; the value after the
//!   first `:`, one space dropped; a line with no `:` is a field with an empty value; `:`
//!   starts a comment. `data` lines joined with `\n`; `event` (an empty one is none); `id`
//!   unless it holds NUL; `retry` only times reconnection; any other field is ignored. An
//!   empty line dispatches the event when it has a `data` line, and every field starts over.
//! - The SDK: an event's non-empty `id` is the last event id (and makes a POST's stream
//!   resumable); an event with empty data is skipped; an event whose type is neither none nor
//!   `message` is skipped; the data through `JSON.parse` and the schema, a failure reported to
//!   `onerror`. A result answering a resumed request gets that request's id. When the stream
//!   ends, the GET stream (and a POST's stream with an event id) reconnects, unless a result
//!   came.
//!
//! **Event streams, Python** (`_handle_sse_response`, `_handle_sse_event`; `httpx2/_sse.py`).
//! - Text: `httpx2/_models.py` `Response.encoding` (the Content-Type's `charset` as
//!   `email.message.Message.get_content_charset` reads it, when Python knows the codec; else
//!   UTF-8) and `httpx2/_decoders.py` `TextDecoder` (`errors="replace"`): no BOM is dropped,
//!   so one at the start makes the first line's field name `\u{feff}data`. The model decodes
//!   UTF-8, Latin-1 and ASCII; any other charset is [`Unmodelled`].
//! - Lines (`_SSELineDecoder`): CR, LF and CRLF end a line; a CR that ends a chunk waits for
//!   the next; at the end, a held CR ends a line, and the text left is read as lines (so a
//!   stream ending in `data: x\r` dispatches `x`, and one ending in `data: x\n` does not).
//! - Fields (`_SSEEventDecoder`): the name before the first `:`, exact; one space dropped from
//!   the value; `:` a comment; `event` (empty: `message`), `data`, `id` (unless it holds NUL;
//!   kept from event to event), `retry` (when Python's `int()` reads it) make an event
//!   pending; an empty line dispatches a pending event. An event's lines over 1 MiB fail the
//!   stream.
//! - The SDK: only `event == "message"` with non-empty data is read; the data through
//!   `validate_json`. On a request's stream, an answer gets the request's id (whatever id it
//!   carried) and ends the stream: nothing after it is read; a message that fails the schema
//!   is made up `Failed to parse SSE message: <ValidationError>` (-32700) and ends it too. A
//!   stream that ends unanswered reconnects when an event had an id, else is made up `SSE
//!   stream ended without a response` (-32000). On the GET stream every message is handed on
//!   and a failure is handed to the session as an exception.
//!
//! **Messages.**
//! - TypeScript (`types.js` `JSONRPCMessageSchema`: the first of `JSONRPCRequestSchema`,
//!   `JSONRPCNotificationSchema`, `JSONRPCResultResponseSchema`, `JSONRPCErrorResponseSchema`
//!   that takes it): strict objects (no other member); `jsonrpc` exactly `"2.0"`; an id a
//!   string or a safe integer (zod 4's `int()`, as observed); `params` and `result` objects
//!   whose `_meta`, if any, meets `RequestMetaSchema`; an error's `id` optional but not
//!   `null`, its `code` a safe integer, its `message` a string, its other members dropped.
//!   JSON as `JSON.parse` ([`crate::lenient::parse`]).
//! - Python (`mcp_types/jsonrpc.py`: `JSONRPCRequest`, `JSONRPCNotification`,
//!   `JSONRPCResponse`, `JSONRPCError`, `ErrorData`): pydantic's smart union (as observed: the
//!   valid model setting the most fields, nested ones counted, wins), unknown members ignored,
//!   an id a strict int or a string (an error's may be `null`), `code` a lax int. JSON as
//!   `jiter` ([`Dialect::Pydantic`](crate::lenient::Dialect::Pydantic)).
//! - An answer whose id no request waits on: the TypeScript SDK reports it to `onerror`
//!   whole, as `JSON.stringify` writes it (`shared/protocol.js` `Protocol._onresponse`); the
//!   Python SDK drops it (`mcp/shared/jsonrpc_dispatcher.py` `_resolve_pending`). The models
//!   hand on every message; [`crate::http_exchange`] judges which request each answers.
//!
//! **Library messages** ([`Said::quotes`]): V8's `JSON.parse` error quotes up to 20 characters
//! of the text around the error (the whole text when it is 21 or fewer); a `ZodError` names a
//! message's unrecognized keys, but no value; pydantic's `ValidationError` shows the `repr` of
//! the input and of each failing member, its middle cut out when it is long. The model quotes
//! the whole text (zod: every key; pydantic: the text, and every string and key read from it),
//! so a marker it finds there may be one the library's message cuts; the check errs on the
//! side of failing.
//!
//! ```
//! use fence_checks::http_readers::{Handed, Request, Response, Sdk, read};
//!
//! let response = Response {
//!     status: 200,
//!     headers: vec![(b"Content-Type".to_vec(), b"text/plain".to_vec())],
//!     chunks: vec![b"data: {\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n\n".to_vec()],
//! };
//! // The TypeScript SDK reads a GET stream's body as events whatever its Content-Type …
//! let typescript = read(Sdk::TypeScript, &Request::Get, &response).unwrap();
//! assert!(matches!(typescript[0], Handed::Message(_)));
//! // … and the Python SDK refuses it, and reconnects.
//! let python = read(Sdk::Python, &Request::Get, &response).unwrap();
//! assert_eq!(python, [Handed::Reconnects(None)]);
//! ```

use std::fmt::Write as _;

use crate::lenient::Value;

mod python;
mod text;
mod typescript;

/// An official MCP SDK whose HTTP client the module models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sdk {
    /// `@modelcontextprotocol/sdk` 1.32.2, `StreamableHTTPClientTransport`, on Node 20.
    TypeScript,
    /// `mcp` 2.3.0, `streamable_http_client`, on `httpx2` 2.16.2.
    Python,
}

impl Sdk {
    /// Both SDKs.
    pub const ALL: [Sdk; 2] = [Sdk::TypeScript, Sdk::Python];
}

/// The request a response answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// A POST of this body: one JSON-RPC message, or (TypeScript) a batch.
    Post(Vec<u8>),
    /// The GET stream a session opens once initialized.
    Get,
    /// A GET with `Last-Event-ID`, resuming a stream: the GET stream's (`request: None`), or
    /// the stream of the request whose body is `request`, whose id the SDKs give the answers
    /// read from it.
    Resume {
        /// The `Last-Event-ID` sent.
        last_event_id: String,
        /// The body of the request whose stream is resumed.
        request: Option<Vec<u8>>,
    },
}

/// An HTTP response as a client receives it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// Every header, in order: its name and value as bytes.
    pub headers: Vec<(Vec<u8>, Vec<u8>)>,
    /// The body, in the chunks it arrives in (SSE framing may cross them).
    pub chunks: Vec<Vec<u8>>,
}

/// An error's text as the SDK writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    /// The text, exactly; or, when [`Said::quotes`] is not empty, the text up to where a
    /// library's own message about the input begins.
    pub text: String,
    /// What that library's message may quote, whole: it shows parts of these. Empty when
    /// [`Said::text`] is all there is.
    pub quotes: Vec<String>,
}

impl Said {
    fn exact(text: impl Into<String>) -> Said {
        Said {
            text: text.into(),
            quotes: Vec::new(),
        }
    }

    fn quoting(text: impl Into<String>, quotes: Vec<String>) -> Said {
        Said {
            text: text.into(),
            quotes,
        }
    }

    /// This, after `prefix`.
    fn after(self, prefix: &str) -> Said {
        Said {
            text: format!("{prefix}{}", self.text),
            quotes: self.quotes,
        }
    }

    /// Every text that may reach the caller: [`Said::text`] and each of [`Said::quotes`].
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.text.as_str()).chain(self.quotes.iter().map(String::as_str))
    }
}

/// One thing an SDK hands its caller from a response.
#[derive(Debug, Clone, PartialEq)]
pub enum Handed {
    /// A message the transport dispatches to its session, as the SDK's parser and schema read
    /// it (members it drops left out), with any id the SDK put on it.
    Message(Value),
    /// A JSON-RPC error the SDK makes up for the waiting request (Python), with that request's
    /// id.
    MadeUp {
        /// The request's id.
        id: Value,
        /// The error's code.
        code: i64,
        /// The error's message.
        message: Said,
    },
    /// An error the transport raises: the request's `send` rejects with it, and `onerror` is
    /// told (TypeScript).
    Raised(Said),
    /// An error the transport reports without failing a request: TypeScript's `onerror`, an
    /// exception Python's transport hands its session.
    Reported(Said),
    /// The transport opens the stream again, with this `Last-Event-ID` (or none).
    Reconnects(Option<String>),
}

/// A response the model does not read, and why: a fail-closed proxy sends no such response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unmodelled(pub &'static str);

/// What `sdk` hands its caller from `response` to `request`.
///
/// # Errors
///
/// [`Unmodelled`] when the response is one the model does not read: a redirect, a status
/// outside 200 to 599, a header whose name is not a token or whose value holds CR or LF (no
/// HTTP response on the wire has one), a charset the model does not decode (Python).
pub fn read(sdk: Sdk, request: &Request, response: &Response) -> Result<Vec<Handed>, Unmodelled> {
    if !(200..=599).contains(&response.status) {
        return Err(Unmodelled("a status outside 200 to 599"));
    }
    if response
        .headers
        .iter()
        .any(|(_, value)| value.iter().any(|&byte| byte == b'\r' || byte == b'\n'))
    {
        return Err(Unmodelled("a header value over several lines"));
    }
    match sdk {
        Sdk::TypeScript => typescript::read(request, response),
        Sdk::Python => python::read(request, response),
    }
}

/// Whether `name` is an HTTP token, as every header name on the wire is.
fn is_token(name: &[u8]) -> bool {
    !name.is_empty()
        && name
            .iter()
            .all(|&byte| byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte))
}

/// Whether the response is a redirect the SDKs act on: a redirect status with a `Location`.
fn redirects(response: &Response) -> bool {
    matches!(response.status, 301 | 302 | 303 | 307 | 308)
        && response
            .headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case(b"location"))
}

/// Whether a response of `status` has a body on the wire.
fn has_body(status: u16) -> bool {
    !matches!(status, 204 | 304)
}

/// The reason phrase a Rust server (`hyper`) writes for `status`.
fn reason(status: u16) -> &'static str {
    http::StatusCode::from_u16(status)
        .ok()
        .and_then(|status| status.canonical_reason())
        .unwrap_or("<none>")
}

/// `value` as JSON text: members in order, every one (duplicates too), strings escaped as
/// `JSON.stringify` escapes them (`"`, `\`, control characters; nothing else), numbers as read.
pub fn to_json(value: &Value) -> String {
    let mut out = String::new();
    write_json(value, &mut out);
    out
}

fn write_json(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
        Value::Number(text) => out.push_str(text),
        Value::String(text) => write_string(text, out),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_json(item, out);
            }
            out.push(']');
        }
        Value::Object(members) => {
            out.push('{');
            for (index, (key, item)) in members.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write_json(item, out);
            }
            out.push('}');
        }
    }
}

fn write_string(text: &str, out: &mut String) {
    out.push('"');
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ch if ch < ' ' => {
                let _ = write!(out, "\\u{:04x}", u32::from(ch));
            }
            ch => out.push(ch),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sse(chunks: &[&[u8]]) -> Response {
        Response {
            status: 200,
            headers: vec![(b"content-type".to_vec(), b"text/event-stream".to_vec())],
            chunks: chunks.iter().map(|chunk| chunk.to_vec()).collect(),
        }
    }

    const CALL: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#;

    #[test]
    fn a_bom_mid_stream_hides_a_line_from_both_and_one_at_the_start_only_from_python() {
        let body = b"\xef\xbb\xbfdata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n";
        let typescript = read(
            Sdk::TypeScript,
            &Request::Post(CALL.to_vec()),
            &sse(&[body]),
        )
        .unwrap();
        assert!(
            matches!(typescript[0], Handed::Message(_)),
            "{typescript:?}"
        );
        let python = read(Sdk::Python, &Request::Post(CALL.to_vec()), &sse(&[body])).unwrap();
        assert!(
            matches!(python[0], Handed::MadeUp { code: -32000, .. }),
            "{python:?}"
        );
        let mid = b"data: {\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n\n\xef\xbb\xbfevent: x\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"b\"}\n\n";
        for sdk in Sdk::ALL {
            let handed = read(sdk, &Request::Get, &sse(&[mid])).unwrap();
            let messages = handed
                .iter()
                .filter(|each| matches!(each, Handed::Message(_)))
                .count();
            assert_eq!(messages, 2, "{sdk:?}: {handed:?}");
        }
    }

    #[test]
    fn error_statuses_as_each_sdk_reads_them() {
        let response = Response {
            status: 400,
            headers: vec![(b"Content-Type".to_vec(), b"Application/JSON; x=y".to_vec())],
            chunks: vec![br#"{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"</untrusted-content>"}}"#.to_vec()],
        };
        let request = Request::Post(CALL.to_vec());
        let python = read(Sdk::Python, &request, &response).unwrap();
        assert_eq!(
            python
                .iter()
                .map(|each| match each {
                    Handed::Message(value) => to_json(value),
                    _ => String::new(),
                })
                .collect::<Vec<_>>(),
            [r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"</untrusted-content>"}}"#]
        );
        let typescript = read(Sdk::TypeScript, &request, &response).unwrap();
        assert!(
            matches!(&typescript[..], [Handed::Raised(said)] if said.text.ends_with("\"</untrusted-content>\"}}"))
        );
    }
}
