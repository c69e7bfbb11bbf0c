//! The one incremental JSONL reader, generic over the kind of line it reads.
//!
//! `conversation.jsonl` and `trace.jsonl` differ only in what a line means. Splitting bytes
//! into lines, the line limit, line numbers, a byte-order mark, blank lines and lines that
//! fail are the same for both, and are written once, here.

use std::fmt;
use std::marker::PhantomData;

use crate::report::{DEFAULT_MAX_LINE_BYTES, LineError, Located, ReadError, SkippedUnit, Unit};

/// A kind of line a [`JsonlReader`] reads: [`ParsedMessage`](crate::ParsedMessage), a
/// `conversation.jsonl` line, or [`ParsedEvent`](crate::ParsedEvent), a `trace.jsonl` line.
///
/// Sealed: only this crate implements it.
pub trait JsonlLine: sealed::Sealed {}

impl<T: sealed::Sealed> JsonlLine for T {}

pub(crate) mod sealed {
    use super::Outcome;

    /// How one non-blank line of text is read.
    pub trait Sealed: Sized {
        /// Reads the line: an item, a line passed over, or a line that failed.
        fn read_line(line: &str) -> Outcome<Self>;
    }
}

/// What a line reader made of one line.
#[derive(Debug)]
pub enum Outcome<T> {
    /// The line, read.
    Item(T),
    /// Passed over: with the first live marker in it, when it has one.
    Skip(Option<SkippedUnit>),
    /// The line could not be read.
    Fail(ReadError),
}

/// An incremental reader of a JSONL surface: feed it bytes in chunks of any size, and it hands
/// over each line as a [`Unit`] the moment the line is complete.
///
/// Use it as [`RecordReader`](crate::RecordReader) or [`TraceReader`](crate::TraceReader).
/// - Its memory is bounded by the longest line, at most
///   [`with_max_line_bytes`](Self::with_max_line_bytes), not by the surface.
/// - Lines end with `\n`; a `\r` before it is dropped.
/// - A leading byte-order mark is dropped.
/// - A blank line is skipped; a line that is not UTF-8 fails.
/// - Every other line is read by the line kind's rules ([`read_record`](crate::read_record),
///   [`read_trace`](crate::read_trace)).
///
/// ```
/// use fence_surfaces::{JsonlReader, ParsedEvent, Unit};
///
/// let mut reader = JsonlReader::<ParsedEvent>::new();
/// let mut units = Vec::new();
/// reader.push(b"\xEF\xBB\xBF{\"event_type\":\"turn_end\"}\r\n\nnot json\n", |unit| units.push(unit));
/// reader.finish(|unit| units.push(unit));
/// assert!(matches!(units[..], [Unit::Skipped, Unit::Skipped, Unit::Failed(ref error)] if error.line == 3));
/// ```
pub struct JsonlReader<T> {
    lines: Lines,
    kind: PhantomData<fn() -> T>,
}

impl<T> Clone for JsonlReader<T> {
    fn clone(&self) -> Self {
        JsonlReader {
            lines: self.lines.clone(),
            kind: PhantomData,
        }
    }
}

impl<T> fmt::Debug for JsonlReader<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JsonlReader")
            .field("lines", &self.lines)
            .finish()
    }
}

impl<T> Default for JsonlReader<T> {
    fn default() -> Self {
        JsonlReader {
            lines: Lines::default(),
            kind: PhantomData,
        }
    }
}

impl<T: JsonlLine> JsonlReader<T> {
    /// A reader at the start of a surface.
    ///
    /// ```
    /// let mut count = 0;
    /// fence_surfaces::RecordReader::new().finish(|_| count += 1);
    /// fence_surfaces::TraceReader::new().finish(|_| count += 1);
    /// assert_eq!(count, 0);
    /// ```
    #[must_use]
    pub fn new() -> JsonlReader<T> {
        JsonlReader::default()
    }

