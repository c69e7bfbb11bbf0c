//! What every reader reports: labels as read, line numbers, counts and per-line errors.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cell::Cell;
use core::fmt::{self, Write as _};

use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Number, Value};

use super::finding::MarkerKind;
use crate::marker::{self, Marker};

/// A fence label as read from the wire: an artifact frame's `fence_source` or a record line's
/// `fence`.
///
/// The three states are kept apart because they mean different things: `Null` says "this
/// content is unfenced", `Absent` says "whoever wrote this did not label it" (an older runtime,
/// or an unfenced record line).
///
/// ```
/// use fence_runtime::surfaces::{read_frame, Label};
///
/// let frame = read_frame(r#"{"id":"t","artifact":{"content":"hi","fence_source":null}}"#)?;
/// assert_eq!(frame.artifact.fence_source, Label::Null);
/// let old = read_frame(r#"{"id":"t","artifact":{"content":"hi"}}"#)?;
/// assert_eq!(old.artifact.fence_source, Label::Absent);
/// # Ok::<(), fence_runtime::surfaces::ReadError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Label {
    /// The key is not there.
    #[default]
    Absent,
    /// The key is there, and `null`.
    Null,
    /// The key names a source.
    Source(String),
}

impl Label {
    /// The source name, when the label names one.
    ///
    /// ```
    /// use fence_runtime::surfaces::Label;
    ///
    /// assert_eq!(Label::Source("tool:bash".into()).source(), Some("tool:bash"));
    /// assert_eq!(Label::Null.source(), None);
    /// ```
    #[must_use]
    pub fn source(&self) -> Option<&str> {
        match self {
            Label::Source(source) => Some(source),
            Label::Absent | Label::Null => None,
        }
    }

    /// Whether the key is there at all, `null` or not.
    ///
    /// ```
    /// use fence_runtime::surfaces::Label;
    ///
    /// assert!(Label::Null.is_present());
    /// assert!(!Label::Absent.is_present());
    /// ```
    #[must_use]
    pub fn is_present(&self) -> bool {
        !matches!(self, Label::Absent)
    }
}

impl<'de> Deserialize<'de> for Label {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Option::<String>::deserialize(deserializer)?.map_or(Label::Null, Label::Source))
    }
}

/// A key that a frame may carry as a value, as `null`, or not at all.
///
/// An artifact frame's `tool_call_id` and `duration_ms` are `null` on a hook artifact; a frame
/// from an older runtime may not carry them at all, which says nothing about hooks.
///
/// ```
/// use fence_runtime::surfaces::{read_frame, Nullable};
///
/// let frame = read_frame(r#"{"id":"t","artifact":{"content":"","tool_call_id":null}}"#)?;
/// assert_eq!(frame.artifact.tool_call_id, Nullable::Null);
/// assert_eq!(frame.artifact.duration_ms, Nullable::Absent);
/// # Ok::<(), fence_runtime::surfaces::ReadError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Nullable<T> {
    /// The key is not there.
    #[default]
    Absent,
    /// The key is there, and `null`.
    Null,
    /// The key holds a value.
    Value(T),
}

impl<T> Nullable<T> {
    /// The value, when there is one.
    ///
    /// ```
    /// use fence_runtime::surfaces::Nullable;
    ///
    /// assert_eq!(Nullable::Value(12).value(), Some(&12));
    /// assert_eq!(Nullable::<u64>::Null.value(), None);
    /// ```
    pub fn value(&self) -> Option<&T> {
        match self {
            Nullable::Value(value) => Some(value),
            Nullable::Absent | Nullable::Null => None,
        }
    }

    /// Whether the key is there and `null`.
    ///
    /// ```
    /// use fence_runtime::surfaces::Nullable;
    ///
    /// assert!(Nullable::<u64>::Null.is_null());
    /// assert!(!Nullable::<u64>::Absent.is_null());
    /// ```
    pub fn is_null(&self) -> bool {
        matches!(self, Nullable::Null)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Nullable<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Option::<T>::deserialize(deserializer)?.map_or(Nullable::Null, Nullable::Value))
    }
}

