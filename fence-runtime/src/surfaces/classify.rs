//! What a unit of a surface is: the rules that decide whether it must be fenced, and the
//! context they draw on.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::string::String;

use super::artifact::{ParsedArtifact, ParsedFrame};
use super::record::{ParsedMessage, Part, RecordReport};
use super::sse::StreamReport;
use super::trace::ParsedToolCall;
use crate::content::Exemption;

/// What a unit of a surface is, which decides whether it must be fenced.
///
/// ```
/// use fence_runtime::surfaces::ResultKind;
/// use fence_runtime::Exemption;
///
/// assert_eq!(ResultKind::HookArtifact.exemption(), Some(Exemption::HookArtifact));
/// assert_eq!(ResultKind::ToolResult.exemption(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ResultKind {
    /// The result of a call that reached a tool: must be fenced, under `tool:<its name>`.
    ToolResult,
    /// A declared skill's `skill.md`: never fenced.
    SkillResult,
    /// A hook artifact: never fenced.
    HookArtifact,
    /// A failed call to a name that is neither a declared tool nor a declared skill: it never
    /// reached a tool, and is never fenced.
    DispatchFailure,
    /// A failed call with no evidence that it ran: a tool that failed (fenced) or a refusal or
    /// dispatch failure (unfenced). Either is accepted, and nothing else: exactly one valid
    /// block, or text with no live marker.
    FailedCall,
    /// The model's own text (an `assistant` line): never fenced.
    ModelText,
    /// A task payload (a `user` line): one valid block when untrusted, the trusted-task
    /// exemption (plain text) when trusted; anything between the two is a finding.
    Task,
    /// A line of a role the verifier does not know (`ipython`, `Tool`, …): it may be a tool's
    /// result or anyone's text, so it is checked as a [`FailedCall`](Self::FailedCall) is:
    /// exactly one valid block, or text with no live marker.
    UnknownRole,
    /// Not checked for a fence: a `system` or `developer` line, the operator's own
    /// instructions.
    NotAResult,
}

impl ResultKind {
    /// The exemption a never-fenced kind falls under.
    ///
    /// ```
    /// use fence_runtime::surfaces::ResultKind;
    /// use fence_runtime::Exemption;
    ///
    /// assert_eq!(ResultKind::SkillResult.exemption(), Some(Exemption::SkillDoc));
    /// assert_eq!(ResultKind::ModelText.exemption(), Some(Exemption::ModelText));
    /// assert_eq!(ResultKind::FailedCall.exemption(), None);
    /// ```
    #[must_use]
    pub fn exemption(self) -> Option<Exemption> {
        match self {
            ResultKind::SkillResult => Some(Exemption::SkillDoc),
            ResultKind::HookArtifact => Some(Exemption::HookArtifact),
            ResultKind::DispatchFailure => Some(Exemption::DispatchFailure),
            ResultKind::ModelText => Some(Exemption::ModelText),
            ResultKind::ToolResult
            | ResultKind::FailedCall
            | ResultKind::Task
            | ResultKind::UnknownRole
            | ResultKind::NotAResult => None,
        }
    }

    /// Whether the kind is a call's result that a tool produced, or may have: its fence must
    /// then be the tool's own.
    pub(crate) fn may_be_tool_output(self) -> bool {
        matches!(self, ResultKind::ToolResult | ResultKind::FailedCall)
    }
}

/// The roles of a record line the verifier knows.
pub(crate) const KNOWN_ROLES: [&str; 6] = [
    "user",
    "assistant",
    "tool",
    "function",
    "system",
    "developer",
];

/// What the verifier knows about the agent beyond the surfaces themselves: its declared skills,
/// its declared tools, and which tool or skill each call id went to.
///
/// Without context, every successful call is a tool result (so a skill's result is reported as
/// unfenced) and no failed call is known to be a dispatch failure. See the
/// [module docs](super#classifying-a-unit) for the rules.
///
/// ```
/// use fence_runtime::surfaces::{read_frame, ResultKind, VerifyContext};
///
/// let context = VerifyContext::new().with_skills(["triage"]).with_tools(["bash", "web-fetch"]);
/// let skill = read_frame(r#"{"artifact":{"tool_name":"triage","content":"Triage notes","tool_call_id":"c1","is_error":false,"duration_ms":1}}"#)?;
/// assert_eq!(context.classify_frame(&skill.artifact), ResultKind::SkillResult);
/// let failure = read_frame(r#"{"artifact":{"tool_name":"nope","content":"not declared","tool_call_id":"c2","is_error":true,"duration_ms":0}}"#)?;
/// assert_eq!(context.classify_frame(&failure.artifact), ResultKind::DispatchFailure);
/// # Ok::<(), fence_runtime::surfaces::ReadError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyContext {
    skills: BTreeSet<String>,
    tools: Option<BTreeSet<String>>,
    /// Every name each call id was bound to: more than one is a call id reused.
    calls: BTreeMap<String, BTreeSet<String>>,
}

