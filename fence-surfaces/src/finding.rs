//! What the verifier reports: typed findings and where they were found.

use std::fmt;

use fence_runtime::{Exemption, MarkerKind, ParseError};

use crate::report::ReadError;

/// The surface a finding was made on.
///
/// ```
/// assert_eq!(fence_surfaces::Surface::Record.to_string(), "conversation record");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Surface {
    /// The A2A SSE stream of `artifact` frames.
    ArtifactStream,
    /// `conversation.jsonl`.
    Record,
    /// `trace.jsonl`.
    Trace,
}

impl fmt::Display for Surface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Surface::ArtifactStream => "artifact stream",
            Surface::Record => "conversation record",
            Surface::Trace => "trace",
        })
    }
}

/// Where a finding was made: the surface, the 1-based line, for a frame the `id:` of its SSE
/// event, and for a record line the part of its `content` the finding is about, when it is
/// about one part rather than the line's text.
///
/// ```
/// use fence_surfaces::{Location, Surface};
///
/// let at = Location::new(Surface::ArtifactStream, 3).with_frame_id("1");
/// assert_eq!(at.to_string(), "artifact stream, line 3 (frame id 1)");
/// let at = Location::new(Surface::Record, 4).with_part(1);
/// assert_eq!(at.to_string(), "conversation record, line 4, content[1]");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub struct Location {
    /// The surface.
    pub surface: Surface,
    /// The 1-based line: for a frame, the line of its first `data:` field.
    pub line: usize,
    /// The SSE `id:` of a frame's event, when it had one.
    pub frame_id: Option<String>,
    /// The 0-based index, in a record line's `content` array, of the part the finding is about:
    /// a tool result carried as a part, or a part that cannot be read (in a top-level Responses
    /// item that carries a tool's output, the index of the part read from its `output`). `None`
    /// for a finding about the line's text, and on the other surfaces.
    pub part: Option<usize>,
}

impl Location {
    /// A location on `surface`, at the 1-based `line`, with no frame id and no part.
    ///
    /// ```
    /// use fence_surfaces::{Location, Surface};
    ///
    /// let at = Location::new(Surface::Trace, 2);
    /// assert_eq!((at.surface, at.line, at.frame_id, at.part), (Surface::Trace, 2, None, None));
    /// ```
    #[must_use]
    pub fn new(surface: Surface, line: usize) -> Location {
        Location {
            surface,
            line,
            frame_id: None,
            part: None,
        }
    }

    /// Sets the SSE `id:` of the frame's event.
    ///
    /// ```
    /// use fence_surfaces::{Location, Surface};
    ///
    /// let at = Location::new(Surface::ArtifactStream, 3).with_frame_id("7");
    /// assert_eq!(at.frame_id.as_deref(), Some("7"));
    /// ```
    #[must_use]
    pub fn with_frame_id(mut self, frame_id: impl Into<String>) -> Location {
        self.frame_id = Some(frame_id.into());
        self
    }

    /// Sets the 0-based index of the record line's part the finding is about.
    ///
    /// ```
    /// use fence_surfaces::{Location, Surface};
    ///
    /// assert_eq!(Location::new(Surface::Record, 1).with_part(2).part, Some(2));
    /// ```
    #[must_use]
    pub fn with_part(mut self, part: usize) -> Location {
        self.part = Some(part);
        self
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, line {}", self.surface, self.line)?;
        if let Some(id) = &self.frame_id {
            write!(f, " (frame id {id})")?;
        }
        if let Some(part) = self.part {
            write!(f, ", content[{part}]")?;
        }
        Ok(())
    }
}

/// How a label is missing from fenced content.
///
/// ```
/// assert_eq!(fence_surfaces::MissingLabel::Null.to_string(), "null");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MissingLabel {
    /// The label is `null`.
    Null,
    /// The key is absent on a surface whose other units carry it.
    Absent,
}

impl fmt::Display for MissingLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MissingLabel::Null => "null",
            MissingLabel::Absent => "absent",
        })
    }
}