/// Why one line (or one SSE event) could not be read.
///
/// ```
/// use fence_runtime::surfaces::{read_frame, ReadError};
///
/// assert!(matches!(read_frame("{"), Err(ReadError::Json { .. })));
/// assert!(matches!(read_frame(r#"{"artifact":{}}"#), Err(ReadError::Shape(_))));
/// assert_eq!(
///     read_frame(r#"{"artifact":{"content":"a","content":"b"}}"#),
///     Err(ReadError::DuplicateKey { key: "content".into(), column: 36 }),
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReadError {
    /// The bytes are not UTF-8; the first `valid_up_to` bytes of the line are.
    NotUtf8 {
        /// How many bytes of the line are valid UTF-8.
        valid_up_to: usize,
    },
    /// The text is not one JSON value.
    Json {
        /// What the JSON parser said.
        message: String,
        /// The 1-based column where it gave up.
        column: usize,
    },
    /// An object names the same key twice. JSON parsers disagree on which value wins (the
    /// first, the last, or an error), so the unit means different things to different
    /// readers, and no reader of this module picks one.
    DuplicateKey {
        /// The key.
        key: String,
        /// The 1-based column, in the unit's JSON text (for an SSE event, its `data`), where
        /// the second one ends.
        column: usize,
    },
    /// The JSON is not the surface's shape: a required key is missing, or a known key has the
    /// wrong type.
    Shape(String),
    /// The line (for an SSE event, the event) is longer than the reader's limit
    /// ([`DEFAULT_MAX_LINE_BYTES`] unless set with `with_max_line_bytes`); it was counted as it
    /// went past, never held, so it could not be read.
    TooLong {
        /// How long it was, in bytes (without its line ending).
        bytes: u64,
        /// The reader's limit.
        limit: usize,
    },
}

impl ReadError {
    pub(crate) fn from_json(error: &serde_json::Error) -> ReadError {
        match error.classify() {
            serde_json::error::Category::Data => ReadError::Shape(error.to_string()),
            serde_json::error::Category::Io
            | serde_json::error::Category::Syntax
            | serde_json::error::Category::Eof => ReadError::Json {
                message: error.to_string(),
                column: error.column(),
            },
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::NotUtf8 { valid_up_to } => {
                write!(f, "not UTF-8 after byte {valid_up_to}")
            }
            ReadError::Json { message, .. } => write!(f, "not JSON: {message}"),
            ReadError::DuplicateKey { key, column } => write!(
                f,
                "duplicate key `{key}` at column {column}: readers disagree on which value wins; write each key once"
            ),
            ReadError::Shape(message) => write!(f, "unexpected shape: {message}"),
            ReadError::TooLong { bytes, limit } => write!(
                f,
                "{bytes} bytes, over the reader's limit of {limit} bytes: not read; raise the limit to read it"
            ),
        }
    }
}

impl core::error::Error for ReadError {}

/// A [`ReadError`] and the 1-based line it happened on.
///
/// ```
/// use fence_runtime::surfaces::read_record;
///
/// let report = read_record(b"{\"role\":\"user\",\"content\":[]}\n{oops\n");
/// assert_eq!(report.errors[0].line, 2);
/// assert_eq!(report.errors[0].frame_id, None);
/// assert!(report.errors[0].to_string().starts_with("line 2: not JSON"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct LineError {
    /// The 1-based line number. For an SSE event, the line of its first `data:` field.
    pub line: usize,
    /// For an SSE event, the `id:` it carried; `None` on a JSONL line.
    pub frame_id: Option<String>,
    /// What went wrong.
    pub error: ReadError,
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.error)
    }
}

