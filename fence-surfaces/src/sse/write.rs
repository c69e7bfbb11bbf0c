//! Writing artifact frames as Server-Sent Events.

use std::io;

use crate::artifact::ArtifactFrame;

/// Writes artifact frames as SSE events: `event: artifact`, `id: N` (numbered from 1),
/// `data: <frame JSON>` and a blank line.
///
/// A frame's JSON is one line (newlines in content are escaped), so each event has exactly one
/// `data:` line.
///
/// ```
/// use fence_runtime::ModelContent;
/// use fence_surfaces::{ArtifactFrame, SseEncoder};
///
/// let mut encoder = SseEncoder::new();
/// let event = encoder.encode(&ArtifactFrame::hook_artifact("tsk_1", "lint", &ModelContent::hook_artifact("ok")));
/// assert_eq!(
///     event,
///     "event: artifact\nid: 1\ndata: {\"id\":\"tsk_1\",\"artifact\":{\"tool_name\":\"lint\",\"content\":\"ok\",\"fence_source\":null,\"tool_call_id\":null,\"is_error\":false,\"duration_ms\":null,\"exit_code\":null,\"truncated\":false}}\n\n",
/// );
/// assert_eq!(encoder.next_id(), 2);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEncoder {
    next_id: u64,
}

impl Default for SseEncoder {
    fn default() -> Self {
        SseEncoder::new()
    }
}

impl SseEncoder {
    /// The comment the runtime sends to keep a connection open; readers skip it.
    pub const HEARTBEAT: &'static str = ":heartbeat\n\n";

    /// An encoder whose first frame gets `id: 1`.
    ///
    /// ```
    /// assert_eq!(fence_surfaces::SseEncoder::new().next_id(), 1);
    /// ```
    #[must_use]
    pub const fn new() -> SseEncoder {
        SseEncoder { next_id: 1 }
    }

    /// The `id` the next frame gets.
    ///
    /// ```
    /// use fence_runtime::ModelContent;
    /// use fence_surfaces::{ArtifactFrame, SseEncoder};
    ///
    /// let mut encoder = SseEncoder::new();
    /// encoder.encode(&ArtifactFrame::hook_artifact("t", "h", &ModelContent::hook_artifact("x")));
    /// assert_eq!(encoder.next_id(), 2);
    /// ```
    #[must_use]
    pub const fn next_id(&self) -> u64 {
        self.next_id
    }

    /// The next event, as text.
    ///
    /// ```
    /// use fence_runtime::ModelContent;
    /// use fence_surfaces::{ArtifactFrame, SseEncoder};
    ///
    /// let mut encoder = SseEncoder::new();
    /// encoder.encode(&ArtifactFrame::hook_artifact("t", "h", &ModelContent::hook_artifact("x")));
    /// assert!(encoder.encode(&ArtifactFrame::hook_artifact("t", "h", &ModelContent::hook_artifact("y"))).starts_with("event: artifact\nid: 2\ndata: {"));
    /// ```
    pub fn encode(&mut self, frame: &ArtifactFrame<'_>) -> String {
        let json = frame.to_json();
        let id = self.next_id;
        self.next_id += 1;
        format!("event: artifact\nid: {id}\ndata: {json}\n\n")
    }

    /// Writes the next event to `out`.
    ///
    /// # Errors
    ///
    /// The error `out` returns.
    ///
    /// ```
    /// use fence_runtime::ModelContent;
    /// use fence_surfaces::{ArtifactFrame, SseEncoder};
    ///
    /// let mut out = Vec::new();
    /// let mut encoder = SseEncoder::new();
    /// encoder.write_frame(&mut out, &ArtifactFrame::hook_artifact("t", "h", &ModelContent::hook_artifact("x")))?;
    /// SseEncoder::write_heartbeat(&mut out)?;
    /// assert!(out.ends_with(b"}}\n\n:heartbeat\n\n"));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn write_frame<W: io::Write>(
        &mut self,
        mut out: W,
        frame: &ArtifactFrame<'_>,
    ) -> io::Result<()> {
        out.write_all(self.encode(frame).as_bytes())
    }

    /// Writes a `:heartbeat` comment to `out`.
    ///
    /// # Errors
    ///
    /// The error `out` returns.
    ///
    /// ```
    /// let mut out = Vec::new();
    /// fence_surfaces::SseEncoder::write_heartbeat(&mut out)?;
    /// assert_eq!(out, b":heartbeat\n\n");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn write_heartbeat<W: io::Write>(mut out: W) -> io::Result<()> {
        out.write_all(Self::HEARTBEAT.as_bytes())
    }
}
