//! Reading an artifact frame written by any runtime version.

use serde::Deserialize;

use crate::report::{Label, Nullable, ReadError};
use crate::strict_json::{from_value, parse_value};

/// An artifact frame as read from the wire, from any runtime version.
///
/// Only `artifact.content` is required. Unknown keys are ignored; a known key of the wrong type
/// fails the frame with [`ReadError::Shape`], and any key written twice with
/// [`ReadError::DuplicateKey`].
///
/// ```
/// use fence_surfaces::{read_frame, Label};
///
/// let frame = read_frame(r#"{"id":"task_01a0…","artifact":{"tool_name":"web-fetch","content":"<untrusted-content source=tool:web-fetch>\n{\"status\":200}\n</untrusted-content>","fence_source":"tool:web-fetch"}}"#)?;
/// assert_eq!(frame.id.as_deref(), Some("task_01a0…"));
/// assert_eq!(frame.artifact.fence_source, Label::Source("tool:web-fetch".into()));
/// # Ok::<(), fence_surfaces::ReadError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct ParsedFrame {
    /// The task id.
    #[serde(default)]
    pub id: Option<String>,
    /// The artifact.
    pub artifact: ParsedArtifact,
}

/// The `artifact` object of a [`ParsedFrame`].
///
/// ```
/// use fence_surfaces::{read_frame, Nullable};
///
/// let frame = read_frame(r#"{"artifact":{"tool_name":"bash","content":"x","exit_code":0,"duration_ms":3,"future_key":[1]}}"#)?;
/// assert_eq!(frame.artifact.exit_code, Some(0));
/// assert_eq!(frame.artifact.duration_ms, Nullable::Value(3));
/// # Ok::<(), fence_surfaces::ReadError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct ParsedArtifact {
    /// The tool, skill or hook the frame reports.
    #[serde(default)]
    pub tool_name: Option<String>,
    /// The bytes the model received.
    pub content: String,
    /// The label: [`Label::Absent`] on a frame from a runtime older than the field.
    #[serde(default)]
    pub fence_source: Label,
    /// The provider's id for the call; `null` on a hook artifact.
    #[serde(default)]
    pub tool_call_id: Nullable<String>,
    /// Whether the tool failed or the call never reached a tool.
    #[serde(default)]
    pub is_error: Option<bool>,
    /// How long the call took; `null` on a hook artifact.
    #[serde(default)]
    pub duration_ms: Nullable<u64>,
    /// The exit status of a subprocess that ran to completion.
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// The tool result's own truncated flag.
    #[serde(default)]
    pub truncated: Option<bool>,
}

/// Reads one artifact frame from its JSON text (an SSE event's `data`).
///
/// # Errors
///
/// [`ReadError::Json`] when the text is not one JSON value, [`ReadError::DuplicateKey`] when an
/// object in it names a key twice, [`ReadError::Shape`] when it is not a frame (no `artifact`
/// object with a string `content`, or a known key of the wrong type).
///
/// ```
/// use fence_surfaces::{read_frame, ReadError};
///
/// assert!(matches!(
///     read_frame(r#"{"artifact":{"content":"<untrusted-content source=tool:t>\nx\n</untrusted-content>","content":"raw"}}"#),
///     Err(ReadError::DuplicateKey { .. }),
/// ));
/// let frame = read_frame(r#"{"id":"tsk_1","artifact":{"content":"hi","fence_source":null}}"#)?;
/// assert_eq!(frame.artifact.content, "hi");
/// assert!(read_frame(r#"{"id":"tsk_1","artifact":{"content":7}}"#).is_err());
/// # Ok::<(), fence_surfaces::ReadError>(())
/// ```
pub fn read_frame(json: &str) -> Result<ParsedFrame, ReadError> {
    from_value(parse_value(json)?)
}

/// Reads one artifact frame from bytes that may not be UTF-8.
pub(crate) fn read_frame_bytes(json: &[u8]) -> Result<ParsedFrame, ReadError> {
    match std::str::from_utf8(json) {
        Ok(text) => read_frame(text),
        Err(error) => Err(ReadError::NotUtf8 {
            valid_up_to: error.valid_up_to(),
        }),
    }
}
