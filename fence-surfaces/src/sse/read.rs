//! Reading an A2A SSE stream, event by event, by the HTML Server-Sent Events rules.

use crate::artifact::{ParsedFrame, read_frame_bytes};
use crate::report::{
    DEFAULT_MAX_LINE_BYTES, LineError, Located, ReadError, Report, SkippedUnit, Unit,
};
use crate::strict_json::parse_value;

/// An artifact frame read from an SSE stream, with the `id:` its event carried.
///
/// ```
/// let report = fence_surfaces::read_sse(
///     b"event: artifact\nid: 4\ndata: {\"artifact\":{\"content\":\"x\"}}\n\n",
/// );
/// assert_eq!(report.items[0].value.id.as_deref(), Some("4"));
/// assert_eq!(report.items[0].line, 3);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct StreamFrame {
    /// The `id:` field of the frame's own event, if it had one. Unlike a browser's
    /// `lastEventId`, an event without an `id:` line does not inherit the previous one, so a
    /// finding never points at the wrong frame.
    pub id: Option<String>,
    /// The frame.
    pub frame: ParsedFrame,
}

/// What [`read_sse`] made of a stream. The unit of the counts is an event.
pub type StreamReport = Report<StreamFrame>;

/// An incremental reader of an A2A SSE stream: feed it bytes as they arrive, in chunks of any
/// size, and it hands over each event as a [`Unit`] the moment the event is complete.
///
/// It follows the HTML Server-Sent Events rules as far as this stream needs them: lines end
/// with CRLF, LF or CR; a leading byte-order mark is dropped; a line starting with `:` is a
/// comment (the runtime's `:heartbeat`) and is ignored; `field: value` with one optional space
/// after the colon stripped; `data:` lines are joined with `\n`; a blank line dispatches the
/// event; an event with no `data:` line dispatches nothing; an event's type defaults to
/// `message`. Events of any type but `artifact` are skipped and counted.
///
/// Two choices go beyond the HTML rules, so that nothing is lost: an event still open at the end
/// of the input is dispatched rather than dropped, and an event holding a field line that is not
/// UTF-8 fails with [`ReadError::NotUtf8`] rather than being decoded with replacement
/// characters.
///
/// Its memory is bounded by the largest event, not the stream: collect the units in a
/// [`StreamReport`] (as [`read_sse`] does) only when the stream fits in memory.
///
/// ```
/// use fence_surfaces::{SseReader, StreamReport};
///
/// let mut report = StreamReport::default();
/// let mut reader = SseReader::new();
/// reader.push(b":heartbeat\n\nevent: artifact\r\nid: 1\r\ndata: {\"artifact\":", |unit| report.add(unit));
/// reader.push(b"{\"content\":\"hi\"}}\r\n\r\nevent: status\ndata: {}\n\n", |unit| report.add(unit));
/// reader.finish(|unit| report.add(unit));
/// assert_eq!(report.items.len(), 1);
/// assert_eq!(report.items[0].value.frame.artifact.content, "hi");
/// assert_eq!((report.counts.read, report.counts.skipped), (2, 1));
/// ```
#[derive(Clone, Debug)]
pub struct SseReader {
    line: Vec<u8>,
    line_number: usize,
    after_cr: bool,
    event: PendingEvent,
    /// The longest line, and the most data of one event, held.
    limit: usize,
    /// The length so far of a line over `limit`, which is not held beyond the first bytes
    /// that name its field.
    overlong: Option<u64>,
}

impl Default for SseReader {
    fn default() -> Self {
        SseReader {
            line: Vec::new(),
            line_number: 0,
            after_cr: false,
            event: PendingEvent::default(),
            limit: DEFAULT_MAX_LINE_BYTES,
            overlong: None,
        }
    }
}

#[derive(Clone, Debug, Default)]
struct PendingEvent {
    kind: Option<String>,
    id: Option<String>,
    data: Vec<u8>,
    has_data: bool,
    first_data_line: usize,
    not_utf8: Option<(usize, usize)>,
    /// How many bytes of data (or of a line) went past the limit, not held.
    too_long: Option<u64>,
    /// The length of an `event` or `id` line (or another field's) over the limit: the event
    /// it belongs to cannot be read, if it has data.
    field_too_long: Option<u64>,
}

impl PendingEvent {
    /// `bytes` more than the reader holds belong to this event: it fails, at its first data
    /// line or at this one.
    fn overflow(&mut self, number: usize, bytes: u64) {
        if !self.has_data {
            self.has_data = true;
            self.first_data_line = number;
        }
        self.data = Vec::new();
        *self.too_long.get_or_insert(0) += bytes;
    }
}