/// What is wrong (or, for [`UnknownSourceKind`](Self::UnknownSourceKind) and
/// [`UnknownRole`](Self::UnknownRole), worth knowing) about one unit of a surface.
///
/// ```
/// use fence_surfaces::FindingKind;
///
/// let finding = FindingKind::OutputBytesMismatch { output_bytes: 10, actual: 56 };
/// assert!(finding.is_error());
/// assert_eq!(finding.name(), "output-bytes-mismatch");
/// assert!(!FindingKind::UnknownSourceKind { source: "skill:x".into() }.is_error());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FindingKind {
    /// A unit — an SSE event, a record line, a trace line — that could not be read: not
    /// UTF-8, not JSON, a key written twice, or a known key of the wrong type. Nothing in it was
    /// checked, so it is an error whatever it holds.
    UnreadableUnit {
        /// Why it could not be read.
        error: ReadError,
    },
    /// A unit passed over on purpose — the record header, a record line with no string `role`
    /// that is no Responses item, a trace event of a type the verifier does not read, an SSE
    /// event of a type other than `artifact` — whose text holds a live marker: the first one,
    /// in any string of it, keys included. Nothing the model may read is passed over unchecked.
    LiveMarkerInSkippedUnit {
        /// What the unit is: "the record header", "an SSE event of type `status`", ….
        unit: String,
        /// Where the string is in the unit (`detail.lines[1]`; empty for its whole text).
        path: String,
        /// The byte offset of the marker's `<` in that string.
        offset: usize,
        /// Which marker it is.
        marker: MarkerKind,
    },
    /// A part of a record line's `content` that the verifier cannot read: a type it does not
    /// know, no string `type`, or a known type without the key that holds its text. Its text,
    /// if any, is not checked.
    UnreadablePart {
        /// Where the part is in the line: `content[1]`, or `content[0].content[2]` inside a
        /// tool result.
        path: String,
        /// The part's `type`, when it has a string one.
        part_type: Option<String>,
    },
    /// A label names one source and the content's markers another.
    LabelMismatch {
        /// The source the label names.
        label: String,
        /// The source the opening marker names.
        markers: String,
    },
    /// A label names a source, but the content is not a valid fenced block.
    LabelOnInvalidBlock {
        /// The source the label names.
        label: String,
        /// Why the content is not a block ([`ParseError::NoOpener`] for plain text).
        error: ParseError,
    },
    /// The content is a fenced block, but its label is `null`, or absent where the surface
    /// labels its units.
    FenceWithoutLabel {
        /// How the label is missing.
        label: MissingLabel,
        /// The source the opening marker names.
        markers: String,
    },
    /// A fenced block holds a live marker other than its own opener and final closer: the
    /// content was not neutralised, or the source name carries a marker.
    LiveMarkerInBlock {
        /// The byte offset of the marker's `<` in the content.
        offset: usize,
        /// Which marker it is.
        marker: MarkerKind,
    },
    /// A tool result — a `tool` record line, a tool result part, a `tool_call` output, an
    /// artifact of a call that reached a tool — that is not a valid fenced block.
    UnfencedToolResult {
        /// Why the content is not a block ([`ParseError::NoOpener`] for plain text).
        error: ParseError,
    },
    /// A tool's result fenced under a source other than `tool:<that tool's name>` (the name
    /// sanitised as [`Source::tool`](fence_runtime::Source::tool) sanitises it): another tool's, or a
    /// task's.
    ToolSourceMismatch {
        /// The source the tool's results are fenced under.
        expected: String,
        /// The source the opening marker names.
        markers: String,
    },
    /// Content that is never fenced — a skill result, a hook artifact, a dispatch failure, the
    /// model's own text, a trusted task — that carries a fence: a valid block, or any live
    /// marker. Every exemption's constructor neutralises markers, so content written with the
    /// toolkit never carries one.
    FenceOnExempt {
        /// Which exemption the content falls under.
        exemption: Exemption,
        /// The source of the block, when the content is a valid one.
        markers: Option<String>,
    },
    /// Content that may be fenced or not — a failed call with no evidence that it ran, a record
    /// line of a role the verifier does not know — that is neither: it carries live markers
    /// but is not exactly one valid block (a forged marker in unfenced text, a valid block with
    /// text after it, …). Such content is one block, or text with no live marker at all.
    LiveMarkerOutsideBlock {
        /// Why the content is not a block.
        error: ParseError,
    },
    /// A frame whose `tool_call_id` and `duration_ms` are both `null`, as on a hook artifact,
    /// but whose `exit_code` is not `null` or whose `is_error` is not `false`: it is not a hook
    /// artifact, and is checked as a call.
    NotAHookArtifact {
        /// The frame's `exit_code`.
        exit_code: Option<i32>,
        /// The frame's `is_error`.
        is_error: Option<bool>,
    },
    /// A call id bound to two different names: the unit names call `id` `name`, but the
    /// context, an artifact frame or a record's call (a `tool_use` or `function_call` part, a
    /// `tool_calls` entry, a `tool` line's own `name`) binds it to `other`. Which name a result
    /// answering the call belongs to is then unknown; the verifier never takes it for a skill's
    /// doc while one of the names is not a declared skill.
    CallIdReused {
        /// The call id.
        id: String,
        /// The name this unit gives the call.
        name: String,
        /// Another name the call id is bound to.
        other: String,
    },
    /// A declared skill's name where a surface says a tool was called: a trace `tool_call`
    /// event (a skill's call is a `skill_call`), an artifact frame with a non-null `exit_code`
    /// (a subprocess ran), or a record's result answering such a call — one whose call id such
    /// a frame names, or whose name a trace calls as a tool and never as a skill, or a
    /// Responses item that is a tool's by its type (an `mcp_call`). Its content is checked as a
    /// tool's result, never as the skill's doc.
    SkillCalledAsTool {
        /// The skill's name.
        name: String,
    },
    /// A trace event whose `status` is neither `"ok"` nor `"error"`. A `tool_call` with one is
    /// checked as a tool result.
    UnknownStatus {
        /// The status as written.
        status: String,
    },
    /// An artifact frame says `truncated: false`, but its content is a block that ends with
    /// the [`TRUNCATION_NOTICE`](fence_runtime::TRUNCATION_NOTICE) on a line of its own: the fence was
    /// closed as cut short, and the flag denies it. (A frame with no `truncated` key says
    /// nothing, and is not reported.)
    TruncationDenied,
    /// A trace event's `output_bytes` differs from the byte length of its `output`.
    OutputBytesMismatch {
        /// What the event says.
        output_bytes: u64,
        /// The byte length of `output`.
        actual: u64,
    },
    /// A fence source that is neither `tool:` nor `task:<known origin>`, such as the reference
    /// runtime's `skill:` or `member:`. Reported, but not an error.
    UnknownSourceKind {
        /// The source name.
        source: String,
    },
    /// A record line whose `role` is none of `user`, `assistant`, `tool`, `function`, `system`
    /// and `developer`, and none of the first four spelled otherwise
    /// ([`RoleSpelledOtherwise`](Self::RoleSpelledOtherwise)): `ipython`, or `System`. Its text
    /// is checked as content that may be fenced or not (one valid
    /// block, or no live marker: see [`LiveMarkerOutsideBlock`](Self::LiveMarkerOutsideBlock)),
    /// and its tool result parts as ever. Reported, but not an error.
    UnknownRole {
        /// The role as written.
        role: String,
    },
    /// A record line whose `role` spells `user`, `assistant`, `tool` or `function` otherwise:
    /// in another ASCII casing, or with ASCII whitespace around it (`Tool`, `" user"`). Strict
    /// readers refuse it; lenient ones read it as the role it spells, and so does the verifier:
    /// a `Tool` line is checked as a `tool` line. Reported, but not an error.
    RoleSpelledOtherwise {
        /// The role as written.
        role: String,
        /// The role it is read as.
        read_as: String,
    },
}

