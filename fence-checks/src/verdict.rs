//! What a clean verdict promises: a unit the verifier finds nothing wrong with is safe for a
//! model to read, by the classification table of the `fence-surfaces` crate docs, written out here
//! again and checked with the reference's marker rule and parser.
//!
//! The fuzz targets check the other direction (every finding is true of its unit) finding by
//! finding; this is what catches a finding that is missing: a part that is never read, a label
//! not tied to its tool, a status taken for a failure.

use std::collections::{BTreeMap, BTreeSet};

use fence_reference::{self as reference, CLOSER};
use fence_surfaces::{
    Finding, ParsedArtifact, ParsedEvent, ParsedMessage, Part, RecordReport, StreamReport,
    TraceReport,
};

/// What a unit must be, for the model to read it safely.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Expect {
    /// A tool's result: exactly one block, no live marker but its own opener and final closer,
    /// under `tool:<name>` when the tool's name is known.
    ToolResult(Option<String>),
    /// Never fenced (a skill's doc, a hook artifact, a dispatch failure, the model's text): no
    /// live marker at all.
    Exempt,
    /// A task: fenced (one block, as a tool result but under any source) or trusted (no live
    /// marker).
    Task,
    /// A failed call with no evidence that it ran, or a record line of a role the verifier does
    /// not know: one block (as a tool result, under any source) or no live marker.
    BlockOrPlain,
    /// A unit of no kind (the operator's `system` and `developer` lines): either way.
    Anything,
}

/// The context a verifier was given, written out: declared skills and tools, and known calls.
#[derive(Clone, Debug, Default)]
pub(crate) struct Rules {
    pub(crate) skills: BTreeSet<String>,
    pub(crate) tools: Option<BTreeSet<String>>,
    /// Every name each call id is bound to.
    pub(crate) calls: BTreeMap<String, BTreeSet<String>>,
    /// The call ids a frame whose subprocess ran names.
    pub(crate) ran_calls: BTreeSet<String>,
    /// The names a trace's `tool_call` events name.
    pub(crate) ran_names: BTreeSet<String>,
    /// The names a trace's `skill_call` events name.
    pub(crate) skill_calls: BTreeSet<String>,
}

impl Rules {
    /// Learns the calls a stream's frames name, as `VerifyContext::learn_calls_from_stream`.
    pub(crate) fn learn_from_stream(&mut self, stream: &StreamReport) {
        for item in &stream.items {
            let artifact = &item.value.frame.artifact;
            if let (Some(id), Some(name)) = (artifact.tool_call_id.value(), &artifact.tool_name) {
                self.bind(id, name);
            }
            if let (Some(id), Some(_)) = (artifact.tool_call_id.value(), artifact.exit_code) {
                self.ran_calls.insert(id.clone());
            }
        }
    }

    /// Learns the names a trace says were called as tools, as
    /// `VerifyContext::learn_calls_from_trace`.
    pub(crate) fn learn_from_trace(&mut self, trace: &TraceReport) {
        for item in &trace.items {
            match &item.value {
                ParsedEvent::ToolCall(call) => {
                    self.ran_names.insert(call.tool_name.clone());
                }
                ParsedEvent::SkillCall(call) => {
                    self.skill_calls.insert(call.skill_name.clone());
                }
                _ => {}
            }
        }
    }

    /// Whether a result answering call `id` to `name` in `message` is a tool's whatever the
    /// name: a Responses item of a tool's type, a call a frame says ran, or a call to a name a
    /// trace calls as a tool and never as a skill.
    fn ran(&self, message: &ParsedMessage, id: Option<&str>, name: Option<&str>) -> bool {
        matches!(
            message.item.as_deref(),
            Some("mcp_call" | "local_shell_call_output" | "computer_call_output")
        ) || id.is_some_and(|id| self.ran_calls.contains(id))
            || name.is_some_and(|name| {
                self.ran_names.contains(name) && !self.skill_calls.contains(name)
            })
    }

    /// The result of a call to `name` that ran: a tool's, or a failed call's.
    fn ran_call(is_error: Option<bool>, name: Option<&str>) -> Expect {
        if is_error == Some(true) {
            Expect::BlockOrPlain
        } else {
            Expect::ToolResult(name.map(String::from))
        }
    }

    /// The skill whose name a record line's result (or its part's) answers a call to, when
    /// that call ran as a tool: a skill called as a tool.
    pub(crate) fn skill_ran(&self, message: &ParsedMessage, part: Option<&Part>) -> Option<String> {
        let tool_line = matches!(role(message), "tool" | "function");
        let part_id = match part {
            Some(Part::ToolResult { tool_call_id, .. }) => tool_call_id.as_deref(),
            Some(_) => return None,
            None => None,
        };
        let (id, name) = match part_id {
            Some(id) => (Some(id), self.call_name(id)),
            None if tool_line => (message.tool_call_id.as_deref(), self.line_call(message)),
            None => return None,
        };
        name.filter(|name| self.skills.contains(*name) && self.ran(message, id, Some(*name)))
            .map(String::from)
    }