impl VerifyContext {
    /// A context that knows nothing about the agent.
    ///
    /// ```
    /// let context = fence_runtime::surfaces::VerifyContext::new();
    /// assert!(!context.is_skill("triage"));
    /// ```
    #[must_use]
    pub fn new() -> VerifyContext {
        VerifyContext::default()
    }

    /// Declares skills: their results are never fenced.
    ///
    /// ```
    /// let context = fence_runtime::surfaces::VerifyContext::new().with_skills(["triage"]);
    /// assert!(context.is_skill("triage"));
    /// ```
    #[must_use]
    pub fn with_skills<I, S>(mut self, skills: I) -> VerifyContext
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.skills.extend(skills.into_iter().map(Into::into));
        self
    }

    /// Declares the agent's tools (the manifest allowlist, plus any tools of the runtime's
    /// own). A failed call to a name that is neither a declared tool nor a declared skill never
    /// reached a tool. Without this, no call is known to be a dispatch failure.
    ///
    /// ```
    /// let context = fence_runtime::surfaces::VerifyContext::new().with_tools(["bash"]);
    /// assert!(context.is_undeclared("no-such-tool"));
    /// assert!(!context.is_undeclared("bash"));
    /// ```
    #[must_use]
    pub fn with_tools<I, S>(mut self, tools: I) -> VerifyContext
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools
            .get_or_insert_with(BTreeSet::new)
            .extend(tools.into_iter().map(Into::into));
        self
    }

    /// Records that call `tool_call_id` went to `name`, so a record's `tool` line answering it
    /// can be classified, and its fence checked against the tool's source.
    ///
    /// ```
    /// let context = fence_runtime::surfaces::VerifyContext::new().with_call("toolu_1", "triage");
    /// assert_eq!(context.call_name("toolu_1"), Some("triage"));
    /// ```
    #[must_use]
    pub fn with_call(
        mut self,
        tool_call_id: impl Into<String>,
        name: impl Into<String>,
    ) -> VerifyContext {
        self.bind(tool_call_id.into(), name.into());
        self
    }

    /// Binds call `id` to `name`, alongside any name it is bound to already.
    fn bind(&mut self, id: String, name: String) {
        self.calls.entry(id).or_default().insert(name);
    }

    /// Learns which tool or skill each call went to from an artifact stream's frames: what
    /// [`learn_call_from_frame`](Self::learn_call_from_frame) learns from each.
    ///
    /// ```
    /// use fence_runtime::surfaces::{read_sse, VerifyContext};
    ///
    /// let stream = read_sse(b"event: artifact\ndata: {\"artifact\":{\"tool_name\":\"bash\",\"content\":\"\",\"tool_call_id\":\"c1\"}}\n\n");
    /// let mut context = VerifyContext::new();
    /// context.learn_calls_from_stream(&stream);
    /// assert_eq!(context.call_name("c1"), Some("bash"));
    /// ```
    pub fn learn_calls_from_stream(&mut self, stream: &StreamReport) {
        for item in &stream.items {
            self.learn_call_from_frame(&item.value.frame);
        }
    }

    /// Learns which tool or skill a frame's call went to: its `tool_call_id` and `tool_name`,
    /// when it has both. For a stream read frame by frame ([`SseReader`](super::SseReader)),
    /// so that a record written by the same runtime can then be classified.
    ///
    /// ```
    /// use fence_runtime::surfaces::{read_frame, VerifyContext};
    ///
    /// let frame = read_frame(r#"{"artifact":{"tool_name":"triage","content":"","tool_call_id":"c2"}}"#)?;
    /// let mut context = VerifyContext::new();
    /// context.learn_call_from_frame(&frame);
    /// assert_eq!(context.call_name("c2"), Some("triage"));
    /// # Ok::<(), fence_runtime::surfaces::ReadError>(())
    /// ```
    pub fn learn_call_from_frame(&mut self, frame: &ParsedFrame) {
        let artifact = &frame.artifact;
        if let (Some(id), Some(name)) = (artifact.tool_call_id.value(), &artifact.tool_name) {
            self.bind(id.clone(), name.clone());
        }
    }

    /// Learns which tool or skill each call went to from a record's call parts (`tool_use`,
    /// `function_call`): what [`learn_calls_from_message`](Self::learn_calls_from_message)
    /// learns from each line. [`verify_record`](super::verify_record) does this by itself.
    ///
    /// ```
    /// use fence_runtime::surfaces::{read_record, VerifyContext};
    ///
    /// let record = read_record(br#"{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"triage","input":{}}]}"#);
    /// let mut context = VerifyContext::new();
    /// context.learn_calls_from_record(&record);
    /// assert_eq!(context.call_name("c1"), Some("triage"));
    /// ```
    pub fn learn_calls_from_record(&mut self, record: &RecordReport) {
        for line in &record.items {
            self.learn_calls_from_message(&line.value);
        }
    }

    /// Learns which tool or skill each call of one record line went to: its `tool_use` and
    /// `function_call` parts, and the chat-completions format's `tool_calls`
    /// ([`ParsedMessage::calls`]). [`RecordVerifier::learn`](super::RecordVerifier::learn) does
    /// this by itself.
    ///
    /// ```
    /// use fence_runtime::surfaces::{read_record, VerifyContext};
    ///
    /// let record = read_record(br#"{"role":"assistant","content":[{"type":"function_call","call_id":"c3","name":"bash","arguments":"{}"}]}"#);
    /// let mut context = VerifyContext::new();
    /// context.learn_calls_from_message(&record.items[0].value);
    /// assert_eq!(context.call_name("c3"), Some("bash"));
    /// ```
    pub fn learn_calls_from_message(&mut self, message: &ParsedMessage) {
        for (id, name) in message.calls() {
            self.bind(id.into(), name.into());
        }
    }

    /// Whether `name` is a declared skill.
    ///
    /// ```
    /// assert!(!fence_runtime::surfaces::VerifyContext::new().is_skill("x"));
    /// ```
    #[must_use]
    pub fn is_skill(&self, name: &str) -> bool {
        self.skills.contains(name)
    }

    /// Whether the tools are declared and `name` is neither one of them nor a declared skill.
    ///
    /// ```
    /// assert!(!fence_runtime::surfaces::VerifyContext::new().is_undeclared("x"));
    /// ```
    #[must_use]
    pub fn is_undeclared(&self, name: &str) -> bool {
        self.tools
            .as_ref()
            .is_some_and(|tools| !tools.contains(name) && !self.is_skill(name))
    }

    /// The tool or skill a call went to, when known. A call id bound to more than one name (a
    /// call id reused, which the verifier reports) is never taken for a skill's while one of its
    /// names is not a declared skill: of its names, the first in byte order that is not a
    /// skill, else the first.
    ///
    /// ```
    /// use fence_runtime::surfaces::VerifyContext;
    ///
    /// assert_eq!(VerifyContext::new().call_name("c"), None);
    /// let reused = VerifyContext::new().with_skills(["a-skill"]).with_call("c", "a-skill").with_call("c", "web-fetch");
    /// assert_eq!(reused.call_name("c"), Some("web-fetch"));
    /// ```
    pub fn call_name(&self, tool_call_id: &str) -> Option<&str> {
        let names = self.calls.get(tool_call_id)?;
        names
            .iter()
            .find(|name| !self.is_skill(name))
            .or_else(|| names.first())
            .map(String::as_str)
    }

    /// Every name call `tool_call_id` was bound to (by [`with_call`](Self::with_call) or
    /// learned from a surface), in byte order: more than one is a call id reused.
    ///
    /// ```
    /// use fence_runtime::surfaces::VerifyContext;
    ///
    /// let context = VerifyContext::new().with_call("c1", "bash").with_call("c1", "triage");
    /// assert_eq!(context.call_names("c1").collect::<Vec<_>>(), ["bash", "triage"]);
    /// assert_eq!(context.call_names("c2").count(), 0);
    /// ```
    pub fn call_names(&self, tool_call_id: &str) -> impl Iterator<Item = &str> {
        self.calls
            .get(tool_call_id)
            .into_iter()
            .flatten()
            .map(String::as_str)
    }

    /// A name other than `name` that call `tool_call_id` is bound to, if any: the call id is
    /// then bound to two names.
    pub(crate) fn other_name(&self, tool_call_id: &str, name: &str) -> Option<&str> {
        self.call_names(tool_call_id).find(|bound| *bound != name)
    }

    /// Classifies an artifact frame. In order: a hook artifact has `tool_call_id` and
    /// `duration_ms` both `null`, `exit_code` `null` and `is_error` `false` (all four; a frame
    /// with only some of them is not one); a non-null `exit_code` (a subprocess ran) is a tool
    /// result, even under a declared skill's name (which the verifier reports); a declared
    /// skill's name is a skill result; an `is_error` that is not `true` is a tool result; a
    /// failed call to an undeclared name is a dispatch failure; any other failed call is a
    /// [`ResultKind::FailedCall`].
    ///
    /// ```
    /// use fence_runtime::surfaces::{read_frame, ResultKind, VerifyContext};
    ///
    /// let hook = read_frame(r#"{"artifact":{"tool_name":"lint","content":"ok","tool_call_id":null,"is_error":false,"duration_ms":null,"exit_code":null}}"#)?;
    /// assert_eq!(VerifyContext::new().classify_frame(&hook.artifact), ResultKind::HookArtifact);
    /// let ran = read_frame(r#"{"artifact":{"tool_name":"bash","content":"x","tool_call_id":null,"is_error":false,"duration_ms":null,"exit_code":0}}"#)?;
    /// assert_eq!(VerifyContext::new().classify_frame(&ran.artifact), ResultKind::ToolResult);
    /// # Ok::<(), fence_runtime::surfaces::ReadError>(())
    /// ```
    #[must_use]
    pub fn classify_frame(&self, artifact: &ParsedArtifact) -> ResultKind {
        let name = artifact.tool_name.as_deref();
        if has_hook_ids(artifact)
            && artifact.exit_code.is_none()
            && artifact.is_error == Some(false)
        {
            ResultKind::HookArtifact
        } else if artifact.exit_code.is_some() {
            ResultKind::ToolResult
        } else if name.is_some_and(|name| self.is_skill(name)) {
            ResultKind::SkillResult
        } else {
            self.call_result(name, artifact.is_error)
        }
    }

    /// Classifies a record line's own text (its text parts). A `tool` (or legacy `function`)
    /// line answering a call to a declared skill is a skill result; one whose `is_error` is not
    /// `true` is a tool result; a failed call to an undeclared name is a dispatch failure; any
    /// other failed call is a [`ResultKind::FailedCall`]. An `assistant` line is the model's own
    /// text, a `user` line a task, a `system` or `developer` line the operator's own text (not
    /// checked); any other role is [`ResultKind::UnknownRole`]. The call's name comes from the
    /// context (see [`with_call`](Self::with_call)), else from the line's `name`.
    ///
    /// ```
    /// use fence_runtime::surfaces::{read_record, ResultKind, VerifyContext};
    ///
    /// let record = read_record(br#"{"role":"tool","tool_call_id":"c1","is_error":false,"content":[]}"#);
    /// let context = VerifyContext::new().with_skills(["triage"]).with_call("c1", "triage");
    /// assert_eq!(context.classify_message(&record.items[0].value), ResultKind::SkillResult);
    /// assert_eq!(VerifyContext::new().classify_message(&record.items[0].value), ResultKind::ToolResult);
    /// ```
    #[must_use]
    pub fn classify_message(&self, message: &ParsedMessage) -> ResultKind {
        match message.role.as_str() {
            "tool" | "function" => self.call_result(self.line_call(message), message.is_error),
            "assistant" => ResultKind::ModelText,
            "user" => ResultKind::Task,
            "system" | "developer" => ResultKind::NotAResult,
            _ => ResultKind::UnknownRole,
        }
    }

    /// Classifies a tool result carried as a part of `message` (a `tool_result` or
    /// `function_call_output` part) by the same rules as a `tool` line; on a `tool` line, a
    /// part with no call id or no `is_error` of its own takes the line's. Any other part is
    /// [`ResultKind::NotAResult`].
    ///
    /// ```
    /// use fence_runtime::surfaces::{read_record, ResultKind, VerifyContext};
    ///
    /// let record = read_record(br#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"x"},{"type":"text","text":"y"}]}"#);
    /// let line = &record.items[0].value;
    /// assert_eq!(VerifyContext::new().classify_part(line, &line.content[0]), ResultKind::ToolResult);
    /// assert_eq!(VerifyContext::new().classify_part(line, &line.content[1]), ResultKind::NotAResult);
    /// ```
    #[must_use]
    pub fn classify_part(&self, message: &ParsedMessage, part: &Part) -> ResultKind {
        match part {
            Part::ToolResult { is_error, .. } => {
                let is_error = is_error.or(if is_tool_line(message) {
                    message.is_error
                } else {
                    None
                });
                self.call_result(self.part_call(message, part), is_error)
            }
            _ => ResultKind::NotAResult,
        }
    }

    /// Classifies a `tool_call` trace event. The trace says a tool was called (a skill's call is
    /// a `skill_call`), so a declared skill's name makes no skill result here (the verifier
    /// reports it): status `error` is a failed call — a dispatch failure when the name is
    /// undeclared, else a [`ResultKind::FailedCall`]; any other status, `ok` or one the
    /// verifier does not know, is a tool result.
    ///
    /// ```
    /// use fence_runtime::surfaces::{read_trace, ParsedEvent, ResultKind, VerifyContext};
    ///
    /// let trace = read_trace(br#"{"event_type":"tool_call","tool_name":"x","output_bytes":0,"status":"error"}"#);
    /// let ParsedEvent::ToolCall(call) = &trace.items[0].value else { panic!() };
    /// assert_eq!(VerifyContext::new().with_tools(["bash"]).classify_tool_call(call), ResultKind::DispatchFailure);
    /// assert_eq!(VerifyContext::new().classify_tool_call(call), ResultKind::FailedCall);
    /// ```
    #[must_use]
    pub fn classify_tool_call(&self, call: &ParsedToolCall) -> ResultKind {
        if call.status == "error" {
            self.failed_call(Some(&call.tool_name))
        } else {
            ResultKind::ToolResult
        }
    }

    /// The name of the tool or skill a `tool` line answers: from the context, else the line's
    /// own `name`.
    pub(crate) fn line_call<'a>(&'a self, message: &'a ParsedMessage) -> Option<&'a str> {
        message
            .tool_call_id
            .as_deref()
            .and_then(|id| self.call_name(id))
            .or(message.name.as_deref())
    }

    /// The name of the tool or skill a tool result part answers.
    pub(crate) fn part_call<'a>(
        &'a self,
        message: &'a ParsedMessage,
        part: &'a Part,
    ) -> Option<&'a str> {
        let Part::ToolResult { tool_call_id, .. } = part else {
            return None;
        };
        match tool_call_id {
            Some(id) => self.call_name(id),
            None if is_tool_line(message) => self.line_call(message),
            None => None,
        }
    }

    fn call_result(&self, name: Option<&str>, is_error: Option<bool>) -> ResultKind {
        if name.is_some_and(|name| self.is_skill(name)) {
            ResultKind::SkillResult
        } else if is_error != Some(true) {
            ResultKind::ToolResult
        } else {
            self.failed_call(name)
        }
    }

    fn failed_call(&self, name: Option<&str>) -> ResultKind {
        if name.is_some_and(|name| self.is_undeclared(name)) {
            ResultKind::DispatchFailure
        } else {
            ResultKind::FailedCall
        }
    }
}

/// Whether a frame's `tool_call_id` and `duration_ms` are both `null`, as on a hook artifact
/// (absent is not `null`: a frame from an older runtime says nothing about hooks).
pub(crate) fn has_hook_ids(artifact: &ParsedArtifact) -> bool {
    artifact.tool_call_id.is_null() && artifact.duration_ms.is_null()
}

/// Whether a record line is a tool's result as a whole.
pub(crate) fn is_tool_line(message: &ParsedMessage) -> bool {
    matches!(message.role.as_str(), "tool" | "function")
}
