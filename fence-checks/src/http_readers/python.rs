//! The Python SDK's reading (`mcp` 2.3.0, `streamable_http_client` on `httpx2` 2.16.2 and its
//! server-sent events, messages checked with pydantic 2.14). The rules, and where each was
//! read, are in the parent module's docs.

use crate::lenient::{self, Dialect, Value};

use super::text::{is_py_space, latin1, py_repr};
use super::{Handed, Request, Response, Said, Unmodelled, has_body, is_token, redirects};

mod events;
mod schema;

use events::{Sse, charset, events};
use schema::{Kind, pydantic};

/// JSON-RPC's and the SDK's error codes, as `mcp_types.jsonrpc` names them.
const CONNECTION_CLOSED: i64 = -32000;
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INTERNAL_ERROR: i64 = -32603;

/// What `httpx2` hands the SDK of the response's headers: names lowercased, each value without
/// the white space around it, all decoded as ASCII when every name and value is ASCII, else as
/// UTF-8 when every one is UTF-8, else all as Latin-1.
struct Headers(Vec<(String, String)>);

impl Headers {
    fn read(raw: &[(Vec<u8>, Vec<u8>)]) -> Headers {
        let trimmed: Vec<(&[u8], &[u8])> = raw
            .iter()
            .map(|(name, value)| (name.as_slice(), value.trim_ascii_matches()))
            .collect();
        let utf8 = trimmed.iter().all(|(name, value)| {
            std::str::from_utf8(name).is_ok() && std::str::from_utf8(value).is_ok()
        });
        let decode = |bytes: &[u8]| {
            if utf8 {
                String::from_utf8_lossy(bytes).into_owned()
            } else {
                latin1(bytes)
            }
        };
        Headers(
            trimmed
                .iter()
                .map(|(name, value)| (decode(name).to_ascii_lowercase(), decode(value)))
                .collect(),
        )
    }

    /// `Headers.get`: every value of the name joined with `", "`.
    fn get(&self, name: &str) -> Option<String> {
        let values: Vec<&str> = self
            .0
            .iter()
            .filter(|(each, _)| each == name)
            .map(|(_, value)| value.as_str())
            .collect();
        (!values.is_empty()).then(|| values.join(", "))
    }
}

/// Trimming the white space an HTTP parser drops around a header's value.
trait TrimAscii {
    fn trim_ascii_matches(&self) -> &[u8];
}

impl TrimAscii for Vec<u8> {
    fn trim_ascii_matches(&self) -> &[u8] {
        let is_space = |byte: &u8| *byte == b' ' || *byte == b'\t';
        let start = self
            .iter()
            .position(|byte| !is_space(byte))
            .unwrap_or(self.len());
        let end = self
            .iter()
            .rposition(|byte| !is_space(byte))
            .map_or(start, |end| end + 1);
        &self[start..end.max(start)]
    }
}

/// Reads `response` to `request` as the Python SDK does.
pub(super) fn read(request: &Request, response: &Response) -> Result<Vec<Handed>, Unmodelled> {
    if response.headers.iter().any(|(name, _)| !is_token(name)) {
        return Err(Unmodelled("a header name that is not a token"));
    }
    if redirects(response) {
        return Err(Unmodelled(
            "a redirect, which the SDK follows within its origin or reports naming its target",
        ));
    }
    let headers = Headers::read(&response.headers);
    let status = response.status;
    // `h11` reads no body for a 204 or a 304.
    let chunks: &[Vec<u8>] = if has_body(status) {
        &response.chunks
    } else {
        &[]
    };
    match request {
        Request::Post(body) => post(body, status, &headers, chunks),
        Request::Get => get_stream(status, &headers, chunks, None),
        Request::Resume {
            last_event_id,
            request: None,
        } => get_stream(status, &headers, chunks, Some(last_event_id.clone())),
        Request::Resume {
            last_event_id,
            request: Some(body),
        } => {
            let Some((id, _)) = sent_request(body) else {
                return Ok(Vec::new());
            };
            reconnection(status, &headers, chunks, &id, last_event_id)
        }
    }
}

/// The request `body` is, when the SDK sends it as one (a `JSONRPCRequest`): its id and
/// method. The SDK sends no batches.
fn sent_request(body: &[u8]) -> Option<(Value, String)> {
    let text = std::str::from_utf8(body).ok()?;
    let value = lenient::parse_as(text, Dialect::Pydantic).ok()?;
    match pydantic(&value) {
        Ok((Kind::Request, message)) => Some((
            message.get("id")?.clone(),
            message.get("method")?.as_str()?.to_owned(),
        )),
        _ => None,
    }
}