impl FindingKind {
    /// Whether the finding is an error. Everything is, except
    /// [`UnknownSourceKind`](Self::UnknownSourceKind), [`UnknownRole`](Self::UnknownRole) and
    /// [`RoleSpelledOtherwise`](Self::RoleSpelledOtherwise).
    ///
    /// ```
    /// use fence_surfaces::FindingKind;
    /// use fence_runtime::ParseError;
    ///
    /// assert!(FindingKind::UnfencedToolResult { error: ParseError::NoOpener }.is_error());
    /// ```
    #[must_use]
    pub fn is_error(&self) -> bool {
        !matches!(
            self,
            FindingKind::UnknownSourceKind { .. }
                | FindingKind::UnknownRole { .. }
                | FindingKind::RoleSpelledOtherwise { .. }
        )
    }

    /// A stable kebab-case name for the kind.
    ///
    /// ```
    /// use fence_surfaces::{FindingKind, MissingLabel};
    ///
    /// let kind = FindingKind::FenceWithoutLabel { label: MissingLabel::Null, markers: "tool:t".into() };
    /// assert_eq!(kind.name(), "fence-without-label");
    /// ```
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            FindingKind::UnreadableUnit { .. } => "unreadable-unit",
            FindingKind::LiveMarkerInSkippedUnit { .. } => "live-marker-in-skipped-unit",
            FindingKind::UnreadablePart { .. } => "unreadable-part",
            FindingKind::LabelMismatch { .. } => "label-mismatch",
            FindingKind::LabelOnInvalidBlock { .. } => "label-on-invalid-block",
            FindingKind::FenceWithoutLabel { .. } => "fence-without-label",
            FindingKind::LiveMarkerInBlock { .. } => "live-marker-in-block",
            FindingKind::UnfencedToolResult { .. } => "unfenced-tool-result",
            FindingKind::ToolSourceMismatch { .. } => "tool-source-mismatch",
            FindingKind::FenceOnExempt { .. } => "fence-on-exempt",
            FindingKind::LiveMarkerOutsideBlock { .. } => "live-marker-outside-block",
            FindingKind::NotAHookArtifact { .. } => "not-a-hook-artifact",
            FindingKind::CallIdReused { .. } => "call-id-reused",
            FindingKind::SkillCalledAsTool { .. } => "skill-called-as-tool",
            FindingKind::UnknownStatus { .. } => "unknown-status",
            FindingKind::TruncationDenied => "truncation-denied",
            FindingKind::OutputBytesMismatch { .. } => "output-bytes-mismatch",
            FindingKind::UnknownSourceKind { .. } => "unknown-source-kind",
            FindingKind::UnknownRole { .. } => "unknown-role",
            FindingKind::RoleSpelledOtherwise { .. } => "role-spelled-otherwise",
        }
    }
}

