//! Writing an artifact frame from the one value that gives both its content and its label.

use fence_runtime::{ModelContent, ToolOutput, parse};
use serde::Serialize;

use crate::Labelled;

/// What the runtime knows about a call besides its content: the provider's id for it, how long
/// it took, the exit status of a subprocess that ran to completion, and the tool's own truncated
/// flag.
///
/// ```
/// use fence_surfaces::CallMeta;
///
/// let call = CallMeta::new("toolu_01", 12).with_exit_code(0);
/// assert_eq!(call.tool_call_id(), "toolu_01");
/// assert_eq!(call.duration_ms(), 12);
/// assert_eq!(call.exit_code(), Some(0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CallMeta<'a> {
    tool_call_id: &'a str,
    duration_ms: u64,
    exit_code: Option<i32>,
    truncated: bool,
}

impl<'a> CallMeta<'a> {
    /// A call with no subprocess exit status whose result was not truncated.
    ///
    /// ```
    /// let call = fence_surfaces::CallMeta::new("toolu_1", 0);
    /// assert!(!call.is_truncated());
    /// ```
    #[must_use]
    pub const fn new(tool_call_id: &'a str, duration_ms: u64) -> CallMeta<'a> {
        CallMeta {
            tool_call_id,
            duration_ms,
            exit_code: None,
            truncated: false,
        }
    }

    /// Sets the exit status of a subprocess that ran to completion.
    ///
    /// ```
    /// let call = fence_surfaces::CallMeta::new("toolu_1", 3).with_exit_code(2);
    /// assert_eq!(call.exit_code(), Some(2));
    /// ```
    #[must_use]
    pub const fn with_exit_code(mut self, code: i32) -> CallMeta<'a> {
        self.exit_code = Some(code);
        self
    }

    /// Sets the tool result's own truncated flag.
    ///
    /// ```
    /// let call = fence_surfaces::CallMeta::new("toolu_1", 3).with_truncated(true);
    /// assert!(call.is_truncated());
    /// ```
    #[must_use]
    pub const fn with_truncated(mut self, truncated: bool) -> CallMeta<'a> {
        self.truncated = truncated;
        self
    }

    /// The provider's id for the call.
    ///
    /// ```
    /// assert_eq!(fence_surfaces::CallMeta::new("toolu_9", 0).tool_call_id(), "toolu_9");
    /// ```
    #[must_use]
    pub const fn tool_call_id(&self) -> &'a str {
        self.tool_call_id
    }

    /// How long the call took, in milliseconds.
    ///
    /// ```
    /// assert_eq!(fence_surfaces::CallMeta::new("t", 40).duration_ms(), 40);
    /// ```
    #[must_use]
    pub const fn duration_ms(&self) -> u64 {
        self.duration_ms
    }

    /// The subprocess exit status, if one ran to completion.
    ///
    /// ```
    /// assert_eq!(fence_surfaces::CallMeta::new("t", 0).exit_code(), None);
    /// ```
    #[must_use]
    pub const fn exit_code(&self) -> Option<i32> {
        self.exit_code
    }

    /// Whether the tool truncated its own result.
    ///
    /// ```
    /// assert!(!fence_surfaces::CallMeta::new("t", 0).is_truncated());
    /// ```
    #[must_use]
    pub const fn is_truncated(&self) -> bool {
        self.truncated
    }
}

/// An A2A `artifact` SSE frame, ready to serialise: `{"id": <task id>, "artifact": {...}}` with
/// every key of the artifact present, in the wire order, and `null` where a key does not apply.
///
/// It can only be built from a [`ToolOutput`] or a [`ModelContent`] (a skill's `skill.md`, a
/// hook's text), so `content` and `fence_source` always come from one value: a frame cannot
/// carry a label that disagrees with its bytes, and `fence_source` is written on every frame.
///
/// ```
/// use fence_runtime::{fence, Source, ToolOutput};
/// use fence_surfaces::{ArtifactFrame, CallMeta};
///
/// let output = ToolOutput::ok(fence(&Source::tool("web-fetch"), "{\"status\":200}"));
/// let frame = ArtifactFrame::tool_result("tsk_1", "web-fetch", &output, CallMeta::new("toolu_1", 8));
/// assert_eq!(
///     frame.to_json(),
///     r#"{"id":"tsk_1","artifact":{"tool_name":"web-fetch","content":"<untrusted-content source=tool:web-fetch>\n{\"status\":200}\n</untrusted-content>","fence_source":"tool:web-fetch","tool_call_id":"toolu_1","is_error":false,"duration_ms":8,"exit_code":null,"truncated":false}}"#,
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ArtifactFrame<'a> {
    id: &'a str,
    artifact: Artifact<'a>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