impl core::error::Error for LineError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// A value read from a surface and the 1-based line it starts on.
///
/// ```
/// use fence_runtime::surfaces::read_record;
///
/// let report = read_record(b"\n{\"role\":\"user\",\"content\":[]}\n");
/// assert_eq!(report.items[0].line, 2);
/// assert_eq!(report.items[0].value.role, "user");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Located<T> {
    /// The 1-based line number. For an SSE event, the line of its first `data:` field.
    pub line: usize,
    /// What was read there.
    pub value: T,
}

/// How many units a reader read, skipped and failed to read.
///
/// The unit is a line for `conversation.jsonl` and `trace.jsonl` and an event (a block ended by
/// a blank line) for an SSE stream. Every unit read is exactly one of: an item, skipped, or
/// failed, so `read == ok() + skipped + failed` always holds.
///
/// ```
/// use fence_runtime::surfaces::read_record;
///
/// let report = read_record(b"{\"type\":\"murmur.record\"}\n{\"role\":\"user\",\"content\":[]}\n[\n");
/// assert_eq!((report.counts.read, report.counts.skipped, report.counts.failed), (3, 1, 1));
/// assert_eq!(report.counts.ok(), 1);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Counts {
    /// Units read, whatever became of them.
    pub read: usize,
    /// Units passed over on purpose: blank lines, a record's header, lines with no string
    /// `role` that are no item of the Responses API, trace events other than `tool_call` and
    /// `skill_call`, SSE events of other types. Those whose text holds a live marker are among
    /// them (see [`Report::skipped_with_markers`]).
    pub skipped: usize,
    /// Units that could not be read; each has a [`LineError`].
    pub failed: usize,
}

impl Counts {
    /// Units read into an item: `read - skipped - failed`.
    ///
    /// ```
    /// assert_eq!(fence_runtime::surfaces::Counts::default().ok(), 0);
    /// ```
    #[must_use]
    pub fn ok(&self) -> usize {
        // The fields are public: saturate rather than panic if a caller edited them.
        self.read
            .saturating_sub(self.skipped)
            .saturating_sub(self.failed)
    }
}

/// What a reader made of a whole surface: the items, in order, with their line numbers; the
/// counts; and one error per failed unit, in order.
///
/// `items.len() == counts.ok()` and `errors.len() == counts.failed` always hold. Reading never
/// stops at a bad line.
///
/// ```
/// use fence_runtime::surfaces::read_trace;
///
/// let report = read_trace(b"not json\n{\"event_type\":\"turn_start\"}\n");
/// assert!(report.items.is_empty());
/// assert_eq!(report.counts.failed, 1);
/// assert_eq!(report.counts.skipped, 1);
/// assert_eq!(report.errors[0].line, 1);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Report<T> {
    /// What was read, in order.
    pub items: Vec<Located<T>>,
    /// How many units were read, skipped and failed.
    pub counts: Counts,
    /// One error per failed unit, in order.
    pub errors: Vec<LineError>,
    /// The units passed over whose text holds a live marker, in order (each is counted in
    /// [`Counts::skipped`] too).
    pub skipped_with_markers: Vec<Located<SkippedUnit>>,
}

impl<T> Default for Report<T> {
    fn default() -> Self {
        Report {
            items: Vec::new(),
            counts: Counts::default(),
            errors: Vec::new(),
            skipped_with_markers: Vec::new(),
        }
    }
}

impl<T> Report<T> {
    /// Adds one unit an incremental reader handed over: its item, its error, or one more
    /// unit skipped. Collecting every unit of a surface this way gives what the whole-slice
    /// reader ([`read_record`](super::read_record), …) gives.
    ///
    /// ```
    /// use fence_runtime::surfaces::{RecordReader, RecordReport};
    ///
    /// let mut report = RecordReport::default();
    /// let mut reader = RecordReader::new();
    /// reader.push(b"{\"role\":\"user\",\"content\":[]}\n\n{oops", |unit| report.add(unit));
    /// reader.finish(|unit| report.add(unit));
    /// assert_eq!((report.counts.read, report.counts.skipped, report.counts.failed), (3, 1, 1));
    /// assert_eq!(report.errors[0].line, 3);
    /// ```
    pub fn add(&mut self, unit: Unit<T>) {
        self.counts.read += 1;
        match unit {
            Unit::Item(item) => self.items.push(item),
            Unit::Skipped => self.counts.skipped += 1,
            Unit::SkippedWithMarker(skipped) => {
                self.counts.skipped += 1;
                self.skipped_with_markers.push(skipped);
            }
            Unit::Failed(error) => {
                self.counts.failed += 1;
                self.errors.push(error);
            }
        }
    }