impl SseReader {
    /// A reader at the start of a stream.
    ///
    /// ```
    /// let mut count = 0;
    /// fence_surfaces::SseReader::new().finish(|_| count += 1);
    /// assert_eq!(count, 0);
    /// ```
    #[must_use]
    pub fn new() -> SseReader {
        SseReader::default()
    }

    /// Sets the longest line, and the most data of one event, the reader holds
    /// ([`DEFAULT_MAX_LINE_BYTES`] unless set): an event with more is counted as it goes past,
    /// never held, and becomes a unit that failed with [`ReadError::TooLong`]. A comment line
    /// over the limit is skipped as any comment is.
    ///
    /// ```
    /// use fence_surfaces::{ReadError, SseReader, Unit};
    ///
    /// let mut reader = SseReader::new().with_max_line_bytes(16);
    /// let mut units = Vec::new();
    /// reader.push(b"event: artifact\ndata: {\"artifact\":\ndata: {\"content\":\"x\"}}\n\n", |unit| units.push(unit));
    /// assert!(matches!(
    ///     &units[0],
    ///     Unit::Failed(error) if error.line == 2 && matches!(error.error, ReadError::TooLong { limit: 16, .. })
    /// ));
    /// ```
    #[must_use]
    pub fn with_max_line_bytes(self, limit: usize) -> SseReader {
        SseReader { limit, ..self }
    }

    /// Adds `part` to the line being gathered, unless that makes it longer than the limit:
    /// from then on the line is only counted, and only its first bytes, which name its field,
    /// are kept.
    fn gather(&mut self, part: &[u8]) {
        /// Enough to tell `data:` from a comment and from any other field, after a
        /// byte-order mark.
        const HEAD: usize = b"\xEF\xBB\xBFdata:".len();
        if let Some(seen) = &mut self.overlong {
            *seen += part.len() as u64;
        } else if self.line.len() + part.len() > self.limit {
            self.overlong = Some((self.line.len() + part.len()) as u64);
            self.line.truncate(HEAD);
            self.line.shrink_to(HEAD);
        } else {
            self.line.extend_from_slice(part);
            return;
        }
        let room = HEAD.saturating_sub(self.line.len());
        self.line.extend_from_slice(&part[..room.min(part.len())]);
    }

    /// Reads the next chunk of the stream, handing every event it completes to `on_unit`, in
    /// order.
    ///
    /// ```
    /// use fence_surfaces::{SseReader, Unit};
    ///
    /// let mut frames = 0;
    /// let mut reader = SseReader::new();
    /// for byte in b"event: artifact\ndata: {\"artifact\":{\"content\":\"x\"}}\n\n" {
    ///     reader.push(&[*byte], |unit| frames += usize::from(matches!(unit, Unit::Item(_))));
    /// }
    /// assert_eq!(frames, 1);
    /// ```
    pub fn push(&mut self, mut chunk: &[u8], mut on_unit: impl FnMut(Unit<StreamFrame>)) {
        if self.after_cr && !chunk.is_empty() {
            // The `\n` of a CRLF split across chunks.
            self.after_cr = false;
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
        }
        while let Some(end) = memchr::memchr2(b'\n', b'\r', chunk) {
            self.gather(&chunk[..end]);
            if let Some(unit) = self.end_line() {
                on_unit(unit);
            }
            let mut next = end + 1;
            if chunk[end] == b'\r' {
                match chunk.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            chunk = &chunk[next..];
        }
        self.gather(chunk);
    }

    /// Ends the stream: reads a last line with no line ending, and hands an event still open to
    /// `on_unit`.
    ///
    /// ```
    /// use fence_surfaces::{SseReader, Unit};
    ///
    /// let mut reader = SseReader::new();
    /// reader.push(b"event: artifact\ndata: {\"artifact\":{\"content\":\"cut off\"}}", |_| unreachable!());
    /// let mut units = Vec::new();
    /// reader.finish(|unit| units.push(unit));
    /// assert!(matches!(&units[..], [Unit::Item(frame)] if frame.value.frame.artifact.content == "cut off"));
    /// ```
    pub fn finish(mut self, mut on_unit: impl FnMut(Unit<StreamFrame>)) {
        if !self.line.is_empty() || self.overlong.is_some() {
            if let Some(unit) = self.end_line() {
                on_unit(unit);
            }
        }
        if let Some(unit) = self.dispatch() {
            on_unit(unit);
        }
    }

    /// Reads the line gathered so far; a blank line dispatches the event it ends.
    fn end_line(&mut self) -> Option<Unit<StreamFrame>> {
        self.line_number += 1;
        if let Some(bytes) = self.overlong.take() {
            let head = std::mem::take(&mut self.line);
            let head = match self.line_number {
                1 => head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&head),
                _ => &head[..],
            };
            if head.starts_with(b"data:") || head == b"data" {
                self.event.overflow(self.line_number, bytes);
            } else if !head.starts_with(b":") {
                self.event.field_too_long = Some(bytes);
            }
            return None;
        }
        let mut line = std::mem::take(&mut self.line);
        let mut text: &[u8] = &line;
        if self.line_number == 1 {
            text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
        }
        let mut unit = None;
        if text.is_empty() {
            unit = self.dispatch();
        } else if text[0] != b':' {
            self.field(text);
        }
        line.clear();
        self.line = line;
        unit
    }