    /// Learns the calls a record's lines name (call parts and `tool_calls` lists, as the
    /// reader read them), as `verify_record` does before it checks.
    pub(crate) fn learn_from_record(&mut self, record: &RecordReport) {
        for (id, name) in record.items.iter().flat_map(|line| line.value.calls()) {
            self.bind(id, name);
        }
    }

    /// Binds call `id` to `name`, alongside any name it has.
    pub(crate) fn bind(&mut self, id: &str, name: &str) {
        self.calls
            .entry(id.to_owned())
            .or_default()
            .insert(name.to_owned());
    }

    /// The name a call went to: of a reused id's names, never a skill's while one is not.
    fn call_name(&self, id: &str) -> Option<&str> {
        let names = self.calls.get(id)?;
        names
            .iter()
            .find(|name| !self.skills.contains(*name))
            .or_else(|| names.first())
            .map(String::as_str)
    }

    fn is_skill(&self, name: Option<&str>) -> bool {
        name.is_some_and(|name| self.skills.contains(name))
    }

    /// The result of a call to `name`: a skill's doc; a tool's result unless it failed; a
    /// failed call, which is a dispatch failure when the tools are declared and `name` is not
    /// among them.
    fn call(&self, name: Option<&str>, is_error: Option<bool>) -> Expect {
        if self.is_skill(name) {
            Expect::Exempt
        } else if is_error != Some(true) {
            Expect::ToolResult(name.map(String::from))
        } else if name.is_some_and(|name| {
            self.tools
                .as_ref()
                .is_some_and(|tools| !tools.contains(name))
        }) {
            Expect::Exempt
        } else {
            Expect::BlockOrPlain
        }
    }

    /// An artifact frame: a hook artifact when all four of its call fields say so; a tool's
    /// result when a subprocess ran, whatever its name.
    pub(crate) fn frame(&self, artifact: &ParsedArtifact) -> Expect {
        let name = artifact.tool_name.as_deref();
        let hook = artifact.tool_call_id.is_null()
            && artifact.duration_ms.is_null()
            && artifact.exit_code.is_none()
            && artifact.is_error == Some(false);
        if hook {
            Expect::Exempt
        } else if artifact.exit_code.is_some() {
            Expect::ToolResult(name.map(String::from))
        } else if self.is_skill(name) {
            Expect::Exempt
        } else {
            self.call(name, artifact.is_error)
        }
    }

    fn line_call<'a>(&'a self, message: &'a ParsedMessage) -> Option<&'a str> {
        message
            .tool_call_id
            .as_deref()
            .and_then(|id| self.call_name(id))
            .or(message.name.as_deref())
    }

    /// A record line's own text, when the line has a text unit of its own.
    pub(crate) fn line(&self, message: &ParsedMessage) -> Option<Expect> {
        let has_text = message
            .content
            .iter()
            .any(|part| matches!(part, Part::Text(_)));
        let has_results = message
            .content
            .iter()
            .any(|part| matches!(part, Part::ToolResult { .. }));
        if !has_text && has_results && message.fence.source().is_none() {
            return None;
        }
        // A screenshot is an image: no text to fence.
        if !has_text
            && message.item.as_deref() == Some("computer_call_output")
            && message.fence.source().is_none()
        {
            return None;
        }
        Some(match role(message) {
            "tool" | "function" => {
                let name = self.line_call(message);
                if self.ran(message, message.tool_call_id.as_deref(), name) {
                    Self::ran_call(message.is_error, name)
                } else {
                    self.call(name, message.is_error)
                }
            }
            "assistant" => Expect::Exempt,
            "user" => Expect::Task,
            "system" | "developer" => Expect::Anything,
            _ => Expect::BlockOrPlain,
        })
    }

    /// A tool result carried as a part of a record line.
    pub(crate) fn part(&self, message: &ParsedMessage, part: &Part) -> Expect {
        let Part::ToolResult {
            tool_call_id,
            is_error,
            ..
        } = part
        else {
            return Expect::Anything;
        };
        let tool_line = matches!(role(message), "tool" | "function");
        let is_error = is_error.or(if tool_line { message.is_error } else { None });
        let (id, name) = match tool_call_id {
            Some(id) => (Some(id.as_str()), self.call_name(id)),
            None if tool_line => (message.tool_call_id.as_deref(), self.line_call(message)),
            None => (None, None),
        };
        if self.ran(message, id, name) {
            Self::ran_call(is_error, name)
        } else {
            self.call(name, is_error)
        }
    }

