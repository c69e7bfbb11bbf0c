//! What the verifier knows about the agent beyond the surfaces: declared skills and tools, and
//! which tool or skill each call id went to.

use std::collections::{BTreeMap, BTreeSet};

use crate::artifact::ParsedFrame;
use crate::record::{ParsedMessage, RecordReport};
use crate::sse::StreamReport;
use crate::trace::{ParsedEvent, TraceReport};

/// What the verifier knows about the agent beyond the surfaces themselves: its declared skills,
/// its declared tools, and which tool or skill each call id went to.
///
/// Without context, every successful call is a tool result (so a skill's result is reported as
/// unfenced) and no failed call is known to be a dispatch failure. See the
/// [crate docs](crate#classifying-a-unit) for the rules.
///
/// ```
/// use fence_surfaces::{read_frame, verify_frame, VerifyContext};
///
/// let skill = read_frame(r#"{"artifact":{"tool_name":"triage","content":"Triage notes","tool_call_id":"c1","is_error":false,"duration_ms":1}}"#)?;
/// let context = VerifyContext::new().with_skills(["triage"]).with_tools(["bash", "web-fetch"]);
/// assert!(verify_frame(&skill, &context).is_empty()); // a skill's doc is never fenced
/// let findings = verify_frame(&skill, &VerifyContext::new());
/// assert_eq!(findings[0].kind.name(), "unfenced-tool-result"); // taken for a tool's result
/// # Ok::<(), fence_surfaces::ReadError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyContext {
    skills: BTreeSet<String>,
    tools: Option<BTreeSet<String>>,
    /// Every name each call id was bound to: more than one is a call id reused.
    calls: BTreeMap<String, BTreeSet<String>>,
    /// The call ids a frame says reached a tool: its subprocess ran (a non-null `exit_code`).
    ran_calls: BTreeSet<String>,
    /// The names a trace says were called as tools (a `tool_call` event's `tool_name`).
    ran_names: BTreeSet<String>,
    /// The names a trace says were called as skills (a `skill_call` event's `skill_name`).
    skill_calls: BTreeSet<String>,
}

impl VerifyContext {
    /// A context that knows nothing about the agent.
    ///
    /// ```
    /// let context = fence_surfaces::VerifyContext::new();
    /// assert!(!context.is_skill("triage"));
    /// ```
    #[must_use]
    pub fn new() -> VerifyContext {
        VerifyContext::default()
    }

    /// Declares skills: their results are never fenced.
    ///
    /// ```
    /// let context = fence_surfaces::VerifyContext::new().with_skills(["triage"]);
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
    /// let context = fence_surfaces::VerifyContext::new().with_tools(["bash"]);
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
    /// let context = fence_surfaces::VerifyContext::new().with_call("toolu_1", "triage");
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
    /// use fence_surfaces::{read_sse, VerifyContext};
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
    /// when it has both; and, when its `exit_code` is not `null`, that the call reached a tool
    /// (a subprocess ran), so a record's result answering it is a tool's, whatever its name.
    /// For a stream read frame by frame ([`SseReader`](crate::SseReader)), so that a record
    /// written by the same runtime can then be classified.
    ///
    /// ```
    /// use fence_surfaces::{read_frame, VerifyContext};
    ///
    /// let frame = read_frame(r#"{"artifact":{"tool_name":"triage","content":"","tool_call_id":"c2"}}"#)?;
    /// let mut context = VerifyContext::new();
    /// context.learn_call_from_frame(&frame);
    /// assert_eq!(context.call_name("c2"), Some("triage"));
    /// # Ok::<(), fence_surfaces::ReadError>(())
    /// ```
    pub fn learn_call_from_frame(&mut self, frame: &ParsedFrame) {
        let artifact = &frame.artifact;
        if let (Some(id), Some(name)) = (artifact.tool_call_id.value(), &artifact.tool_name) {
            self.bind(id.clone(), name.clone());
        }
        if let (Some(id), Some(_)) = (artifact.tool_call_id.value(), artifact.exit_code) {
            self.ran_calls.insert(id.clone());
        }
    }