fn made_up(id: &Value, code: i64, message: Said) -> Handed {
    Handed::MadeUp {
        id: id.clone(),
        code,
        message,
    }
}

/// `_handle_post_request`.
fn post(
    body: &[u8],
    status: u16,
    headers: &Headers,
    chunks: &[Vec<u8>],
) -> Result<Vec<Handed>, Unmodelled> {
    let Some((id, method)) = sent_request(body) else {
        // A notification or an answer: nothing the response says reaches the session.
        return Ok(Vec::new());
    };
    if status == 202 {
        return Ok(vec![made_up(
            &id,
            INVALID_REQUEST,
            Said::exact("server answered a request with 202 Accepted"),
        )]);
    }
    let content_type = headers
        .get("content-type")
        .unwrap_or_default()
        .to_lowercase();
    if status >= 400 {
        if content_type.starts_with("application/json") {
            if let Ok((Kind::Error, error)) = json(&concat(chunks)) {
                let error = error.get("error").cloned().unwrap_or(Value::Null);
                return Ok(vec![Handed::Message(Value::Object(vec![
                    ("jsonrpc".to_owned(), Value::String("2.0".to_owned())),
                    ("id".to_owned(), id),
                    ("error".to_owned(), error),
                ]))]);
            }
        }
        // The model's assumption: a session exists for every request but `initialize`.
        let (code, text) = match (status, method.as_str()) {
            (404, "initialize") => (METHOD_NOT_FOUND, "Not Found"),
            (404, _) => (INVALID_REQUEST, "Session terminated"),
            _ => (INTERNAL_ERROR, "Server returned an error response"),
        };
        return Ok(vec![made_up(&id, code, Said::exact(text))]);
    }
    if content_type.starts_with("application/json") {
        return Ok(vec![match json(&concat(chunks)) {
            Ok((_, message)) => Handed::Message(message),
            Err(error) => made_up(
                &id,
                PARSE_ERROR,
                error.after("Failed to parse JSON response: "),
            ),
        }]);
    }
    if content_type.starts_with("text/event-stream") {
        return post_stream(headers, chunks, &id);
    }
    Ok(vec![made_up(
        &id,
        INVALID_REQUEST,
        Said::exact(format!("Unexpected content type: {content_type}")),
    )])
}

fn concat(chunks: &[Vec<u8>]) -> Vec<u8> {
    chunks.concat()
}

/// `jsonrpc_message_adapter.validate_json` of bytes: strict UTF-8, no BOM.
fn json(bytes: &[u8]) -> Result<(Kind, Value), Said> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Err(Said::quoting(
            "",
            vec![String::from_utf8_lossy(bytes).into_owned()],
        ));
    };
    validate(text)
}

/// `jsonrpc_message_adapter.validate_json` of text: the message, or the `ValidationError`,
/// which quotes (cut short) the text and any string or key of what it read.
fn validate(text: &str) -> Result<(Kind, Value), Said> {
    let value = lenient::parse_as(text, Dialect::Pydantic)
        .map_err(|_| Said::quoting("", vec![text.to_owned()]))?;
    pydantic(&value).map_err(|()| {
        let mut quotes = vec![text.to_owned()];
        value.every_text(&mut |each| {
            quotes.push(each.to_owned());
            true
        });
        Said::quoting("", quotes)
    })
}

/// `EventSource._check_content_type`: the Content-Type's text before any `;`, stripped of
/// white space; the error when it is not `text/event-stream` in some casing.
fn event_stream_type(headers: &Headers) -> Result<(), String> {
    let content_type = headers.get("content-type").unwrap_or_default();
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim_matches(is_py_space);
    if essence.to_lowercase() == "text/event-stream" {
        Ok(())
    } else {
        Err(format!(
            "Expected response with content type 'text/event-stream', got {}.",
            py_repr(essence)
        ))
    }
}

