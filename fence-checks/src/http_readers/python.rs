//! The Python SDK's reading (`mcp` 2.3.0, `streamable_http_client` on `httpx2` 2.16.2 and its
//! server-sent events, messages checked with pydantic 2.14). The rules, and where each was
//! read, are in the parent module's docs.

use crate::lenient::{self, Dialect, Value};

use super::text::{Utf8Stream, is_py_space, latin1, py_repr};
use super::{Handed, Request, Response, Said, Unmodelled, has_body, is_token, redirects};

/// `DEFAULT_MAX_SSE_EVENT_SIZE`: the most bytes one event's lines may hold.
const MAX_EVENT_SIZE: usize = 1024 * 1024;

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

/// The codec `Response.encoding` names: the Content-Type's `charset` (as `email.message`
/// reads it) when Python knows it, else UTF-8. `None` for a charset the model does not know.
fn charset(headers: &Headers) -> Option<Codec> {
    let Some(content_type) = headers.get("content-type") else {
        return Some(Codec::Utf8);
    };
    let Some(charset) = charset_param(&content_type) else {
        return Some(Codec::Utf8);
    };
    if !charset.is_ascii() {
        return Some(Codec::Utf8);
    }
    // `encodings.normalize_encoding`, after `codecs.lookup` lowercases.
    let mut name = String::new();
    let mut punct = false;
    for ch in charset.to_lowercase().chars() {
        if ch.is_ascii_alphanumeric() || ch == '.' {
            if punct && !name.is_empty() {
                name.push('_');
            }
            name.push(ch);
            punct = false;
        } else {
            punct = true;
        }
    }
    let name = name.replace('.', "_");
    match name.as_str() {
        "" => Some(Codec::Utf8),
        "utf_8" | "utf8" | "u8" | "utf" | "utf8_ucs2" | "utf8_ucs4" | "cp65001" => {
            Some(Codec::Utf8)
        }
        "latin_1" | "latin1" | "latin" | "l1" | "iso8859_1" | "iso_8859_1" | "iso8859" | "8859"
        | "cp819" | "ibm819" | "csisolatin1" | "iso_ir_100" | "iso_8859_1_1987" => {
            Some(Codec::Latin1)
        }
        "ascii" | "us_ascii" | "us" | "646" | "cp367" | "ibm367" | "csascii" | "iso646_us"
        | "iso_ir_6" | "ansi_x3_4_1968" | "ansi_x3_4_1986" | "iso_646_irv_1991" => {
            Some(Codec::Ascii)
        }
        _ => None,
    }
}

/// The first `charset` parameter, as `email.message.Message.get_param` reads it: the value cut
/// at `;` outside quotes, each parameter split at its first `=`, name and value stripped, a
/// quoted value unquoted (and one in `<…>` unbracketed). RFC 2231 parameters are not read.
fn charset_param(content_type: &str) -> Option<String> {
    let mut rest = content_type;
    let mut first = true;
    loop {
        let mut end = rest.find(';');
        while let Some(at) = end.filter(|&at| at > 0) {
            let quotes = rest[..at].matches('"').count() - rest[..at].matches("\\\"").count();
            if quotes % 2 == 0 {
                break;
            }
            end = rest[at + 1..].find(';').map(|next| at + 1 + next);
        }
        let (param, after) = match end {
            Some(at) => (&rest[..at], Some(&rest[at + 1..])),
            None => (rest, None),
        };
        if !first {
            if let Some((name, value)) = param.split_once('=') {
                if name
                    .trim_matches(is_py_space)
                    .eq_ignore_ascii_case("charset")
                {
                    return Some(unquote(value.trim_matches(is_py_space)));
                }
            }
        }
        first = false;
        rest = after?;
    }
}

/// `email.utils.unquote`.
fn unquote(value: &str) -> String {
    if value.len() > 1 {
        if let Some(inner) = value
            .strip_prefix('"')
            .and_then(|value| value.strip_suffix('"'))
        {
            return inner.replace("\\\\", "\\").replace("\\\"", "\"");
        }
        if let Some(inner) = value
            .strip_prefix('<')
            .and_then(|value| value.strip_suffix('>'))
        {
            return inner.to_owned();
        }
    }
    value.to_owned()
}