impl fmt::Display for FindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FindingKind::UnreadableUnit { error } => {
                write!(f, "cannot be read, so nothing in it was checked: {error}")
            }
            FindingKind::LiveMarkerInSkippedUnit {
                unit,
                path,
                offset,
                marker,
            } => {
                write!(f, "{unit}, passed over, holds a live {marker} marker at byte {offset}")?;
                if !path.is_empty() {
                    write!(f, " of its string at `{path}`")?;
                }
                Ok(())
            }
            FindingKind::UnreadablePart { path, part_type } => {
                write!(f, "the part at `{path}` ")?;
                match part_type {
                    Some(kind) => write!(
                        f,
                        "(type `{kind}`) is of a type the verifier does not know, or lacks the key that holds its text"
                    )?,
                    None => f.write_str("has no string `type`")?,
                }
                f.write_str(": its text is not checked")
            }
            FindingKind::LabelMismatch { label, markers } => write!(
                f,
                "the label says `{label}` but the markers say `{markers}`"
            ),
            FindingKind::LabelOnInvalidBlock { label, error } => write!(
                f,
                "labelled `{label}` but the content is not a valid block: {error}"
            ),
            FindingKind::FenceWithoutLabel { label, markers } => {
                write!(f, "content fenced under `{markers}` has its label {label}")
            }
            FindingKind::LiveMarkerInBlock { offset, marker } => write!(
                f,
                "a live {marker} marker at byte {offset} inside a fenced block"
            ),
            FindingKind::UnfencedToolResult { error } => {
                write!(f, "a tool result carries no fence: {error}")
            }
            FindingKind::ToolSourceMismatch { expected, markers } => write!(
                f,
                "a tool result is fenced under `{markers}`, but its tool's results are fenced under `{expected}`"
            ),
            FindingKind::FenceOnExempt { exemption, markers } => match markers {
                Some(source) => write!(
                    f,
                    "{exemption} content, never fenced, carries a fence under `{source}`"
                ),
                None => write!(
                    f,
                    "{exemption} content, never fenced, carries a live marker"
                ),
            },
            FindingKind::LiveMarkerOutsideBlock { error } => write!(
                f,
                "carries live markers but is not one valid block ({error}); content that may be fenced or not is one block or has no live marker"
            ),
            FindingKind::NotAHookArtifact {
                exit_code,
                is_error,
            } => not_a_hook_artifact(f, *exit_code, *is_error),
            FindingKind::CallIdReused { id, name, other } => write!(
                f,
                "call id `{id}` is named `{name}` here but `{other}` elsewhere: one call id, two names"
            ),
            FindingKind::SkillCalledAsTool { name } => write!(
                f,
                "the declared skill `{name}` is called as a tool here: checked as a tool's result"
            ),
            FindingKind::UnknownStatus { status } => write!(
                f,
                "`status` `{status}` is neither `ok` nor `error`: checked as a tool result"
            ),
            FindingKind::TruncationDenied => f.write_str(
                "`truncated` is false, but the block ends with the truncation notice: its content was cut short",
            ),
            FindingKind::OutputBytesMismatch {
                output_bytes,
                actual,
            } => write!(
                f,
                "`output_bytes` is {output_bytes} but `output` is {actual} bytes"
            ),
            FindingKind::UnknownSourceKind { source } => write!(
                f,
                "fence source `{source}` is neither `tool:` nor `task:<known origin>`"
            ),
            FindingKind::UnknownRole { role } => role_read_as(f, role, None),
            FindingKind::RoleSpelledOtherwise { role, read_as } => {
                role_read_as(f, role, Some(read_as))
            }
        }
    }
}

