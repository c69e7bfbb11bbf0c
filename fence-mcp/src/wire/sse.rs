//! Server-sent events, event by event.
//!
//! The proxy must rewrite the `data` of each `message` event and pass on everything else a
//! client acts on: `id:` and `retry:` lines, priming events (an `id:` and empty data), events
//! of other types, comments. The SSE crates (`sse-stream`, which rmcp uses, and
//! `eventsource-stream`) parse a stream into fields and hand back no bytes, so the framing here
//! is our own, and small: [`Framer`] cuts a stream into events at the blank line that ends
//! each, keeping every byte, and [`Event`] reads one event's fields as the WHATWG HTML
//! standard's "interpret an event stream" says, and as both official SDKs' readers do
//! (`eventsource-parser` and the Python SDK's `httpx` decoder): a line ends at CRLF, LF or CR;
//! `name:value` with one leading space dropped from the value; a line with no colon is a field
//! with an empty value; a line starting with `:` is a comment; a byte-order mark is skipped at
//! the start of the stream only (the TypeScript SDK's `TextDecoderStream` skips one, and
//! `eventsource-parser` then skips the mark's Latin-1 spelling, `ï»¿`), so a line that starts
//! with one later is a field no client knows.
//!
//! What the proxy writes is never the upstream's framing: each event it passes on is written
//! again from the fields it read, one `name: value` line each, in the order they came, LF line
//! endings, a blank line at its end, and the fields no client acts on left out
//! ([`Event::rewritten`], [`Event::written_again`]). So a client reads exactly the fields the
//! proxy read, whatever quirk of framing its reader has. The tests read the same streams with
//! `sse-stream` and check that the two agree on every event.

use std::borrow::Cow;

use memchr::memchr2;

/// What [`Framer::feed`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Framed {
    /// One whole event: its bytes, up to and including the blank line that ends it.
    Event(Vec<u8>),
    /// An event longer than the limit ended; its bytes were not kept. Its size in bytes.
    Oversized(u64),
}

/// Cuts a stream of bytes, fed in pieces as they arrive, into events.
#[derive(Debug)]
pub(crate) struct Framer {
    /// The bytes of the event being read, while it is within the limit.
    buffer: Vec<u8>,
    /// The largest event kept, in bytes.
    limit: usize,
    /// The size so far of an oversized event, whose bytes are dropped as they come.
    dropping: Option<u64>,
    /// Whether the line being read has a byte in it yet.
    line_has_bytes: bool,
    /// Whether the last byte seen was a CR ending a line: an LF right after it ends the same
    /// line.
    after_cr: bool,
    /// The stream's first bytes, while they may still be a byte-order mark a client skips
    /// (`None` once the stream's start is read).
    start: Option<Vec<u8>>,
}

/// A UTF-8 byte-order mark, which a client skips at the start of a stream.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// A byte-order mark's Latin-1 characters (`ï»¿`) in UTF-8, which `eventsource-parser` skips
/// at the start of the text it is given (after `TextDecoderStream` has skipped a real one).
const BOM_AS_LATIN_1: &[u8] = b"\xc3\xaf\xc2\xbb\xc2\xbf";

/// Whether a stream starting with `start` may yet start with a mark a client skips: `start`
/// is all or part of one.
fn may_start_with_a_mark(start: &[u8]) -> bool {
    let partly = |mark: &[u8], bytes: &[u8]| bytes.len() < mark.len() && mark.starts_with(bytes);
    match start.strip_prefix(BOM) {
        Some(rest) => partly(BOM_AS_LATIN_1, rest),
        None => partly(BOM, start) || partly(BOM_AS_LATIN_1, start),
    }
}

/// `start` without the marks a client skips at the start of a stream.
fn without_marks(start: &[u8]) -> &[u8] {
    let start = start.strip_prefix(BOM).unwrap_or(start);
    start.strip_prefix(BOM_AS_LATIN_1).unwrap_or(start)
}

impl Framer {
    /// A framer keeping events of up to `limit` bytes.
    pub(crate) fn new(limit: usize) -> Framer {
        Framer {
            buffer: Vec::new(),
            limit,
            dropping: None,
            line_has_bytes: false,
            after_cr: false,
            start: Some(Vec::new()),
        }
    }