/// The codecs the model decodes a stream with.
#[derive(Debug, Clone, Copy)]
enum Codec {
    Utf8,
    Latin1,
    Ascii,
}

/// One event as `httpx2`'s decoder yields it.
#[derive(Debug)]
struct Sse {
    event: String,
    data: String,
    id: String,
}

/// The events of a stream, in order, ending with the `SSEError` that stops it, if one does.
fn events(chunks: &[Vec<u8>], codec: Codec) -> Vec<Result<Sse, String>> {
    let mut decoder = Utf8Stream::new(false);
    let mut texts: Vec<String> = chunks
        .iter()
        .map(|chunk| match codec {
            Codec::Utf8 => decoder.feed(chunk),
            Codec::Latin1 => latin1(chunk),
            Codec::Ascii => chunk
                .iter()
                .map(|&byte| {
                    if byte < 0x80 {
                        char::from(byte)
                    } else {
                        '\u{fffd}'
                    }
                })
                .collect(),
        })
        .collect();
    texts.push(decoder.finish());
    let mut lines = LineDecoder::default();
    let mut fields = EventDecoder::default();
    let mut out = Vec::new();
    for text in &texts {
        for line in lines.decode(text) {
            match fields.line(&line) {
                Ok(Some(event)) => out.push(Ok(event)),
                Ok(None) => {}
                Err(error) => {
                    out.push(Err(error));
                    return out;
                }
            }
        }
        if let Err(error) = fields.check(lines.pending_size()) {
            out.push(Err(error));
            return out;
        }
    }
    for line in lines.flush() {
        match fields.line(&line) {
            Ok(Some(event)) => out.push(Ok(event)),
            Ok(None) => {}
            Err(error) => {
                out.push(Err(error));
                return out;
            }
        }
    }
    out
}

/// `_SSELineDecoder`: CRLF, CR and LF all end a line; a CR that ends a chunk waits for the
/// next; at the end, a held CR ends a line, and what is left is split into lines and read.
#[derive(Debug, Default)]
struct LineDecoder {
    pending: String,
    trailing_cr: bool,
}

impl LineDecoder {
    fn pending_size(&self) -> usize {
        self.pending.len()
    }

    fn decode(&mut self, text: &str) -> Vec<String> {
        let mut text = if self.trailing_cr {
            self.trailing_cr = false;
            format!("\r{text}")
        } else {
            text.to_owned()
        };
        if text.ends_with('\r') {
            self.trailing_cr = true;
            text.pop();
        }
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        if !text.contains('\n') {
            self.pending.push_str(&text);
            return Vec::new();
        }
        let mut lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
        let last = lines.pop().unwrap_or_default();
        lines[0] = format!("{}{}", std::mem::take(&mut self.pending), lines[0]);
        self.pending = last;
        lines
    }

    fn flush(&mut self) -> Vec<String> {
        if self.trailing_cr {
            self.pending.push('\n');
            self.trailing_cr = false;
        }
        let buffer = std::mem::take(&mut self.pending);
        if buffer.is_empty() {
            return Vec::new();
        }
        buffer.split('\n').map(str::to_owned).collect()
    }
}

/// `_SSEEventDecoder`: an event is dispatched at an empty line when any field set it pending;
/// the last event id is kept from event to event.
#[derive(Debug, Default)]
struct EventDecoder {
    event: String,
    data: Vec<String>,
    size: usize,
    last_event_id: String,
    pending: bool,
}