/// `_handle_sse_event` on a request's stream: the message, its id made the request's when it
/// is an answer; whether it completes the request.
fn request_event(sse: &Sse, id: &Value, handed: &mut Vec<Handed>) -> bool {
    if sse.event != "message" || sse.data.is_empty() {
        return false;
    }
    match validate(&sse.data) {
        Ok((kind, mut message)) => {
            let answer = matches!(kind, Kind::Response | Kind::Error);
            if answer {
                if let Value::Object(members) = &mut message {
                    for (key, value) in members.iter_mut() {
                        if key == "id" {
                            *value = id.clone();
                        }
                    }
                }
            }
            handed.push(Handed::Message(message));
            answer
        }
        Err(error) => {
            handed.push(made_up(
                id,
                PARSE_ERROR,
                error.after("Failed to parse SSE message: "),
            ));
            true
        }
    }
}

/// `_handle_sse_response`: a request's event stream.
fn post_stream(
    headers: &Headers,
    chunks: &[Vec<u8>],
    id: &Value,
) -> Result<Vec<Handed>, Unmodelled> {
    let failed = |error: String| {
        made_up(
            id,
            CONNECTION_CLOSED,
            Said::exact(format!("SSE stream failed: {error}")),
        )
    };
    if let Err(error) = event_stream_type(headers) {
        return Ok(vec![failed(error)]);
    }
    let codec = charset(headers.get("content-type").as_deref())
        .ok_or(Unmodelled("a charset other than UTF-8, Latin-1 or ASCII"))?;
    let mut handed = Vec::new();
    let mut last_event_id = None;
    for item in events(chunks, codec) {
        match item {
            Ok(sse) => {
                if !sse.id.is_empty() {
                    last_event_id = Some(sse.id.clone());
                }
                if request_event(&sse, id, &mut handed) {
                    return Ok(handed);
                }
            }
            Err(error) => {
                handed.push(failed(error));
                return Ok(handed);
            }
        }
    }
    handed.push(match last_event_id {
        Some(last) => Handed::Reconnects(Some(last)),
        None => made_up(
            id,
            CONNECTION_CLOSED,
            Said::exact("SSE stream ended without a response"),
        ),
    });
    Ok(handed)
}

/// `handle_get_stream`: the GET stream, `last` the id it resumes from. Whatever happens, it
/// reconnects (within its attempts).
fn get_stream(
    status: u16,
    headers: &Headers,
    chunks: &[Vec<u8>],
    last: Option<String>,
) -> Result<Vec<Handed>, Unmodelled> {
    if !(200..=299).contains(&status) || event_stream_type(headers).is_err() {
        return Ok(vec![Handed::Reconnects(last)]);
    }
    let codec = charset(headers.get("content-type").as_deref())
        .ok_or(Unmodelled("a charset other than UTF-8, Latin-1 or ASCII"))?;
    let mut handed = Vec::new();
    let mut last = last;
    for item in events(chunks, codec) {
        let Ok(sse) = item else {
            break;
        };
        if !sse.id.is_empty() {
            last = Some(sse.id.clone());
        }
        if sse.event != "message" || sse.data.is_empty() {
            continue;
        }
        handed.push(match validate(&sse.data) {
            Ok((_, message)) => Handed::Message(message),
            Err(error) => Handed::Reported(error),
        });
    }
    handed.push(Handed::Reconnects(last));
    Ok(handed)
}

/// `_handle_reconnection`: a request's stream resumed from `last_event_id`.
fn reconnection(
    status: u16,
    headers: &Headers,
    chunks: &[Vec<u8>],
    id: &Value,
    last_event_id: &str,
) -> Result<Vec<Handed>, Unmodelled> {
    if !(200..=299).contains(&status) || event_stream_type(headers).is_err() {
        return Ok(vec![Handed::Reconnects(Some(last_event_id.to_owned()))]);
    }
    let codec = charset(headers.get("content-type").as_deref())
        .ok_or(Unmodelled("a charset other than UTF-8, Latin-1 or ASCII"))?;
    let mut handed = Vec::new();
    let mut last = last_event_id.to_owned();
    for item in events(chunks, codec) {
        match item {
            Ok(sse) => {
                if !sse.id.is_empty() {
                    last.clone_from(&sse.id);
                }
                if request_event(&sse, id, &mut handed) {
                    return Ok(handed);
                }
            }
            Err(error) => {
                handed.push(made_up(
                    id,
                    CONNECTION_CLOSED,
                    Said::exact(format!("SSE stream failed: {error}")),
                ));
                return Ok(handed);
            }
        }
    }
    handed.push(Handed::Reconnects(Some(last)));
    Ok(handed)
}