    /// Reads the next bytes of the stream, pushing every event they end onto `out`.
    pub(crate) fn feed(&mut self, bytes: &[u8], out: &mut Vec<Framed>) {
        let Some(mut start) = self.start.take() else {
            return self.feed_events(bytes, out);
        };
        start.extend_from_slice(bytes);
        if may_start_with_a_mark(&start) {
            self.start = Some(start);
            return;
        }
        self.feed_events(without_marks(&start), out);
    }

    fn feed_events(&mut self, mut bytes: &[u8], out: &mut Vec<Framed>) {
        while !bytes.is_empty() {
            let Some(end) = self.scan(bytes) else {
                self.keep(bytes);
                return;
            };
            let (event, rest) = bytes.split_at(end);
            self.keep(event);
            out.push(match self.dropping.take() {
                Some(size) => Framed::Oversized(size),
                None => Framed::Event(std::mem::take(&mut self.buffer)),
            });
            bytes = rest;
        }
    }

    /// What is left once the stream has ended: the bytes of an event its blank line never
    /// ended (a client drops such an event, so it is passed on as it is), or the size of an
    /// oversized one.
    pub(crate) fn finish(&mut self) -> Option<Framed> {
        if let Some(start) = self.start.take() {
            let mut out = Vec::new();
            self.feed_events(without_marks(&start), &mut out);
            debug_assert!(out.is_empty(), "a mark's bytes end no event");
        }
        match self.dropping.take() {
            Some(size) => Some(Framed::Oversized(size)),
            None if self.buffer.is_empty() => None,
            None => Some(Framed::Event(std::mem::take(&mut self.buffer))),
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        let len = bytes.len() as u64;
        match &mut self.dropping {
            Some(size) => *size += len,
            None if self.buffer.len() + bytes.len() > self.limit => {
                self.dropping = Some(self.buffer.len() as u64 + len);
                self.buffer = Vec::new();
            }
            None => self.buffer.extend_from_slice(bytes),
        }
    }

    /// Where in `bytes` the event being read ends (just after its blank line), if it does.
    fn scan(&mut self, bytes: &[u8]) -> Option<usize> {
        let mut at = 0;
        while at < bytes.len() {
            if std::mem::take(&mut self.after_cr) && bytes[at] == b'\n' {
                at += 1;
                continue;
            }
            let Some(found) = memchr2(b'\n', b'\r', &bytes[at..]) else {
                self.line_has_bytes = true;
                return None;
            };
            let blank = found == 0 && !self.line_has_bytes;
            let end = at + found;
            self.line_has_bytes = false;
            at = end + 1;
            if bytes[end] == b'\r' {
                if bytes.get(at) == Some(&b'\n') {
                    at += 1;
                } else {
                    self.after_cr = at == bytes.len();
                }
            }
            if blank {
                return Some(at);
            }
        }
        None
    }
}

/// The lines of `bytes`, each with where its content ends and where its line ending ends.
fn lines(bytes: &[u8]) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= bytes.len() {
            return None;
        }
        let start = at;
        let (end, next) = match memchr2(b'\n', b'\r', &bytes[at..]) {
            None => (bytes.len(), bytes.len()),
            Some(found) => {
                let end = at + found;
                let crlf = bytes[end] == b'\r' && bytes.get(end + 1) == Some(&b'\n');
                (end, end + 1 + usize::from(crlf))
            }
        };
        at = next;
        Some((start, end, next))
    })
}

/// A field's name and value, as a client reads them from one line; `None` for a comment.
fn field(line: &[u8]) -> Option<(&[u8], &[u8])> {
    match memchr::memchr(b':', line) {
        Some(0) => None,
        Some(colon) => {
            let value = &line[colon + 1..];
            Some((&line[..colon], value.strip_prefix(b" ").unwrap_or(value)))
        }
        None => Some((line, b"")),
    }
}

/// One event, as a client reads it.
#[derive(Debug)]
pub(crate) struct Event<'a> {
    raw: &'a [u8],
    /// Its type: the last `event` field's value (empty when there is none).
    kind: &'a [u8],
    /// Its data, the `data` fields' values joined by LF, when it has any `data` field.
    data: Option<Cow<'a, [u8]>>,
    /// The last `id` field's value, unless it holds a NUL (which a client ignores).
    id: Option<&'a [u8]>,
    /// The last `retry` field's value that is all ASCII digits, in milliseconds (a client
    /// ignores any other): how long the server asks a client to wait before reconnecting.
    retry: Option<u64>,
    /// Where its one `data` line starts and where its line ending ends, when it has exactly
    /// one (as nearly every event does), so that rewriting it need not read its lines again.
    only_data_line: Option<(usize, usize)>,
}