    /// Every unit read into an item, every unit that failed and every unit skipped with a live
    /// marker, in line order: what an incremental reader handed over, less the units skipped
    /// without a word.
    pub(crate) fn read_units(&self) -> impl Iterator<Item = UnitRef<'_, T>> {
        let mut items = self.items.iter().peekable();
        let mut errors = self.errors.iter().peekable();
        let mut marked = self.skipped_with_markers.iter().peekable();
        core::iter::from_fn(move || {
            let item = items.peek().map(|item| item.line);
            let error = errors.peek().map(|error| error.line);
            let skipped = marked.peek().map(|skipped| skipped.line);
            let first = [item, error, skipped].into_iter().flatten().min()?;
            if item == Some(first) {
                items.next().map(UnitRef::Item)
            } else if error == Some(first) {
                errors.next().map(UnitRef::Failed)
            } else {
                marked.next().map(UnitRef::SkippedWithMarker)
            }
        })
    }
}

impl<T> Extend<Unit<T>> for Report<T> {
    fn extend<I: IntoIterator<Item = Unit<T>>>(&mut self, units: I) {
        units.into_iter().for_each(|unit| self.add(unit));
    }
}

/// One unit of a surface — an SSE event, a record line, a trace line — as an incremental
/// reader ([`SseReader`](super::SseReader), [`RecordReader`](super::RecordReader),
/// [`TraceReader`](super::TraceReader)) hands it over, the moment it is complete.
///
/// Every unit is exactly one of the three, as in [`Counts`]. Handing units over one at a
/// time, rather than collecting a [`Report`], keeps a reader's memory bounded by the largest
/// unit, whatever the size of the surface.
///
/// ```
/// use fence_runtime::surfaces::{TraceReader, Unit};
///
/// let mut units = Vec::new();
/// let mut reader = TraceReader::new();
/// reader.push(b"{\"event_type\":\"turn_end\"}\nnot json\n", |unit| units.push(unit));
/// reader.finish(|unit| units.push(unit));
/// assert!(matches!(units[0], Unit::Skipped));
/// assert!(matches!(&units[1], Unit::Failed(error) if error.line == 2));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Unit<T> {
    /// A unit read into a value, with the line it starts on.
    Item(Located<T>),
    /// A unit passed over on purpose (see [`Counts::skipped`]) whose text holds no live
    /// marker.
    Skipped,
    /// A unit passed over on purpose whose text holds a live marker, with the line it starts
    /// on: the verifier reports it, as nothing the model may read is passed over unchecked.
    SkippedWithMarker(Located<SkippedUnit>),
    /// A unit that could not be read, with its line.
    Failed(LineError),
}

impl<T> Unit<T> {
    /// The 1-based line of the unit; `None` for a unit skipped.
    ///
    /// ```
    /// use fence_runtime::surfaces::{RecordReader, Unit};
    ///
    /// let mut lines = Vec::new();
    /// let mut reader = RecordReader::new();
    /// reader.push(b"\n{\"role\":\"user\",\"content\":[]}\n", |unit| lines.push(unit.line()));
    /// assert_eq!(lines, [None, Some(2)]);
    /// ```
    #[must_use]
    pub fn line(&self) -> Option<usize> {
        match self {
            Unit::Item(item) => Some(item.line),
            Unit::Failed(error) => Some(error.line),
            Unit::SkippedWithMarker(skipped) => Some(skipped.line),
            Unit::Skipped => None,
        }
    }
}

