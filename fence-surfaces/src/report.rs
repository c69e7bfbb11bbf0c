//! What every reader reports: labels as read, line numbers, counts, and per-line errors.

use std::fmt::{self, Write as _};

use fence_runtime::{MarkerKind, live_markers};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// A fence label as read from the wire: an artifact frame's `fence_source` or a record line's
/// `fence`.
///
/// The three states are kept apart because they mean different things: `Null` says "this
/// content is unfenced", `Absent` says "whoever wrote this did not label it" (an older runtime,
/// or an unfenced record line).
///
/// ```
/// use fence_surfaces::{read_frame, Label};
///
/// let frame = read_frame(r#"{"id":"t","artifact":{"content":"hi","fence_source":null}}"#)?;
/// assert_eq!(frame.artifact.fence_source, Label::Null);
/// let old = read_frame(r#"{"id":"t","artifact":{"content":"hi"}}"#)?;
/// assert_eq!(old.artifact.fence_source, Label::Absent);
/// # Ok::<(), fence_surfaces::ReadError>(())
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
    /// use fence_surfaces::Label;
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
    /// use fence_surfaces::Label;
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
/// use fence_surfaces::{read_frame, Nullable};
///
/// let frame = read_frame(r#"{"id":"t","artifact":{"content":"","tool_call_id":null}}"#)?;
/// assert_eq!(frame.artifact.tool_call_id, Nullable::Null);
/// assert_eq!(frame.artifact.duration_ms, Nullable::Absent);
/// # Ok::<(), fence_surfaces::ReadError>(())
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
    /// use fence_surfaces::Nullable;
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
    /// use fence_surfaces::Nullable;
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
/// use fence_surfaces::{read_frame, ReadError};
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
    /// readers, and no reader of this crate picks one.
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

impl std::error::Error for ReadError {}

/// A [`ReadError`] and the 1-based line it happened on.
///
/// ```
/// use fence_surfaces::read_record;
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

impl std::error::Error for LineError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// A value read from a surface and the 1-based line it starts on.
///
/// ```
/// use fence_surfaces::read_record;
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
/// use fence_surfaces::read_record;
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
    /// `role` that wrap no message and are no item of the Responses API, trace events other
    /// than `tool_call` and `skill_call`, SSE events of other types. Those whose text holds a
    /// live marker are among them (see [`Report::skipped_with_markers`]).
    pub skipped: usize,
    /// Units that could not be read; each has a [`LineError`].
    pub failed: usize,
}

impl Counts {
    /// Units read into an item: `read - skipped - failed`.
    ///
    /// ```
    /// assert_eq!(fence_surfaces::Counts::default().ok(), 0);
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
/// use fence_surfaces::read_trace;
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
    /// reader ([`read_record`](crate::read_record), …) gives.
    ///
    /// ```
    /// use fence_surfaces::{RecordReader, RecordReport};
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
        std::iter::from_fn(move || {
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
/// reader ([`SseReader`](crate::SseReader), [`RecordReader`](crate::RecordReader),
/// [`TraceReader`](crate::TraceReader)) hands it over, the moment it is complete.
///
/// Every unit is exactly one of the three, as in [`Counts`]. Handing units over one at a
/// time, rather than collecting a [`Report`], keeps a reader's memory bounded by the largest
/// unit, whatever the size of the surface.
///
/// ```
/// use fence_surfaces::{TraceReader, Unit};
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
    /// use fence_surfaces::{RecordReader, Unit};
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
/// use fence_surfaces::{read_trace, MarkerKind};
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
    live_markers(text).next()
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

/// The longest line (for an SSE event, the longest event) the incremental readers hold by
/// default: 256 MiB. A longer one is counted as it goes past, never held, and becomes a
/// [`ReadError::TooLong`] unit; the readers' `with_max_line_bytes` changes it. The readers of a
/// whole input already in memory (`read_record`, `read_trace`, `read_sse`) have no limit.
pub const DEFAULT_MAX_LINE_BYTES: usize = 256 << 20;