impl<'a> Event<'a> {
    /// Reads the fields of `raw`, one event's bytes (as [`Framer`] gives them).
    pub(crate) fn read(raw: &'a [u8]) -> Event<'a> {
        let mut kind: &[u8] = b"";
        let mut data: Option<Cow<'a, [u8]>> = None;
        let mut id = None;
        let mut retry = None;
        let mut only_data_line = None;
        for (start, end, next) in lines(raw) {
            match field(&raw[start..end]) {
                Some((b"event", value)) => kind = value,
                Some((b"id", value)) if !value.contains(&0) => id = Some(value),
                Some((b"retry", value))
                    if !value.is_empty() && value.iter().all(u8::is_ascii_digit) =>
                {
                    // Digits past u64 are a wait no proxy honours whole: the longest.
                    retry = Some(value.iter().fold(0u64, |ms, digit| {
                        ms.saturating_mul(10)
                            .saturating_add(u64::from(digit - b'0'))
                    }));
                }
                Some((b"data", value)) => match &mut data {
                    None => {
                        data = Some(Cow::Borrowed(value));
                        only_data_line = Some((start, next));
                    }
                    Some(joined) => {
                        only_data_line = None;
                        let joined = joined.to_mut();
                        joined.push(b'\n');
                        joined.extend_from_slice(value);
                    }
                },
                _ => {}
            }
        }
        Event {
            raw,
            kind,
            data,
            id,
            retry,
            only_data_line,
        }
    }

    /// The event's bytes, as they came.
    pub(crate) fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// The event's id, which a client sends back as `Last-Event-ID` to resume the stream.
    pub(crate) fn id(&self) -> Option<&'a [u8]> {
        self.id
    }

    /// The reconnection time its `retry` field sets, in milliseconds, as a client reads it:
    /// the last `retry` field whose value is all ASCII digits (WHATWG HTML; the TypeScript
    /// SDK's `eventsource-parser` and the Python SDK's `httpx-sse` read it so).
    pub(crate) fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// The JSON-RPC message this event carries, when it is one: a `message` event (or one
    /// with no type, which a client reads as `message`) with data that is not blank. A priming
    /// event's empty data carries none, and clients skip it.
    pub(crate) fn message(&self) -> Option<&[u8]> {
        if !(self.kind.is_empty() || self.kind == b"message") {
            return None;
        }
        self.data
            .as_deref()
            .filter(|data| !data.iter().all(u8::is_ascii_whitespace))
    }

    /// The event again as a client reads it, with its data replaced by `message` (`None`:
    /// with no data, so a client dispatches nothing, yet still takes its `id`), every other
    /// field it acts on written as the proxy read it (see the module docs).
    pub(crate) fn rewritten(&self, message: Option<&[u8]>) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.raw.len() + message.map_or(0, <[u8]>::len) + 16);
        let mut data = Some(message);
        let ended = write_lines(
            self.raw,
            |out| {
                if let Some(Some(message)) = data.take() {
                    write_data(message, out);
                }
            },
            &mut out,
        );
        end_event(ended, &mut out);
        out
    }

    /// The event again as a client reads it, its own data and all (see the module docs): an
    /// event that carries no message, as the proxy passes it on.
    pub(crate) fn written_again(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.raw.len() + 8);
        let mut data = self.data.clone();
        let ended = write_lines(
            self.raw,
            |out| {
                if let Some(data) = data.take() {
                    write_data(&data, out);
                }
            },
            &mut out,
        );
        end_event(ended, &mut out);
        out
    }
}