/// A unit of a [`Report`] that was read, failed, or skipped with a live marker, borrowed.
pub(crate) enum UnitRef<'a, T> {
    Item(&'a Located<T>),
    Failed(&'a LineError),
    SkippedWithMarker(&'a Located<SkippedUnit>),
}

/// A unit a reader passed over on purpose whose text holds a live marker: what it is, and the
/// first marker in it.
///
/// Every string of the unit is searched, keys and values, at any depth (for an SSE event whose
/// `data` is not JSON, the data as text).
///
/// ```
/// use fence_runtime::surfaces::{read_trace, MarkerKind};
///
/// let report = read_trace(br#"{"event_type":"note","detail":{"lines":["ok","see </untrusted-content>"]}}"#);
/// let skipped = &report.skipped_with_markers[0];
/// assert_eq!(skipped.line, 1);
/// assert_eq!(skipped.value.unit, "a trace event of type `note`");
/// assert_eq!(skipped.value.path, "detail.lines[1]");
/// assert_eq!((skipped.value.offset, skipped.value.marker), (4, MarkerKind::Closer));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct SkippedUnit {
    /// What the unit is, and so why it was passed over: "the record header", "an SSE event of
    /// type `status`", ….
    pub unit: String,
    /// For an SSE event, the `id:` it carried; `None` on a JSONL line.
    pub frame_id: Option<String>,
    /// Where the string holding the marker is in the unit: a path such as `detail.lines[1]`
    /// (ending ` (a key)` when the marker is in a key), or empty for the unit's whole text.
    pub path: String,
    /// The byte offset of the marker's `<` in that string.
    pub offset: usize,
    /// Which marker it is.
    pub marker: MarkerKind,
}

impl SkippedUnit {
    /// The unit `unit`, whose JSON `value` was passed over: one with the first live marker in
    /// its strings, or `None` when there is none.
    pub(crate) fn in_value(unit: impl FnOnce() -> String, value: &Value) -> Option<SkippedUnit> {
        let mut path = String::new();
        let (offset, marker) = first_marker(value, &mut path)?;
        Some(SkippedUnit {
            unit: unit(),
            frame_id: None,
            path,
            offset,
            marker,
        })
    }

    /// The unit `unit`, whose text was passed over: one with the first live marker in it.
    pub(crate) fn in_text(unit: impl FnOnce() -> String, text: &str) -> Option<SkippedUnit> {
        let (offset, marker) = marker_in(text)?;
        Some(SkippedUnit {
            unit: unit(),
            frame_id: None,
            path: String::new(),
            offset,
            marker,
        })
    }
}

/// The first live marker in `text`.
fn marker_in(text: &str) -> Option<(usize, MarkerKind)> {
    marker::next_marker(text.as_bytes(), 0).map(|(offset, kind)| {
        (
            offset,
            match kind {
                Marker::Opener => MarkerKind::Opener,
                Marker::Closer => MarkerKind::Closer,
            },
        )
    })
}

/// The first live marker in any string of `value`, keys included, in document order; `path`
/// is left naming where it is. (The reader's depth limit bounds the recursion.)
fn first_marker(value: &Value, path: &mut String) -> Option<(usize, MarkerKind)> {
    match value {
        Value::String(text) => marker_in(text),
        Value::Array(items) => items.iter().enumerate().find_map(|(index, item)| {
            let len = path.len();
            let _ = write!(path, "[{index}]");
            let found = first_marker(item, path);
            if found.is_none() {
                path.truncate(len);
            }
            found
        }),
        Value::Object(object) => object.iter().find_map(|(key, item)| {
            let len = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(key);
            if let Some(found) = marker_in(key) {
                path.push_str(" (a key)");
                return Some(found);
            }
            let found = first_marker(item, path);
            if found.is_none() {
                path.truncate(len);
            }
            found
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => None,
    }
}

/// What a JSONL reader made of one line.
pub(crate) enum Outcome<T> {
    Item(T),
    /// Passed over: with the first live marker in it, when it has one.
    Skip(Option<SkippedUnit>),
    Fail(ReadError),
}

/// The longest line (for an SSE event, the longest event) the incremental readers hold by
/// default: 256 MiB. A longer one is counted as it goes past, never held, and becomes a
/// [`ReadError::TooLong`] unit; the readers' `with_max_line_bytes` changes it. The readers of a
/// whole input already in memory (`read_record`, `read_trace`, `read_sse`) have no limit.
pub const DEFAULT_MAX_LINE_BYTES: usize = 256 << 20;

/// Splits a stream of bytes into lines ended by `\n`, however it arrives: a line that spans
/// chunks is gathered, every other line is handed over from the chunk itself. Memory is
/// bounded by the longest line, and by `limit`: a longer line is only counted, and handed over
/// as `Err(its length)`.
#[derive(Clone, Debug)]
pub(crate) struct JsonlLines {
    /// The start of a line whose end has not arrived.
    partial: Vec<u8>,
    /// Lines handed over so far.
    number: usize,
    /// The longest line held.
    limit: usize,
    /// The length so far of a line over `limit`, which is not held.
    overlong: Option<u64>,
}

impl Default for JsonlLines {
    fn default() -> Self {
        JsonlLines::with_limit(DEFAULT_MAX_LINE_BYTES)
    }
}

/// A line as [`JsonlLines`] hands it over: its bytes, or the length of one over the limit.
pub(crate) type Piece<'a> = Result<&'a [u8], u64>;

impl JsonlLines {
    pub(crate) fn with_limit(limit: usize) -> JsonlLines {
        JsonlLines {
            partial: Vec::new(),
            number: 0,
            limit,
            overlong: None,
        }
    }

    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Hands every line that `chunk` completes to `line`, with its 1-based number.
    pub(crate) fn push(&mut self, mut chunk: &[u8], mut line: impl FnMut(usize, Piece<'_>)) {
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
    pub(crate) fn finish(mut self, mut line: impl FnMut(usize, Piece<'_>)) {
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
pub(crate) fn jsonl_unit<T>(
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
    match core::str::from_utf8(line) {
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

/// Parses one unit as a JSON value, refusing a key written twice in any object
/// ([`ReadError::DuplicateKey`]). Every reader goes through here, so the rule is the same on
/// every surface.
pub(crate) fn parse_value(text: &str) -> Result<Value, ReadError> {
    let duplicate = Cell::new(None);
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = StrictValue {
        duplicate: &duplicate,
    }
    .deserialize(&mut deserializer)
    .and_then(|value| deserializer.end().map(|()| value));
    value.map_err(|error| match duplicate.take() {
        Some(key) => ReadError::DuplicateKey {
            key,
            column: error.column(),
        },
        None => ReadError::from_json(&error),
    })
}

/// Reads any JSON value as the `Value` visitor of `serde_json` does, except that an object naming a
/// key twice is an error; the key is left in `duplicate` so the caller can say which.
#[derive(Clone, Copy)]
struct StrictValue<'a> {
    duplicate: &'a Cell<Option<String>>,
}

impl<'de> DeserializeSeed<'de> for StrictValue<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        // JSON has no NaN or infinity, so the number always exists.
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.into()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                let error = de::Error::custom(format_args!("duplicate key `{key}`"));
                self.duplicate.set(Some(key));
                return Err(error);
            }
            let value = map.next_value_seed(self)?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// Reads a JSON value as `T`, reporting a mismatch as [`ReadError::Shape`].
pub(crate) fn from_value<T: DeserializeOwned>(value: Value) -> Result<T, ReadError> {
    serde_json::from_value(value).map_err(|error| ReadError::Shape(error.to_string()))
}