    /// A trace event's output: a `tool_call` is a tool's, even under a skill's name.
    pub(crate) fn event(&self, event: &ParsedEvent) -> Expect {
        match event {
            ParsedEvent::ToolCall(call) if call.status == "error" => {
                if self.is_skill(Some(&call.tool_name)) {
                    Expect::BlockOrPlain
                } else {
                    self.call(Some(&call.tool_name), Some(true))
                }
            }
            ParsedEvent::ToolCall(call) => Expect::ToolResult(Some(call.tool_name.clone())),
            _ => Expect::Exempt,
        }
    }
}

/// The role a record line is held to: `user`, `assistant`, `tool` and `function` lowercased,
/// with ASCII whitespace around them dropped, as lenient readers take them; any other role as
/// written (so `SYSTEM` is no `system` line).
fn role(message: &ParsedMessage) -> &str {
    let folded = message
        .role
        .trim_matches(|c: char| c.is_ascii_whitespace())
        .to_ascii_lowercase();
    match folded.as_str() {
        "user" => "user",
        "assistant" => "assistant",
        "tool" => "tool",
        "function" => "function",
        _ => &message.role,
    }
}

/// Panics unless `text` is what `expect` says it must be; `what` names the unit.
pub(crate) fn assert_safe(text: &str, expect: &Expect, what: &dyn Fn() -> String) {
    let markers = reference::markers(text.as_bytes());
    let one_block = || reference::parse(text).is_ok() && markers == [0, text.len() - CLOSER.len()];
    match expect {
        Expect::ToolResult(tool) => {
            assert!(
                one_block(),
                "{} verifies clean, but is not one block: {text:?}",
                what()
            );
            if let Some(tool) = tool {
                let (source, _) = reference::parse(text).expect("one block");
                let expected = format!("tool:{}", reference::sanitise(tool));
                assert_eq!(
                    source,
                    expected,
                    "{} verifies clean, but is not fenced under its tool",
                    what()
                );
            }
        }
        Expect::Exempt => assert!(
            markers.is_empty(),
            "{} verifies clean, but carries live markers at {markers:?}: {text:?}",
            what()
        ),
        Expect::Task | Expect::BlockOrPlain => assert!(
            markers.is_empty() || one_block(),
            "{} verifies clean, but its markers make no block: {text:?}",
            what()
        ),
        Expect::Anything => {}
    }
}

/// Whether a finding is about the unit at `line` (and `part`).
fn at(findings: &[Finding], line: usize, part: Option<usize>) -> bool {
    findings
        .iter()
        .any(|finding| finding.location.line == line && finding.location.part == part)
}

/// Every frame of `stream` with no finding is safe.
pub(crate) fn clean_frames_are_safe(stream: &StreamReport, findings: &[Finding], rules: &Rules) {
    for item in &stream.items {
        if !at(findings, item.line, None) {
            let artifact = &item.value.frame.artifact;
            let what = || format!("the frame at line {}", item.line);
            assert_safe(&artifact.content, &rules.frame(artifact), &what);
            let cut_short = reference::parse(&artifact.content).is_ok_and(|(_, content)| {
                content
                    .strip_suffix(fence_runtime::TRUNCATION_NOTICE)
                    .is_some_and(|before| before.ends_with('\n'))
            });
            assert!(
                !(cut_short && artifact.truncated == Some(false)),
                "{} verifies clean, but says `truncated: false` of a block cut short",
                what()
            );
        }
    }
}

/// Every line of `record`, and every tool result part, with no finding is safe. `rules` holds
/// the calls the record's own call parts name.
pub(crate) fn clean_lines_are_safe(record: &RecordReport, findings: &[Finding], rules: &Rules) {
    for item in &record.items {
        let message = &item.value;
        if let Some(expect) = rules
            .line(message)
            .filter(|_| !at(findings, item.line, None))
        {
            let what = || format!("the record line {}", item.line);
            assert_safe(&message.text(), &expect, &what);
        }
        for (index, part) in message.content.iter().enumerate() {
            if !matches!(part, Part::ToolResult { .. }) || at(findings, item.line, Some(index)) {
                continue;
            }
            if let Some(text) = part.text() {
                let what = || format!("content[{index}] of the record line {}", item.line);
                assert_safe(&text, &rules.part(message, part), &what);
            }
        }
    }
}

/// Every event of `trace` with an output and no finding is safe, and counts its bytes right.
pub(crate) fn clean_events_are_safe(trace: &TraceReport, findings: &[Finding], rules: &Rules) {
    for item in &trace.items {
        let (output, output_bytes) = match &item.value {
            ParsedEvent::ToolCall(call) => (call.output.as_deref(), call.output_bytes),
            ParsedEvent::SkillCall(call) => (call.output.as_deref(), call.output_bytes),
            _ => (None, 0),
        };
        if let Some(output) = output.filter(|_| !at(findings, item.line, None)) {
            let what = || format!("the trace event at line {}", item.line);
            assert_safe(output, &rules.event(&item.value), &what);
            assert_eq!(
                output.len() as u64,
                output_bytes,
                "{}: output_bytes",
                what()
            );
        }
    }
}