    /// Sets the longest line the reader holds
    /// ([`DEFAULT_MAX_LINE_BYTES`](crate::DEFAULT_MAX_LINE_BYTES) unless set).
    ///
    /// A longer line is counted as it goes past, never held. It becomes a unit that failed with
    /// [`ReadError::TooLong`]. A line exactly at the limit is read.
    ///
    /// ```
    /// use fence_surfaces::{ReadError, TraceReader, Unit};
    ///
    /// let line = b"{\"event_type\":\"tool_call\",\"tool_name\":\"bash\",\"output_bytes\":0,\"status\":\"ok\"}\n";
    /// let at_the_limit = line.len() - 1;
    /// let mut units = Vec::new();
    /// let mut reader = TraceReader::new().with_max_line_bytes(at_the_limit);
    /// reader.push(line, |unit| units.push(unit));
    /// let mut reader = TraceReader::new().with_max_line_bytes(at_the_limit - 1);
    /// reader.push(line, |unit| units.push(unit));
    /// reader.push(b"\n", |unit| units.push(unit));
    /// assert!(matches!(units[0], Unit::Item(_)));
    /// assert!(matches!(
    ///     &units[1],
    ///     Unit::Failed(error) if error.line == 1
    ///         && error.error == ReadError::TooLong { bytes: at_the_limit as u64, limit: at_the_limit - 1 }
    /// ));
    /// assert!(matches!(units[2], Unit::Skipped)); // the next line is read as ever
    /// ```
    ///
    /// A record line is counted the same way:
    ///
    /// ```
    /// use fence_surfaces::{ReadError, RecordReader, Unit};
    ///
    /// let mut reader = RecordReader::new().with_max_line_bytes(16);
    /// let mut units = Vec::new();
    /// reader.push(b"{\"role\":\"user\",\"content\":[]}\n\n", |unit| units.push(unit));
    /// assert!(matches!(
    ///     &units[0],
    ///     Unit::Failed(error) if error.line == 1
    ///         && error.error == ReadError::TooLong { bytes: 28, limit: 16 }
    /// ));
    /// assert!(matches!(units[1], Unit::Skipped));
    /// ```
    #[must_use]
    pub fn with_max_line_bytes(self, limit: usize) -> JsonlReader<T> {
        JsonlReader {
            lines: Lines::with_limit(limit),
            kind: PhantomData,
        }
    }

    /// Reads the next chunk, handing every line it completes to `on_unit`, in order.
    ///
    /// ```
    /// use fence_surfaces::{RecordReader, TraceReader, Unit};
    ///
    /// let mut lines = Vec::new();
    /// let mut reader = RecordReader::new();
    /// reader.push(b"{\"type\":\"murmur.record\"}\n{\"role\":\"tool\",\"content\":[]}\n", |unit| lines.push(unit.line()));
    /// assert_eq!(lines, [None, Some(2)]); // the header is skipped
    ///
    /// let mut skipped = 0;
    /// let mut reader = TraceReader::new();
    /// reader.push(b"{\"event_type\":\"turn_start\"}\n\n", |unit| skipped += usize::from(matches!(unit, Unit::Skipped)));
    /// assert_eq!(skipped, 2);
    /// ```
    pub fn push(&mut self, chunk: &[u8], mut on_unit: impl FnMut(Unit<T>)) {
        let limit = self.lines.limit();
        self.lines.push(chunk, |number, line| {
            on_unit(jsonl_unit(number, line, limit, T::read_line));
        });
    }

    /// Ends the surface: hands a last line that has no `\n` after it to `on_unit`.
    ///
    /// ```
    /// use fence_surfaces::{RecordReader, TraceReader, Unit};
    ///
    /// let mut reader = RecordReader::new();
    /// reader.push(b"{\"role\":\"user\",\"content\":[]", |_| unreachable!());
    /// let mut last = None;
    /// reader.finish(|unit| last = Some(unit));
    /// assert!(matches!(last, Some(Unit::Failed(error)) if error.line == 1)); // cut short
    ///
    /// let mut reader = TraceReader::new();
    /// reader.push(b"{\"event_type\":\"turn_end\"}", |_| unreachable!());
    /// let mut units = Vec::new();
    /// reader.finish(|unit| units.push(unit));
    /// assert!(matches!(units[..], [Unit::Skipped]));
    /// ```
    pub fn finish(self, mut on_unit: impl FnMut(Unit<T>)) {
        let limit = self.lines.limit();
        self.lines
            .finish(|number, line| on_unit(jsonl_unit(number, line, limit, T::read_line)));
    }
}