impl Event<'_> {
    /// As [`Event::rewritten`] with `message`, in pieces that do not copy it: the lines before
    /// the data, the message on one `data:` line, and the lines after. A message with a line
    /// break in it is written on several `data:` lines, in one piece.
    pub(crate) fn rewritten_around(&self, message: Vec<u8>) -> [bytes::Bytes; 3] {
        if memchr2(b'\n', b'\r', &message).is_some() {
            let whole = self.rewritten(Some(&message));
            return [whole.into(), bytes::Bytes::new(), bytes::Bytes::new()];
        }
        let (mut head, mut tail) = (Vec::new(), b"\n".to_vec());
        // The lines after the first `data` line: any other `data` line among them is left out.
        let (start, next) = self.only_data_line.unwrap_or_else(|| {
            lines(self.raw)
                .find(|&(start, end, _)| matches!(field(&self.raw[start..end]), Some((b"data", _))))
                .map_or((self.raw.len(), self.raw.len()), |(start, _, next)| {
                    (start, next)
                })
        });
        let (before, after) = (&self.raw[..start], &self.raw[next..]);
        write_lines(before, |_| {}, &mut head);
        head.extend_from_slice(b"data: ");
        let ended = write_lines(after, |_| {}, &mut tail);
        end_event(ended, &mut tail);
        [head.into(), message.into(), tail.into()]
    }
}

/// Writes the whole lines of `bytes` (lines of one event) as a client reads them, each ending
/// in LF: a comment as `:` and its text, a field a client acts on as `name: value`, the blank
/// line that ends the event as a blank line; a field no client acts on not at all, and each
/// `data` line as `data` says (which writes the event's data, once). Whether the blank line
/// ending the event was among them.
fn write_lines(bytes: &[u8], mut data: impl FnMut(&mut Vec<u8>), out: &mut Vec<u8>) -> bool {
    for (start, end, _) in lines(bytes) {
        let line = &bytes[start..end];
        if line.is_empty() {
            // Only the last line of an event is blank.
            out.push(b'\n');
            return true;
        }
        // No client shows a comment, an event's type, id or retry, but none of them carries a
        // live marker on, either.
        match field(line) {
            None => {
                out.extend_from_slice(&fence_runtime::neutralise_bytes(line));
                out.push(b'\n');
            }
            Some((b"data", _)) => data(out),
            Some((name @ (b"event" | b"id" | b"retry"), value)) => {
                write_field(name, &fence_runtime::neutralise_bytes(value), out);
            }
            Some(_) => {}
        }
    }
    false
}

/// Ends an event the upstream left without its blank line (its last, cut off by the end of
/// the stream): the proxy read it, so a client reads it too, and what follows it in the
/// proxy's own stream is an event of its own.
fn end_event(ended: bool, out: &mut Vec<u8>) {
    if !ended {
        out.push(b'\n');
    }
}

/// `data` on one `data` line for each of its lines (an event's data is its `data` lines'
/// values joined by LF, so this gives back the same data; a CR in a message is a line break
/// too, and JSON reads the empty line it may add as whitespace).
fn write_data(data: &[u8], out: &mut Vec<u8>) {
    for line in data.split(|&byte| byte == b'\n' || byte == b'\r') {
        write_field(b"data", line, out);
    }
}

/// One field's line: `name: value` (`name:` for an empty value, which a client reads alike).
fn write_field(name: &[u8], value: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(name);
    out.push(b':');
    if !value.is_empty() {
        out.push(b' ');
        out.extend_from_slice(value);
    }
    out.push(b'\n');
}

/// One event of the proxy's own: `message` (so every client reads it as one) carrying
/// `message`.
pub(crate) fn message_event(message: &[u8]) -> Vec<u8> {
    identified_event(None, message)
}

/// One event of the proxy's own, as [`message_event`], with the id `id` when there is one (a
/// client resumes its stream after it).
pub(crate) fn identified_event(id: Option<&str>, message: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(message.len() + 32);
    if let Some(id) = id {
        write_field(b"id", id.as_bytes(), &mut out);
    }
    out.extend_from_slice(b"event: message\n");
    for (start, end, _) in lines(message) {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(&message[start..end]);
        out.push(b'\n');
    }
    out.push(b'\n');
    out
}

/// A priming event (SEP-1699): the id `id` and empty data, which a client dispatches nothing
/// for, yet resumes its stream after, `retry` milliseconds after it broke off.
pub(crate) fn priming_event(id: &str, retry: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(id.len() + 32);
    write_field(b"id", id.as_bytes(), &mut out);
    write_field(b"retry", retry.to_string().as_bytes(), &mut out);
    write_field(b"data", b"", &mut out);
    out.push(b'\n');
    out
}

#[cfg(test)]
mod tests;