impl EventDecoder {
    fn line(&mut self, line: &str) -> Result<Option<Sse>, String> {
        if line.is_empty() {
            self.size = 0;
            if !self.pending {
                return Ok(None);
            }
            self.pending = false;
            let event = std::mem::take(&mut self.event);
            return Ok(Some(Sse {
                event: if event.is_empty() {
                    "message".to_owned()
                } else {
                    event
                },
                data: std::mem::take(&mut self.data).join("\n"),
                id: self.last_event_id.clone(),
            }));
        }
        if line.starts_with(':') {
            return Ok(None);
        }
        self.size += line.len();
        self.check(0)?;
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => {
                value.clone_into(&mut self.event);
                self.pending = true;
            }
            "data" => {
                self.data.push(value.to_owned());
                self.pending = true;
            }
            "id" if !value.contains('\0') => {
                value.clone_into(&mut self.last_event_id);
                self.pending = true;
            }
            "retry" if lenient::python_int(value).is_some() => self.pending = true,
            _ => {}
        }
        Ok(None)
    }

    fn check(&self, pending: usize) -> Result<(), String> {
        if self.size + pending > MAX_EVENT_SIZE {
            Err(format!(
                "Server-sent event exceeded the {MAX_EVENT_SIZE} byte limit."
            ))
        } else {
            Ok(())
        }
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
    let codec =
        charset(headers).ok_or(Unmodelled("a charset other than UTF-8, Latin-1 or ASCII"))?;
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
    let codec =
        charset(headers).ok_or(Unmodelled("a charset other than UTF-8, Latin-1 or ASCII"))?;
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
    let codec =
        charset(headers).ok_or(Unmodelled("a charset other than UTF-8, Latin-1 or ASCII"))?;
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

/// Which model of the union `JSONRPCMessage` pydantic makes a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Request,
    Notification,
    Response,
    Error,
}

/// pydantic's smart union over `JSONRPCRequest | JSONRPCNotification | JSONRPCResponse |
/// JSONRPCError`, in lax mode: of the models the message is valid as, the one that sets the
/// most fields (an error's `ErrorData` counting its own), the first on a tie; which makes any
/// valid error an error, and then a request before a response before a notification. Unknown
/// members are ignored. The message as that model holds it.
pub(crate) fn pydantic(message: &Value) -> Result<(Kind, Value), ()> {
    if !message.is_object() {
        return Err(());
    }
    let field = |key: &str| message.get(key);
    let member = |key: &str, value: Value| (key.to_owned(), value);
    if field("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(());
    }
    let jsonrpc = member("jsonrpc", Value::String("2.0".to_owned()));
    let id = field("id").filter(|id| is_request_id(id));
    let params = match field("params") {
        None => Some(None),
        Some(Value::Null) => Some(Some(Value::Null)),
        Some(params) if params.is_object() => Some(Some(params.clone())),
        Some(_) => None,
    };
    if let (Some(error), Some(id)) = (field("error").and_then(error_data), field("id")) {
        if matches!(id, Value::Null) || is_request_id(id) {
            let members = vec![jsonrpc, member("id", id.clone()), member("error", error)];
            return Ok((Kind::Error, Value::Object(members)));
        }
    }
    let method = field("method").and_then(Value::as_str);
    if let (Some(id), Some(method), Some(params)) = (id, method, &params) {
        let mut members = vec![
            jsonrpc,
            member("id", id.clone()),
            member("method", Value::String(method.to_owned())),
        ];
        if let Some(params) = params {
            members.push(member("params", params.clone()));
        }
        return Ok((Kind::Request, Value::Object(members)));
    }
    if let (Some(id), Some(result)) = (id, field("result").filter(|result| result.is_object())) {
        let members = vec![
            jsonrpc,
            member("id", id.clone()),
            member("result", result.clone()),
        ];
        return Ok((Kind::Response, Value::Object(members)));
    }
    if let (Some(method), Some(params)) = (method, params) {
        let mut members = vec![jsonrpc, member("method", Value::String(method.to_owned()))];
        if let Some(params) = params {
            members.push(member("params", params));
        }
        return Ok((Kind::Notification, Value::Object(members)));
    }
    Err(())
}

/// `RequestId`: a strict int (a JSON number with no fraction or exponent), or a string.
fn is_request_id(value: &Value) -> bool {
    match value {
        Value::String(_) => true,
        Value::Number(text) => {
            !text.contains(['.', 'e', 'E']) && text != "NaN" && !text.ends_with("Infinity")
        }
        _ => false,
    }
}

/// `ErrorData` in lax mode: its fields as pydantic holds them (`code` an int), or `None`.
fn error_data(error: &Value) -> Option<Value> {
    if !error.is_object() {
        return None;
    }
    let code = lax_int(error.get("code")?)?;
    let message = error.get("message")?.as_str()?;
    let mut members = vec![
        ("code".to_owned(), Value::Number(code)),
        ("message".to_owned(), Value::String(message.to_owned())),
    ];
    if let Some(data) = error.get("data") {
        members.push(("data".to_owned(), data.clone()));
    }
    Some(Value::Object(members))
}