    /// Learns from a trace which names were called as tools: what
    /// [`learn_call_from_event`](Self::learn_call_from_event) learns from each event.
    ///
    /// ```
    /// use fence_surfaces::{read_record, read_trace, verify_record, VerifyContext};
    ///
    /// let trace = read_trace(br#"{"event_type":"tool_call","tool_name":"triage","output_bytes":0,"status":"ok"}"#);
    /// let record = read_record(b"{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"c1\",\"name\":\"triage\",\"input\":{}}]}\n{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"raw page\"}\n");
    /// let mut context = VerifyContext::new().with_skills(["triage"]);
    /// assert!(verify_record(&record, &context).is_empty()); // the skill's doc, as far as the record says
    /// context.learn_calls_from_trace(&trace);
    /// let findings = verify_record(&record, &context);
    /// let names: Vec<_> = findings.iter().map(|finding| finding.kind.name()).collect();
    /// assert_eq!(names, ["skill-called-as-tool", "unfenced-tool-result"]);
    /// ```
    pub fn learn_calls_from_trace(&mut self, trace: &TraceReport) {
        for item in &trace.items {
            self.learn_call_from_event(&item.value);
        }
    }

    /// Learns from one trace event which name was called as a tool, or as a skill: a
    /// `tool_call`'s `tool_name`, a `skill_call`'s `skill_name`. A trace names no call id, but a
    /// runtime dispatches a call by its name: when the trace calls a name as a tool and never
    /// as a skill, every call to it reached that tool, and a record's result answering one is
    /// the tool's, never a skill's doc. (When it calls a name both ways, which result is whose
    /// is unknown: the results are read by the record's own word, and the trace's `tool_call`
    /// is reported.) For a trace read event by event ([`TraceReader`](crate::TraceReader)).
    ///
    /// ```
    /// use fence_surfaces::{read_trace, VerifyContext};
    ///
    /// let trace = read_trace(br#"{"event_type":"tool_call","tool_name":"bash","output_bytes":0,"status":"ok"}"#);
    /// let mut context = VerifyContext::new();
    /// context.learn_call_from_event(&trace.items[0].value);
    /// # let _ = context;
    /// ```
    pub fn learn_call_from_event(&mut self, event: &ParsedEvent) {
        match event {
            ParsedEvent::ToolCall(call) => {
                self.ran_names.insert(call.tool_name.clone());
            }
            ParsedEvent::SkillCall(call) => {
                self.skill_calls.insert(call.skill_name.clone());
            }
        }
    }

    /// Whether a surface says a call reached a tool: a frame whose subprocess ran names its
    /// id, or a trace calls its name as a tool and never as a skill.
    pub(crate) fn ran_as_tool(&self, tool_call_id: Option<&str>, name: Option<&str>) -> bool {
        tool_call_id.is_some_and(|id| self.ran_calls.contains(id))
            || name.is_some_and(|name| {
                self.ran_names.contains(name) && !self.skill_calls.contains(name)
            })
    }

    /// Learns which tool or skill each call went to from a record's call parts (`tool_use`,
    /// `function_call`): what [`learn_calls_from_message`](Self::learn_calls_from_message)
    /// learns from each line. [`verify_record`](crate::verify_record) does this by itself.
    ///
    /// ```
    /// use fence_surfaces::{read_record, VerifyContext};
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
    /// ([`ParsedMessage::calls`]). [`RecordVerifier::learn`](crate::RecordVerifier::learn) does
    /// this by itself.
    ///
    /// ```
    /// use fence_surfaces::{read_record, VerifyContext};
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
    /// assert!(!fence_surfaces::VerifyContext::new().is_skill("x"));
    /// ```
    #[must_use]
    pub fn is_skill(&self, name: &str) -> bool {
        self.skills.contains(name)
    }

    /// Whether the tools are declared and `name` is neither one of them nor a declared skill.
    ///
    /// ```
    /// assert!(!fence_surfaces::VerifyContext::new().is_undeclared("x"));
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
    /// use fence_surfaces::VerifyContext;
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
    /// use fence_surfaces::VerifyContext;
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
}
