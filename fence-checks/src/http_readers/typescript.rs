//! The TypeScript SDK's reading (1.32.2, `StreamableHTTPClientTransport` on Node 20's `fetch`,
//! `TextDecoderStream` and `eventsource-parser` 3.1.1, messages checked with zod 4). The rules,
//! and where each was read, are in the parent module's docs.

use crate::lenient::{self, Value};

use super::text::{Utf8Stream, is_js_space, latin1};
use super::{Handed, Request, Response, Said, Unmodelled, has_body, is_token, reason, redirects};

/// The largest integer zod's `z.number().int()` takes: `Number.MAX_SAFE_INTEGER`.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// The key the SDK's request metadata schema names a related task under.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// What `fetch` hands the SDK of the response's headers: names lowercased, each value with
/// the white space before it dropped (Node's HTTP parser keeps what follows it) and decoded as
/// Latin-1.
struct Headers(Vec<(String, String)>);

impl Headers {
    /// `Headers.get`: every value of the name joined with `", "`; `None` when there is none.
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

/// The headers as `fetch` reads them, or `None` when Node's parser refuses one (a control
/// character other than a tab in a value), so `fetch` fails.
fn headers(raw: &[(Vec<u8>, Vec<u8>)]) -> Option<Headers> {
    let mut read = Vec::with_capacity(raw.len());
    for (name, value) in raw {
        if value
            .iter()
            .any(|&byte| (byte < 0x20 && byte != b'\t') || byte == 0x7F)
        {
            return None;
        }
        let start = value
            .iter()
            .position(|&byte| byte != b' ' && byte != b'\t')
            .unwrap_or(value.len());
        read.push((latin1(name).to_ascii_lowercase(), latin1(&value[start..])));
    }
    Some(Headers(read))
}

/// Reads `response` to `request` as the TypeScript SDK does.
pub(super) fn read(request: &Request, response: &Response) -> Result<Vec<Handed>, Unmodelled> {
    if response.headers.iter().any(|(name, _)| !is_token(name)) {
        return Err(Unmodelled("a header name that is not a token"));
    }
    let Some(headers) = headers(&response.headers) else {
        return Ok(failed(request, &Said::exact("fetch failed")));
    };
    if redirects(response) {
        return Err(Unmodelled(
            "a redirect, which the SDK follows within its origin or reports naming its target",
        ));
    }
    let status = response.status;
    // `fetch` gives a 204, 205 or 304 response no body.
    let chunks: &[Vec<u8>] = if has_body(status) && status != 205 {
        &response.chunks
    } else {
        &[]
    };
    Ok(match request {
        Request::Post(body) => post(body, status, &headers, chunks),
        Request::Get => get(request, status, chunks, None),
        Request::Resume { request: sent, .. } => {
            // `send` with a resumption token puts the request's id on the results it reads.
            let replay = sent
                .as_deref()
                .and_then(|body| lenient::parse(&String::from_utf8_lossy(body)).ok())
                .and_then(|message| match zod(&message) {
                    Ok((Kind::Request, read)) => read.get("id").cloned(),
                    _ => None,
                });
            get(request, status, chunks, replay.as_ref())
        }
    })
}

/// How an error opening a stream (or any request's `fetch` failing) reaches the caller:
/// `send` rejects with it (and tells `onerror`); `resumeStream` rejects with it, and
/// `_startOrAuthSse` tells `onerror` first; the GET stream the transport opens itself and a
/// request's stream `send` resumes are not awaited, so `onerror` is told twice.
fn failed(request: &Request, said: &Said) -> Vec<Handed> {
    match request {
        Request::Post(_) | Request::Resume { request: None, .. } => {
            vec![Handed::Raised(said.clone())]
        }
        Request::Get
        | Request::Resume {
            request: Some(_), ..
        } => {
            vec![
                Handed::Reported(said.clone()),
                Handed::Reported(said.clone()),
            ]
        }
    }
}

/// `send`: a POST's response.
fn post(body: &[u8], status: u16, headers: &Headers, chunks: &[Vec<u8>]) -> Vec<Handed> {
    let Ok(sent) = lenient::parse(&String::from_utf8_lossy(body)) else {
        // Not JSON: the SDK never sends it.
        return Vec::new();
    };
    if !(200..=299).contains(&status) {
        let text = decode(chunks);
        return vec![Handed::Raised(Said::exact(format!(
            "Streamable HTTP error: Error POSTing to endpoint: {text}"
        )))];
    }
    if status == 202 {
        return Vec::new();
    }
    let messages: Vec<&Value> = match &sent {
        Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    let has_requests = messages
        .iter()
        .any(|message| message.get("method").is_some() && message.get("id").is_some());
    if !has_requests {
        return Vec::new();
    }
    let content_type = headers.get("content-type");
    match media_type_essence(content_type.as_deref()).as_deref() {
        Some("text/event-stream") => stream(chunks, false, None),
        Some("application/json") => json_body(chunks),
        _ => vec![Handed::Raised(Said::exact(format!(
            "Streamable HTTP error: Unexpected content type: {}",
            content_type.as_deref().unwrap_or("null")
        )))],
    }
}

/// `_startOrAuthSse`: the GET stream, or a resumed one (`replay`: the id `send` puts on its
/// results).
fn get(request: &Request, status: u16, chunks: &[Vec<u8>], replay: Option<&Value>) -> Vec<Handed> {
    if !(200..=299).contains(&status) {
        if status == 405 {
            return Vec::new();
        }
        let said = Said::exact(format!(
            "Streamable HTTP error: Failed to open SSE stream: {}",
            reason(status)
        ));
        return failed(request, &said);
    }
    if !has_body(status) || status == 205 {
        // `response.body` is null: nothing is read, and nothing reconnects.
        return Vec::new();
    }
    // No Content-Type is looked at: any 2xx body is read as an event stream.
    stream(chunks, true, replay)
}

/// `response.text()`: the body decoded as UTF-8, a BOM at its start dropped.
fn decode(chunks: &[Vec<u8>]) -> String {
    let mut decoder = Utf8Stream::new(true);
    let mut text: String = chunks.iter().map(|chunk| decoder.feed(chunk)).collect();
    text.push_str(&decoder.finish());
    text
}

/// A JSON body: `response.json()`, then each message (or each of a batch's) through the
/// schema; any that fails fails them all.
fn json_body(chunks: &[Vec<u8>]) -> Vec<Handed> {
    let text = decode(chunks);
    let Ok(data) = lenient::parse(&text) else {
        // V8's `SyntaxError` quotes up to 20 characters of the text around the error.
        return vec![Handed::Raised(Said::quoting("", vec![text]))];
    };
    let items: Vec<&Value> = match &data {
        Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    let mut read = Vec::with_capacity(items.len());
    for item in items {
        match zod(item) {
            Ok((_, message)) => read.push(Handed::Message(message)),
            Err(error) => return vec![Handed::Raised(error)],
        }
    }
    read
}

/// `mediaTypeEssence`: the `content-type` package's `parse(...).type` (lowercased), or, when it
/// throws, the text before the first `;`, trimmed and lowercased, unless that is empty or the
/// rest of the value holds a comma (joined headers).
fn media_type_essence(header: Option<&str>) -> Option<String> {
    let header = header.filter(|header| !header.is_empty())?;
    if let Some(essence) = content_type_parse(header) {
        return Some(essence);
    }
    let essence = header
        .split(';')
        .next()
        .unwrap_or("")
        .trim_matches(is_js_space)
        .to_lowercase();
    // The SDK cuts the rest at the trimmed essence's length, from the untrimmed header.
    let rest: String = header.chars().skip(essence.chars().count()).collect();
    if essence.is_empty() || rest.contains(',') {
        None
    } else {
        Some(essence)
    }
}

/// Whether `ch` is a token character of the `content-type` package's expressions.
fn is_tchar(ch: char) -> bool {
    ch.is_ascii_alphanumeric() || "!#$%&'*+.^_`|~-".contains(ch)
}

/// The `content-type` package's `parse`: the type (lowercased) when the value is
/// `type/subtype` followed by `; name=value` parameters, each exactly where the last ended.
fn content_type_parse(header: &str) -> Option<String> {
    let chars: Vec<char> = header.chars().collect();
    let index = chars.iter().position(|&ch| ch == ';');
    let head: String = chars[..index.unwrap_or(chars.len())].iter().collect();
    let media = head.trim_matches(is_js_space);
    let (kind, subtype) = media.split_once('/')?;
    let token = |text: &str| !text.is_empty() && text.chars().all(is_tchar);
    if !token(kind) || !token(subtype) {
        return None;
    }
    if let Some(mut at) = index {
        while at < chars.len() {
            at = parameter_at(&chars, at)?;
        }
    }
    Some(media.to_lowercase())
}

/// Where `PARAM_REGEXP` (`; *token *= *(quoted|token) *`) ends when it matches at `at`.
fn parameter_at(chars: &[char], mut at: usize) -> Option<usize> {
    let spaces = |at: &mut usize| {
        while chars.get(*at) == Some(&' ') {
            *at += 1;
        }
    };
    let token = |at: &mut usize| {
        let start = *at;
        while chars.get(*at).copied().is_some_and(is_tchar) {
            *at += 1;
        }
        *at > start
    };
    if chars.get(at) != Some(&';') {
        return None;
    }
    at += 1;
    spaces(&mut at);
    if !token(&mut at) {
        return None;
    }
    spaces(&mut at);
    if chars.get(at) != Some(&'=') {
        return None;
    }
    at += 1;
    spaces(&mut at);
    if chars.get(at) == Some(&'"') {
        at += 1;
        loop {
            match chars.get(at).copied() {
                Some('"') => {
                    at += 1;
                    break;
                }
                Some('\\') => {
                    let escaped = chars.get(at + 1).copied()?;
                    if !(escaped == '\u{b}' || ('\u{20}'..='\u{ff}').contains(&escaped)) {
                        return None;
                    }
                    at += 2;
                }
                Some(ch)
                    if ch == '\u{b}'
                        || ch == ' '
                        || ch == '!'
                        || ('\u{23}'..='\u{5b}').contains(&ch)
                        || ('\u{5d}'..='\u{7e}').contains(&ch)
                        || ('\u{80}'..='\u{ff}').contains(&ch) =>
                {
                    at += 1;
                }
                _ => return None,
            }
        }
    } else if !token(&mut at) {
        return None;
    }
    spaces(&mut at);
    Some(at)
}

/// One event as `eventsource-parser` dispatches it.
#[derive(Debug, Default)]
struct Event {
    id: Option<String>,
    /// Its type (`event`); none when it had no `event:` line, or an empty one.
    kind: Option<String>,
    data: String,
}

/// The events of a stream: `TextDecoderStream` (a BOM at the stream's start dropped, invalid
/// UTF-8 replaced) into `EventSourceParserStream`.
fn events(chunks: &[Vec<u8>]) -> Vec<Event> {
    let mut utf8 = Utf8Stream::new(true);
    let mut decoded: Vec<String> = chunks.iter().map(|chunk| utf8.feed(chunk)).collect();
    decoded.push(utf8.finish());
    // `TextDecoderStream` enqueues only text that is not empty; the parser drops "ï»¿" (the
    // BOM's bytes read as Latin-1) from the start of the first chunk it is fed, and only
    // there.
    let mut text = String::new();
    let mut first = true;
    for chunk in decoded.iter().filter(|chunk| !chunk.is_empty()) {
        if first {
            first = false;
            text.push_str(chunk.strip_prefix("\u{ef}\u{bb}\u{bf}").unwrap_or(chunk));
        } else {
            text.push_str(chunk);
        }
    }
    let mut parser = Parser::default();
    let mut rest = text.as_str();
    // A line ends at CR, LF or CRLF; a CR that is the stream's last character may yet be
    // followed by LF, so it ends nothing; what follows the last line ending is never read
    // (the parser has no flush).
    while let Some(end) = rest.find(['\r', '\n']) {
        let bytes = rest.as_bytes();
        let next = if bytes[end] == b'\r' {
            match bytes.get(end + 1) {
                None => break,
                Some(b'\n') => end + 2,
                Some(_) => end + 1,
            }
        } else {
            end + 1
        };
        parser.line(&rest[..end]);
        rest = &rest[next..];
    }
    parser.events
}

/// `eventsource-parser`'s state between lines.
#[derive(Debug, Default)]
struct Parser {
    id: Option<String>,
    event: Option<String>,
    data: String,
    data_lines: usize,
    events: Vec<Event>,
}

impl Parser {
    /// `parseLine`, with `processField`.
    fn line(&mut self, line: &str) {
        if line.is_empty() {
            if self.data_lines > 0 {
                self.events.push(Event {
                    id: self.id.take(),
                    kind: self.event.take(),
                    data: std::mem::take(&mut self.data),
                });
            }
            self.id = None;
            self.event = None;
            self.data.clear();
            self.data_lines = 0;
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = (!value.is_empty()).then(|| value.to_owned()),
            "data" => {
                if self.data_lines > 0 {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.data_lines += 1;
            }
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            // `retry` sets the delay before reconnecting; any other field is reported to an
            // `onError` the SDK does not pass.
            _ => {}
        }
    }
}

/// `_handleSseStream`: what the SDK hands on from a stream, and whether it reconnects.
fn stream(chunks: &[Vec<u8>], reconnectable: bool, replay: Option<&Value>) -> Vec<Handed> {
    let mut handed = Vec::new();
    let mut last_event_id = None;
    let mut primed = false;
    let mut answered = false;
    for event in events(chunks) {
        if let Some(id) = event.id.filter(|id| !id.is_empty()) {
            last_event_id = Some(id);
            primed = true;
        }
        if event.data.is_empty() {
            continue;
        }
        if event.kind.as_deref().is_some_and(|kind| kind != "message") {
            continue;
        }
        let Ok(data) = lenient::parse(&event.data) else {
            handed.push(Handed::Reported(Said::quoting("", vec![event.data])));
            continue;
        };
        match zod(&data) {
            Ok((kind, mut message)) => {
                if kind == Kind::Result {
                    answered = true;
                    if let (Some(id), Value::Object(members)) = (replay, &mut message) {
                        for (key, value) in members.iter_mut() {
                            if key == "id" {
                                *value = id.clone();
                            }
                        }
                    }
                }
                handed.push(Handed::Message(message));
            }
            Err(error) => handed.push(Handed::Reported(error)),
        }
    }
    if (reconnectable || primed) && !answered {
        handed.push(Handed::Reconnects(last_event_id));
    }
    handed
}

/// Which of the union `JSONRPCMessageSchema` a message is, in its order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Request,
    Notification,
    Result,
    Error,
}

/// `JSONRPCMessageSchema.parse`: the first of request, notification, result and error whose
/// schema the message meets, and the message as zod returns it (the error object's unknown
/// members dropped); or the `ZodError`, whose issues may name the message's keys (an
/// unrecognized key) but quote no value.
pub(crate) fn zod(message: &Value) -> Result<(Kind, Value), Said> {
    let fail = || {
        let keys: Vec<String> = message
            .members()
            .unwrap_or_default()
            .iter()
            .map(|(key, _)| key.clone())
            .collect();
        Said::quoting("", keys)
    };
    let Some(members) = message.members() else {
        return Err(fail());
    };
    let has = |key: &str| message.get(key).is_some();
    let only = |allowed: &[&str]| {
        members
            .iter()
            .all(|(key, _)| allowed.contains(&key.as_str()))
    };
    let version = message.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
    let id_ok = message.get("id").is_some_and(is_request_id);
    let method_ok = message.get("method").and_then(Value::as_str).is_some();
    let params_ok = message.get("params").is_none_or(is_params);
    let kind = if version
        && id_ok
        && method_ok
        && params_ok
        && only(&["jsonrpc", "id", "method", "params"])
    {
        Kind::Request
    } else if version
        && !has("id")
        && method_ok
        && params_ok
        && only(&["jsonrpc", "method", "params"])
    {
        Kind::Notification
    } else if version
        && id_ok
        && message.get("result").is_some_and(is_params)
        && only(&["jsonrpc", "id", "result"])
    {
        Kind::Result
    } else if version
        && message.get("id").is_none_or(is_request_id)
        && message.get("error").is_some_and(is_error)
        && only(&["jsonrpc", "id", "error"])
    {
        Kind::Error
    } else {
        return Err(fail());
    };
    Ok((kind, output(message, kind)))
}

/// The message as zod returns it: each member once (the last of a name, as `JSON.parse`
/// keeps), an error object's unknown members dropped.
fn output(message: &Value, kind: Kind) -> Value {
    let mut members: Vec<(String, Value)> = Vec::new();
    for (key, _) in message.members().unwrap_or_default() {
        if members.iter().any(|(seen, _)| seen == key) {
            continue;
        }
        let value = message.get(key).cloned().unwrap_or(Value::Null);
        let value = if kind == Kind::Error && key == "error" {
            let mut error = Vec::new();
            for name in ["code", "message", "data"] {
                if let Some(member) = value.get(name) {
                    error.push((name.to_owned(), member.clone()));
                }
            }
            Value::Object(error)
        } else {
            value
        };
        members.push((key.clone(), value));
    }
    Value::Object(members)
}

/// A number as JavaScript reads its JSON text.
fn js_number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(text) => text.parse().ok(),
        _ => None,
    }
}

/// `z.number().int()`: an integer within the safe range.
fn is_safe_integer(value: &Value) -> bool {
    js_number(value).is_some_and(|number| number.fract() == 0.0 && number.abs() <= MAX_SAFE_INTEGER)
}

/// `RequestIdSchema` (and `ProgressTokenSchema`): a string or a safe integer.
fn is_request_id(value: &Value) -> bool {
    value.as_str().is_some() || is_safe_integer(value)
}

/// A loose object whose `_meta`, when it has one, meets `RequestMetaSchema` (`params` and
/// `result` both).
fn is_params(value: &Value) -> bool {
    if !value.is_object() {
        return false;
    }
    let Some(meta) = value.get("_meta") else {
        return true;
    };
    meta.is_object()
        && meta.get("progressToken").is_none_or(is_request_id)
        && meta.get(RELATED_TASK).is_none_or(|task| {
            task.is_object() && task.get("taskId").and_then(Value::as_str).is_some()
        })
}

/// The `error` of `JSONRPCErrorResponseSchema`: a safe integer `code`, a string `message`.
fn is_error(value: &Value) -> bool {
    value.is_object()
        && value.get("code").is_some_and(is_safe_integer)
        && value.get("message").and_then(Value::as_str).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_as_the_sdk_reads_them() {
        for (header, essence) in [
            ("application/json", Some("application/json")),
            ("Application/JSON; charset=utf-8", Some("application/json")),
            ("text/event-stream;", Some("text/event-stream")),
            ("text/event-stream; charset=", Some("text/event-stream")),
            ("text/event-stream; a=\"b\\\"c\"", Some("text/event-stream")),
            (
                "application/json, text/event-stream",
                Some("application/json, text/event-stream"),
            ),
            ("application/json; a=b, text/html", None),
            ("text/plain; a=application/json", Some("text/plain")),
            ("\u{a0}application/json", Some("application/json")),
            (" ; x", None),
            ("", None),
        ] {
            assert_eq!(
                media_type_essence(Some(header)).as_deref(),
                essence,
                "{header:?}"
            );
        }
    }

    #[test]
    fn events_as_eventsource_parser_frames_them() {
        let read = |chunks: &[&[u8]]| {
            let chunks: Vec<Vec<u8>> = chunks.iter().map(|chunk| chunk.to_vec()).collect();
            events(&chunks)
                .into_iter()
                .map(|event| (event.kind, event.data))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            read(&[b"data: a\r\ndata:b\r\rdata: c\n"]),
            [(None, "a\nb".to_owned())]
        );
        assert_eq!(
            read(&[b"\xef\xbb\xbfdata: a\n\n"]),
            [(None, "a".to_owned())]
        );
        assert_eq!(
            read(&[b"\xc3\xaf\xc2\xbb\xc2\xbfdata: a\n\n"]),
            [(None, "a".to_owned())]
        );
        assert!(read(&[b"\xc3\xaf", b"\xc2\xbb\xc2\xbfdata: a\n\n"]).is_empty());
        assert!(read(&[b"data: a\n\xef\xbb\xbf\n"]).is_empty());
        assert_eq!(
            read(&[b"event: x\nevent\ndata\n\n"]),
            [(None, String::new())]
        );
        assert!(read(&[b"data: a\n\r"]).is_empty());
        assert_eq!(read(&[b"data: a\n\r\r"]), [(None, "a".to_owned())]);
    }
}