/// Says how a record line's role is read: as a role it spells otherwise, or as none it knows.
fn role_read_as(f: &mut fmt::Formatter<'_>, role: &str, read_as: Option<&str>) -> fmt::Result {
    match read_as {
        Some(read_as) => write!(
            f,
            "role `{role}` is `{read_as}` spelled otherwise: read as a `{read_as}` line, as lenient readers read it"
        ),
        None => write!(
            f,
            "role `{role}` is none of `user`, `assistant`, `tool`, `function`, `system`, `developer`: its text is checked as one valid block or text with no live marker"
        ),
    }
}

/// Says what a frame dressed as a hook artifact is not.
fn not_a_hook_artifact(
    f: &mut fmt::Formatter<'_>,
    exit_code: Option<i32>,
    is_error: Option<bool>,
) -> fmt::Result {
    f.write_str("`tool_call_id` and `duration_ms` are null as on a hook artifact, but ")?;
    match exit_code {
        Some(code) => write!(f, "`exit_code` is {code}")?,
        None => f.write_str("`exit_code` is null")?,
    }
    match is_error {
        Some(flag) => write!(f, " and `is_error` is {flag}")?,
        None => f.write_str(" and `is_error` is missing")?,
    }
    f.write_str(" (a hook artifact has `exit_code` null and `is_error` false): checked as a call")
}

/// One finding: what, and where.
///
/// ```
/// use fence_surfaces::{read_record, verify_record, VerifyContext};
///
/// let record = read_record(br#"{"role":"tool","tool_call_id":"c1","is_error":false,"content":[{"type":"text","text":"raw page"}]}"#);
/// let findings = verify_record(&record, &VerifyContext::new());
/// assert_eq!(findings[0].to_string(), "conversation record, line 1: a tool result carries no fence: not a fenced block: the message does not start with `<untrusted-content source=`");
/// assert!(findings[0].is_error());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Finding {
    /// Where it was found.
    pub location: Location,
    /// What was found.
    pub kind: FindingKind,
}

impl Finding {
    /// A finding of `kind` at `location`.
    ///
    /// ```
    /// use fence_surfaces::{Finding, FindingKind, Location, Surface};
    ///
    /// let finding = Finding::new(
    ///     Location::new(Surface::Trace, 1),
    ///     FindingKind::UnknownStatus { status: "done".into() },
    /// );
    /// assert_eq!(finding.to_string(), "trace, line 1: `status` `done` is neither `ok` nor `error`: checked as a tool result");
    /// ```
    #[must_use]
    pub fn new(location: Location, kind: FindingKind) -> Finding {
        Finding { location, kind }
    }

    /// Whether the finding is an error; see [`FindingKind::is_error`].
    ///
    /// ```
    /// use fence_surfaces::{Finding, FindingKind, Location, Surface};
    ///
    /// let finding = Finding::new(
    ///     Location::new(Surface::Trace, 1),
    ///     FindingKind::UnknownSourceKind { source: "member:r".into() },
    /// );
    /// assert!(!finding.is_error());
    /// ```
    #[must_use]
    pub fn is_error(&self) -> bool {
        self.kind.is_error()
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.kind)
    }
}