/// An `int` in lax mode: an integer; a finite float with no fraction; `true` and `false`; a
/// string of one (white space around it, a sign, single underscores between digits, a `.` and
/// zeros after it). Its decimal text.
fn lax_int(value: &Value) -> Option<String> {
    let normal = |negative: bool, digits: &str| {
        let digits = digits.trim_start_matches('0');
        match (digits.is_empty(), negative) {
            (true, _) => "0".to_owned(),
            (false, true) => format!("-{digits}"),
            (false, false) => digits.to_owned(),
        }
    };
    match value {
        Value::Bool(flag) => Some(if *flag { "1" } else { "0" }.to_owned()),
        Value::Number(text)
            if !text.contains(['.', 'e', 'E'])
                && text
                    .bytes()
                    .all(|byte| byte == b'-' || byte.is_ascii_digit()) =>
        {
            let negative = text.starts_with('-');
            Some(normal(negative, text.trim_start_matches('-')))
        }
        Value::Number(text) => {
            let float: f64 = text.parse().ok()?;
            if !float.is_finite() || float.fract() != 0.0 {
                return None;
            }
            Some(if float == 0.0 {
                "0".to_owned()
            } else {
                format!("{float:.0}")
            })
        }
        Value::String(text) => {
            let text = text.trim_matches(|ch: char| ch.is_ascii_whitespace());
            let (negative, rest) = match text.as_bytes().first() {
                Some(b'-') => (true, &text[1..]),
                Some(b'+') => (false, &text[1..]),
                _ => (false, text),
            };
            let (whole, fraction) = rest.split_once('.').unwrap_or((rest, "0"));
            if !fraction.bytes().all(|byte| byte == b'0') {
                return None;
            }
            let parts: Vec<&str> = whole.split('_').collect();
            if parts
                .iter()
                .any(|part| part.is_empty() || !part.bytes().all(|byte| byte.is_ascii_digit()))
            {
                return None;
            }
            Some(normal(negative, &parts.concat()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> Option<Kind> {
        pydantic(&lenient::parse_as(text, Dialect::Pydantic).ok()?)
            .ok()
            .map(|(kind, _)| kind)
    }

    #[test]
    fn the_smart_union_picks_as_pydantic_does() {
        for (text, expected) in [
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
                Some(Kind::Response),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"m","result":{}}"#,
                Some(Kind::Request),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"x","error":{"code":1,"message":"m"},"method":"m"}"#,
                Some(Kind::Error),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}"#,
                Some(Kind::Error),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1.0,"method":"m"}"#,
                Some(Kind::Notification),
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":true,"message":"x"}}"#,
                Some(Kind::Error),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}"#,
                None,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":" 7_0 ","message":"m"}}"#,
                Some(Kind::Error),
            ),
            (r#"{"jsonrpc":"2.0","id":null,"result":{}}"#, None),
            (r#"{"jsonrpc":"2.0","method":"n","params":[1]}"#, None),
            (
                r#"{"jsonrpc":"2.0","method":"n","params":null}"#,
                Some(Kind::Notification),
            ),
        ] {
            assert_eq!(kind(text), expected, "{text}");
        }
    }

    #[test]
    fn the_charset_is_the_first_one_email_reads() {
        for (content_type, expected) in [
            ("text/event-stream; charset=latin-1", Some("latin-1")),
            (
                "text/event-stream; Charset = \"ISO-8859-1\"; charset=utf-8",
                Some("ISO-8859-1"),
            ),
            ("text/event-stream; a=\"x;charset=ascii\"", None),
            ("text/event-stream", None),
        ] {
            assert_eq!(
                charset_param(content_type).as_deref(),
                expected,
                "{content_type}"
            );
        }
    }

    #[test]
    fn lines_end_as_httpx2_ends_them() {
        let mut lines = LineDecoder::default();
        assert_eq!(lines.decode("a\r"), Vec::<String>::new());
        assert_eq!(lines.decode("\nb\rc"), ["a", "b"]);
        assert_eq!(lines.decode("\r"), Vec::<String>::new());
        assert_eq!(lines.flush(), ["c", ""]);
    }
}
