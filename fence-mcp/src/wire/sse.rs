//! Server-sent events, event by event, byte for byte.
//!
//! The proxy must rewrite the `data` of each `message` event and pass everything else through
//! exactly as it came: `id:` and `retry:` lines, comments, priming events (an `id:` and empty
//! data), events of other types, even the line endings and the space after a colon. The SSE
//! crates (`sse-stream`, which rmcp uses, and `eventsource-stream`) parse a stream into fields
//! and hand back no bytes, so a stream read through them cannot be written again as it came:
//! `data:x` and `data: x` are one thing to them, and a comment is gone. So the framing here is
//! our own, and small: [`Framer`] cuts a stream into events at the blank line that ends each,
//! keeping every byte, and [`Event`] reads one event's fields as the WHATWG HTML standard's
//! "interpret an event stream" says (a line ends at CRLF, LF or CR; `name:value` with one
//! leading space dropped from the value; a line with no colon is a field with an empty value;
//! a line starting with `:` is a comment). The tests read the same streams with `sse-stream`
//! and check that the two agree on every event.

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
        }
    }

    /// Reads the next bytes of the stream, pushing every event they end onto `out`.
    pub(crate) fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<Framed>) {
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
    let line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
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
        let mut only_data_line = None;
        for (start, end, next) in lines(raw) {
            match field(&raw[start..end]) {
                Some((b"event", value)) => kind = value,
                Some((b"id", value)) if !value.contains(&0) => id = Some(value),
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
            only_data_line,
        }
    }

    /// The event's id, which a client sends back as `Last-Event-ID` to resume the stream.
    pub(crate) fn id(&self) -> Option<&'a [u8]> {
        self.id
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

    /// The event again with its data replaced by `message` (`None`: with no data, so a client
    /// dispatches nothing, yet still takes its `id`), every other line kept as it came.
    pub(crate) fn rewritten(&self, message: Option<&[u8]>) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.raw.len() + message.map_or(0, <[u8]>::len) + 16);
        let mut written = false;
        for (start, end, next) in lines(self.raw) {
            if !matches!(field(&self.raw[start..end]), Some((b"data", _))) {
                out.extend_from_slice(&self.raw[start..next]);
                continue;
            }
            if std::mem::replace(&mut written, true) {
                continue;
            }
            if let Some(message) = message {
                for (start, end, _) in lines(message) {
                    out.extend_from_slice(b"data: ");
                    out.extend_from_slice(&message[start..end]);
                    out.push(b'\n');
                }
            }
        }
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
        if let Some((start, next)) = self.only_data_line {
            head.extend_from_slice(&self.raw[..start]);
            head.extend_from_slice(b"data: ");
            tail.extend_from_slice(&self.raw[next..]);
            return [head.into(), message.into(), tail.into()];
        }
        let mut seen = false;
        for (start, end, next) in lines(self.raw) {
            if matches!(field(&self.raw[start..end]), Some((b"data", _))) {
                seen = true;
            } else if seen {
                tail.extend_from_slice(&self.raw[start..next]);
            } else {
                head.extend_from_slice(&self.raw[start..next]);
            }
        }
        head.extend_from_slice(b"data: ");
        [head.into(), message.into(), tail.into()]
    }
}

/// One event of the proxy's own: `message` (so every client reads it as one) carrying
/// `message`.
pub(crate) fn message_event(message: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(message.len() + 24);
    out.extend_from_slice(b"event: message\n");
    for (start, end, _) in lines(message) {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(&message[start..end]);
        out.push(b'\n');
    }
    out.push(b'\n');
    out
}

#[cfg(test)]
mod tests;