/// Splits a stream of bytes into lines ended by `\n`, however it arrives: a line that spans
/// chunks is gathered, every other line is handed over from the chunk itself. Memory is
/// bounded by the longest line, and by `limit`: a longer line is only counted, and handed over
/// as `Err(its length)`.
#[derive(Clone, Debug)]
struct Lines {
    /// The start of a line whose end has not arrived.
    partial: Vec<u8>,
    /// Lines handed over so far.
    number: usize,
    /// The longest line held.
    limit: usize,
    /// The length so far of a line over `limit`, which is not held.
    overlong: Option<u64>,
}

impl Default for Lines {
    fn default() -> Self {
        Lines::with_limit(DEFAULT_MAX_LINE_BYTES)
    }
}

/// A line as [`Lines`] hands it over: its bytes, or the length of one over the limit.
type Piece<'a> = Result<&'a [u8], u64>;

impl Lines {
    fn with_limit(limit: usize) -> Lines {
        Lines {
            partial: Vec::new(),
            number: 0,
            limit,
            overlong: None,
        }
    }

    fn limit(&self) -> usize {
        self.limit
    }

    /// Hands every line that `chunk` completes to `line`, with its 1-based number.
    fn push(&mut self, mut chunk: &[u8], mut line: impl FnMut(usize, Piece<'_>)) {
        while let Some(end) = memchr::memchr(b'\n', chunk) {
            self.number += 1;
            let length = self.partial.len() + end;
            if let Some(seen) = self.overlong.take() {
                line(self.number, Err(seen + end as u64));
            } else if length > self.limit {
                line(self.number, Err(length as u64));
                self.partial = Vec::new();
            } else if self.partial.is_empty() {
                line(self.number, Ok(strip_bom(self.number, &chunk[..end])));
            } else {
                self.partial.extend_from_slice(&chunk[..end]);
                line(self.number, Ok(strip_bom(self.number, &self.partial)));
                self.partial.clear();
            }
            chunk = &chunk[end + 1..];
        }
        if let Some(seen) = &mut self.overlong {
            *seen += chunk.len() as u64;
        } else if self.partial.len() + chunk.len() > self.limit {
            self.overlong = Some((self.partial.len() + chunk.len()) as u64);
            // Let the memory go: the line is only counted from here on.
            self.partial = Vec::new();
        } else {
            self.partial.extend_from_slice(chunk);
        }
    }

    /// Hands over a last line with no `\n` after it, unless there is none: an input that ends
    /// with `\n` (or is empty, or is only a byte-order mark) has no line after it.
    fn finish(mut self, mut line: impl FnMut(usize, Piece<'_>)) {
        let number = self.number + 1;
        if let Some(seen) = self.overlong {
            line(number, Err(seen));
            return;
        }
        let tail = strip_bom(number, &self.partial);
        if !tail.is_empty() {
            line(number, Ok(tail));
        }
        self.partial.clear();
    }
}

/// Line 1 without a leading byte-order mark.
fn strip_bom(number: usize, line: &[u8]) -> &[u8] {
    if number == 1 {
        line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
    } else {
        line
    }
}

/// Reads one JSONL line (a `\r` before its `\n` is dropped): a blank line is skipped, a line
/// that is not UTF-8 fails, and every other line is handed, as text, to `read_line`.
fn jsonl_unit<T>(
    number: usize,
    line: Piece<'_>,
    limit: usize,
    read_line: impl FnOnce(&str) -> Outcome<T>,
) -> Unit<T> {
    let failed = |error| {
        Unit::Failed(LineError {
            line: number,
            frame_id: None,
            error,
        })
    };
    let line = match line {
        Ok(line) => line.strip_suffix(b"\r").unwrap_or(line),
        Err(bytes) => return failed(ReadError::TooLong { bytes, limit }),
    };
    if line.iter().all(u8::is_ascii_whitespace) {
        return Unit::Skipped;
    }
    match std::str::from_utf8(line) {
        Ok(text) => match read_line(text) {
            Outcome::Item(value) => Unit::Item(Located {
                line: number,
                value,
            }),
            Outcome::Skip(None) => Unit::Skipped,
            Outcome::Skip(Some(skipped)) => Unit::SkippedWithMarker(Located {
                line: number,
                value: skipped,
            }),
            Outcome::Fail(error) => failed(error),
        },
        Err(error) => failed(ReadError::NotUtf8 {
            valid_up_to: error.valid_up_to(),
        }),
    }
}