struct Artifact<'a> {
    tool_name: &'a str,
    content: &'a str,
    fence_source: Option<&'a str>,
    tool_call_id: Option<&'a str>,
    is_error: bool,
    duration_ms: Option<u64>,
    exit_code: Option<i32>,
    truncated: bool,
}

impl<'a> Artifact<'a> {
    fn new(tool_name: &'a str, content: Labelled<'a>) -> Artifact<'a> {
        Artifact {
            tool_name,
            content: content.text,
            fence_source: content.fence,
            tool_call_id: None,
            is_error: false,
            duration_ms: None,
            exit_code: None,
            truncated: false,
        }
    }
}

/// Whether a fenced output's block ends with the truncation notice.
fn ends_truncated(output: &ToolOutput) -> bool {
    parse(output.content().as_str()).is_ok_and(|block| block.is_truncated())
}

impl<'a> ArtifactFrame<'a> {
    /// The frame of a tool call: the output's content and label, its error flag, and the
    /// call's metadata.
    ///
    /// A dispatch failure or a refusal ([`ToolOutput::dispatch_failure`],
    /// [`ToolOutput::refusal`]) never ran anything, so its `exit_code` is written as `null`
    /// whatever `call` says: a non-null `exit_code` is how a reader knows a subprocess ran.
    /// A block whose stream was cut short (it ends with
    /// [`TRUNCATION_NOTICE`](fence_runtime::TRUNCATION_NOTICE), as
    /// [`FenceBuffer::into_truncated_block`](fence_runtime::FenceBuffer::into_truncated_block) and the
    /// writers' `finish_truncated` leave it) is written `truncated: true` whatever `call` says,
    /// so the flag cannot deny what the bytes say.
    ///
    /// ```
    /// use fence_runtime::ToolOutput;
    /// use fence_surfaces::{ArtifactFrame, CallMeta};
    ///
    /// let output = ToolOutput::dispatch_failure("tool 'no-such-tool' is not declared in manifest allowlist");
    /// let frame = ArtifactFrame::tool_result("tsk_1", "no-such-tool", &output, CallMeta::new("toolu_03", 0));
    /// assert_eq!(
    ///     frame.to_json(),
    ///     r#"{"id":"tsk_1","artifact":{"tool_name":"no-such-tool","content":"tool 'no-such-tool' is not declared in manifest allowlist","fence_source":null,"tool_call_id":"toolu_03","is_error":true,"duration_ms":0,"exit_code":null,"truncated":false}}"#,
    /// );
    /// ```
    #[must_use]
    pub fn tool_result(
        task_id: &'a str,
        tool_name: &'a str,
        output: &'a ToolOutput,
        call: CallMeta<'a>,
    ) -> ArtifactFrame<'a> {
        let content = Labelled::of(output.content());
        let ran = content.fence.is_some();
        ArtifactFrame {
            id: task_id,
            artifact: Artifact {
                tool_call_id: Some(call.tool_call_id),
                is_error: output.is_error(),
                duration_ms: Some(call.duration_ms),
                exit_code: if ran { call.exit_code } else { None },
                truncated: call.truncated || (ran && ends_truncated(output)),
                ..Artifact::new(tool_name, content)
            },
        }
    }

    /// The frame of a declared skill's result: its `skill.md` text, which is never fenced, as
    /// [`ModelContent::skill_doc`] builds it.
    ///
    /// `content` and `fence_source` are both taken from `skill_doc`, whatever built it, so they
    /// cannot disagree: fenced content handed here is written with its label, and the verifier
    /// then reports a fence on a skill result.
    ///
    /// ```
    /// use fence_runtime::ModelContent;
    /// use fence_surfaces::ArtifactFrame;
    ///
    /// let doc = ModelContent::skill_doc("# Triage\n");
    /// let frame = ArtifactFrame::skill_result("tsk_1", "triage", &doc, "toolu_2", 1);
    /// assert_eq!(frame.fence_source(), None);
    /// assert!(frame.to_json().contains(r#""fence_source":null,"tool_call_id":"toolu_2","is_error":false,"duration_ms":1,"exit_code":null"#));
    /// ```
    #[must_use]
    pub fn skill_result(
        task_id: &'a str,
        skill_name: &'a str,
        skill_doc: &'a ModelContent,
        tool_call_id: &'a str,
        duration_ms: u64,
    ) -> ArtifactFrame<'a> {
        ArtifactFrame {
            id: task_id,
            artifact: Artifact {
                tool_call_id: Some(tool_call_id),
                duration_ms: Some(duration_ms),
                ..Artifact::new(skill_name, Labelled::of(skill_doc))
            },
        }
    }

    /// The frame of a hook artifact: the operator's own declared hook speaking, never
    /// fenced, as [`ModelContent::hook_artifact`] builds it; `tool_call_id` and `duration_ms`
    /// are `null`.
    ///
    /// `content` and `fence_source` are both taken from `text`, whatever built it, so they
    /// cannot disagree.
    ///
    /// ```
    /// use fence_runtime::ModelContent;
    /// use fence_surfaces::ArtifactFrame;
    ///
    /// let text = ModelContent::hook_artifact("lint passed");
    /// let frame = ArtifactFrame::hook_artifact("tsk_1", "lint", &text);
    /// assert_eq!(
    ///     frame.to_json(),
    ///     r#"{"id":"tsk_1","artifact":{"tool_name":"lint","content":"lint passed","fence_source":null,"tool_call_id":null,"is_error":false,"duration_ms":null,"exit_code":null,"truncated":false}}"#,
    /// );
    /// ```
    #[must_use]
    pub fn hook_artifact(
        task_id: &'a str,
        hook_name: &'a str,
        text: &'a ModelContent,
    ) -> ArtifactFrame<'a> {
        ArtifactFrame {
            id: task_id,
            artifact: Artifact::new(hook_name, Labelled::of(text)),
        }
    }

    /// The task id, the frame's top-level `id`.
    ///
    /// ```
    /// use fence_runtime::ModelContent;
    /// use fence_surfaces::ArtifactFrame;
    ///
    /// assert_eq!(ArtifactFrame::hook_artifact("tsk_7", "h", &ModelContent::hook_artifact("x")).task_id(), "tsk_7");
    /// ```
    #[must_use]
    pub fn task_id(&self) -> &'a str {
        self.id
    }

    /// The tool, skill or hook the frame reports.
    ///
    /// ```
    /// use fence_runtime::ModelContent;
    /// use fence_surfaces::ArtifactFrame;
    ///
    /// assert_eq!(ArtifactFrame::hook_artifact("t", "lint", &ModelContent::hook_artifact("x")).tool_name(), "lint");
    /// ```
    #[must_use]
    pub fn tool_name(&self) -> &'a str {
        self.artifact.tool_name
    }

    /// The bytes the model received, markers included.
    ///
    /// ```
    /// use fence_runtime::ModelContent;
    /// use fence_surfaces::ArtifactFrame;
    ///
    /// assert_eq!(ArtifactFrame::hook_artifact("t", "lint", &ModelContent::hook_artifact("ok")).content(), "ok");
    /// ```
    #[must_use]
    pub fn content(&self) -> &'a str {
        self.artifact.content
    }

    /// The source `content` is fenced under, or `None` (written as `null`).
    ///
    /// ```
    /// use fence_runtime::{fence, Source, ToolOutput};
    /// use fence_surfaces::{ArtifactFrame, CallMeta};
    ///
    /// let output = ToolOutput::ok(fence(&Source::tool("bash"), "hi"));
    /// let frame = ArtifactFrame::tool_result("t", "bash", &output, CallMeta::new("c", 1));
    /// assert_eq!(frame.fence_source(), Some("tool:bash"));
    /// ```
    #[must_use]
    pub fn fence_source(&self) -> Option<&'a str> {
        self.artifact.fence_source
    }

    /// The frame as one line of compact JSON, keys in wire order.
    ///
    /// # Panics
    ///
    /// Never: a frame holds only strings, integers and booleans, which always serialise.
    ///
    /// ```
    /// use fence_runtime::ModelContent;
    /// use fence_surfaces::ArtifactFrame;
    ///
    /// let json = ArtifactFrame::hook_artifact("t", "h", &ModelContent::hook_artifact("line 1\nline 2")).to_json();
    /// assert!(!json.contains('\n'));
    /// ```
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("an artifact frame always serialises")
    }
}