    fn field(&mut self, text: &[u8]) {
        let (name, value) = match memchr::memchr(b':', text) {
            Some(colon) => {
                let value = &text[colon + 1..];
                (&text[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (text, &b""[..]),
        };
        let number = self.line_number;
        let event = &mut self.event;
        if let Err(error) = std::str::from_utf8(text) {
            event.not_utf8.get_or_insert((number, error.valid_up_to()));
        }
        match name {
            b"event" => event.kind = Some(String::from_utf8_lossy(value).into_owned()),
            b"data" => {
                if !event.has_data {
                    event.has_data = true;
                    event.first_data_line = number;
                }
                if event.too_long.is_some() || event.data.len() + value.len() > self.limit {
                    event.overflow(number, (event.data.len() + value.len()) as u64);
                } else {
                    event.data.extend_from_slice(value);
                    event.data.push(b'\n');
                }
            }
            b"id" if !value.contains(&0) => {
                event.id = Some(String::from_utf8_lossy(value).into_owned());
            }
            _ => {}
        }
    }

    fn dispatch(&mut self) -> Option<Unit<StreamFrame>> {
        let mut event = std::mem::take(&mut self.event);
        if !event.has_data {
            return None;
        }
        event.data.pop();
        let failed = |line, frame_id, error| {
            Unit::Failed(LineError {
                line,
                frame_id,
                error,
            })
        };
        Some(
            if let Some(bytes) = event.too_long.or(event.field_too_long) {
                let limit = self.limit;
                failed(
                    event.first_data_line,
                    event.id,
                    ReadError::TooLong { bytes, limit },
                )
            } else if let Some((line, valid_up_to)) = event.not_utf8 {
                failed(line, event.id, ReadError::NotUtf8 { valid_up_to })
            } else if event.kind.as_deref().unwrap_or("message") != "artifact" {
                skipped_event(event)
            } else {
                match read_frame_bytes(&event.data) {
                    Ok(frame) => Unit::Item(Located {
                        line: event.first_data_line,
                        value: StreamFrame {
                            id: event.id,
                            frame,
                        },
                    }),
                    Err(error) => failed(event.first_data_line, event.id, error),
                }
            },
        )
    }
}

/// An event of a type other than `artifact`, passed over: reported when its data (every string
/// in it, when it is JSON; else its text) or its type holds a live marker.
fn skipped_event(event: PendingEvent) -> Unit<StreamFrame> {
    let kind = event.kind.as_deref().unwrap_or("message");
    let unit = || format!("an SSE event of type `{kind}`");
    // Every field line was UTF-8, or the event failed: the data is text.
    let data = String::from_utf8_lossy(&event.data);
    let found = match parse_value(&data) {
        Ok(value) => SkippedUnit::in_value(unit, &value),
        Err(_) => SkippedUnit::in_text(unit, &data),
    }
    .or_else(|| {
        SkippedUnit::in_text(unit, kind).map(|mut skipped| {
            skipped.path = "(the event type)".into();
            skipped
        })
    });
    match found {
        Some(mut skipped) => {
            skipped.frame_id = event.id;
            Unit::SkippedWithMarker(Located {
                line: event.first_data_line,
                value: skipped,
            })
        }
        None => Unit::Skipped,
    }
}

/// Reads a whole SSE stream (a capture, or a response body read to its end): an [`SseReader`]
/// handed all of `bytes` at once.
///
/// See [`SseReader`] for the rules.
///
/// ```
/// use fence_surfaces::read_sse;
///
/// let report = read_sse(b"event: artifact\nid: 1\ndata: {\"id\":\"t\",\ndata: \"artifact\":{\"content\":\"x\"}}\n\n:heartbeat\n\n");
/// assert_eq!(report.items[0].value.frame.id.as_deref(), Some("t"));
/// assert_eq!(report.counts.read, 1);
/// ```
#[must_use]
pub fn read_sse(bytes: &[u8]) -> StreamReport {
    let mut report = StreamReport::default();
    // The input is in memory already: no event is too long to hold.
    let mut reader = SseReader::new().with_max_line_bytes(usize::MAX);
    reader.push(bytes, |unit| report.add(unit));
    reader.finish(|unit| report.add(unit));
    report
}
