//! What a unit of a surface is: the rules that decide whether it must be fenced.
//!
//! The rules are the table of the [crate docs](crate#classifying-a-unit). They are private: the
//! verifier applies them, and its findings are what a caller sees.

use fence_runtime::Exemption;

use crate::artifact::ParsedArtifact;
use crate::context::VerifyContext;
use crate::record::{ParsedMessage, Part};
use crate::trace::ParsedToolCall;

/// What a unit of a surface is, which decides whether it must be fenced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ResultKind {
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
    /// A line of a role the verifier does not know (`ipython`, `System`, …): it may be a tool's
    /// result or anyone's text, so it is checked as a [`FailedCall`](Self::FailedCall) is:
    /// exactly one valid block, or text with no live marker.
    UnknownRole,
    /// Not checked for a fence: a `system` or `developer` line, the operator's own
    /// instructions.
    NotAResult,
}

impl ResultKind {
    /// The exemption a never-fenced kind falls under.
    #[must_use]
    pub(crate) fn exemption(self) -> Option<Exemption> {
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

/// The known role a record line's `role` names, as the most lenient reader takes it: exactly
/// one of [`KNOWN_ROLES`], or `user`, `assistant`, `tool` or `function` in any ASCII casing
/// with ASCII whitespace around it (`Tool`, `" USER "`). Strict readers (the providers' APIs,
/// serde enums) refuse those spellings, but readers that fold them (proxies that normalise
/// roles, UIs, chat templates that print the role as written) hand the line to the model as
/// what it spells, so the verifier holds it to that role's rule: an unfenced tool result under
/// `Tool` is one. `system` and `developer` go unchecked only as written: in another spelling
/// they are an unknown role, checked, so folding never lets a line go unread. `None` for a role
/// the verifier does not know.
pub(crate) fn known_role(role: &str) -> Option<&'static str> {
    if let Some(known) = KNOWN_ROLES.into_iter().find(|known| *known == role) {
        return Some(known);
    }
    let folded = role.trim_ascii();
    ["user", "assistant", "tool", "function"]
        .into_iter()
        .find(|known| folded.eq_ignore_ascii_case(known))
}

impl VerifyContext {
    /// Classifies an artifact frame. In order: a hook artifact has `tool_call_id` and
    /// `duration_ms` both `null`, `exit_code` `null` and `is_error` `false` (all four; a frame
    /// with only some of them is not one); a non-null `exit_code` (a subprocess ran) is a tool
    /// result, even under a declared skill's name (which the verifier reports); a declared
    /// skill's name is a skill result; an `is_error` that is not `true` is a tool result; a
    /// failed call to an undeclared name is a dispatch failure; any other failed call is a
    /// [`ResultKind::FailedCall`].
    #[must_use]
    pub(crate) fn classify_frame(&self, artifact: &ParsedArtifact) -> ResultKind {
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
    /// line answering a call the surfaces say reached a tool (see [`line_ran`](Self::line_ran))
    /// is a tool result, or a [`ResultKind::FailedCall`] when it failed; otherwise one
    /// answering a call to a declared skill is a skill result; one whose `is_error` is not
    /// `true` is a tool result; a failed call to an undeclared name is a dispatch failure; any
    /// other failed call is a [`ResultKind::FailedCall`]. An `assistant` line is the model's own
    /// text, a `user` line a task, a `system` or `developer` line the operator's own text (not
    /// checked); any other role is [`ResultKind::UnknownRole`]. A role is read as
    /// [`known_role`] reads it, so `Tool` is a `tool` line. The call's name comes from the
    /// context (see [`with_call`](Self::with_call)), else from the line's `name`.
    #[must_use]
    pub(crate) fn classify_message(&self, message: &ParsedMessage) -> ResultKind {
        match known_role(&message.role) {
            Some("tool" | "function") => {
                let name = self.line_call(message);
                if self.line_ran(message, name) {
                    ran_result(message.is_error)
                } else {
                    self.call_result(name, message.is_error)
                }
            }
            Some("assistant") => ResultKind::ModelText,
            Some("user") => ResultKind::Task,
            Some("system" | "developer") => ResultKind::NotAResult,
            _ => ResultKind::UnknownRole,
        }
    }

    /// Classifies a tool result carried as a part of `message` (a `tool_result` or
    /// `function_call_output` part) by the same rules as a `tool` line; on a `tool` line, a
    /// part with no call id or no `is_error` of its own takes the line's. Any other part is
    /// [`ResultKind::NotAResult`].
    #[must_use]
    pub(crate) fn classify_part(&self, message: &ParsedMessage, part: &Part) -> ResultKind {
        match part {
            Part::ToolResult { is_error, .. } => {
                let is_error = is_error.or(if is_tool_line(message) {
                    message.is_error
                } else {
                    None
                });
                let name = self.part_call(message, part);
                if self.part_ran(message, part, name) {
                    ran_result(is_error)
                } else {
                    self.call_result(name, is_error)
                }
            }
            _ => ResultKind::NotAResult,
        }
    }

    /// Whether the surfaces say the call a `tool` line answers reached a tool, whatever its
    /// name: the line is a Responses item that is a tool's by its type (an `mcp_call`, a
    /// `local_shell_call_output`, a `computer_call_output`), a frame whose subprocess ran names
    /// its call id, or a trace calls its name as a tool and never as a skill.
    pub(crate) fn line_ran(&self, message: &ParsedMessage, name: Option<&str>) -> bool {
        is_tool_item(message) || self.ran_as_tool(message.tool_call_id.as_deref(), name)
    }

    /// Whether the surfaces say the call a tool result part answers reached a tool, as
    /// [`line_ran`](Self::line_ran) says it of a line.
    pub(crate) fn part_ran(
        &self,
        message: &ParsedMessage,
        part: &Part,
        name: Option<&str>,
    ) -> bool {
        let Part::ToolResult { tool_call_id, .. } = part else {
            return false;
        };
        let id = match tool_call_id {
            Some(id) => Some(id.as_str()),
            None if is_tool_line(message) => message.tool_call_id.as_deref(),
            None => None,
        };
        is_tool_item(message) || self.ran_as_tool(id, name)
    }

    /// The declared skill a record line (or, with `part`, its tool result part) answers a call
    /// to, when the surfaces say that call reached a tool: the skill's name is then a tool's,
    /// and its result is checked as a tool's
    /// ([`SkillCalledAsTool`](crate::FindingKind::SkillCalledAsTool)).
    pub(crate) fn skill_called_as_tool<'a>(
        &'a self,
        message: &'a ParsedMessage,
        part: Option<&'a Part>,
    ) -> Option<&'a str> {
        let (name, ran) = match part {
            Some(part) => {
                let name = self.part_call(message, part);
                (name, self.part_ran(message, part, name))
            }
            None if is_tool_line(message) => {
                let name = self.line_call(message);
                (name, self.line_ran(message, name))
            }
            None => return None,
        };
        name.filter(|name| ran && self.is_skill(name))
    }

    /// Classifies a `tool_call` trace event. The trace says a tool was called (a skill's call is
    /// a `skill_call`), so a declared skill's name makes no skill result here (the verifier
    /// reports it): status `error` is a failed call — a dispatch failure when the name is
    /// undeclared, else a [`ResultKind::FailedCall`]; any other status, `ok` or one the
    /// verifier does not know, is a tool result.
    #[must_use]
    pub(crate) fn classify_tool_call(&self, call: &ParsedToolCall) -> ResultKind {
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

/// A call that reached a tool: its result is the tool's (fenced), or, failed, may be fenced
/// or not.
fn ran_result(is_error: Option<bool>) -> ResultKind {
    if is_error == Some(true) {
        ResultKind::FailedCall
    } else {
        ResultKind::ToolResult
    }
}

/// Whether a record line is a Responses item that is a tool's result by its type, whatever the
/// name of its call: an MCP server's tool, the local shell, the computer.
fn is_tool_item(message: &ParsedMessage) -> bool {
    matches!(
        message.item.as_deref(),
        Some("mcp_call" | "local_shell_call_output" | "computer_call_output")
    )
}

/// Whether a record line is a tool's result as a whole: its role, as [`known_role`] reads it,
/// is `tool` or `function`.
pub(crate) fn is_tool_line(message: &ParsedMessage) -> bool {
    matches!(known_role(&message.role), Some("tool" | "function"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ParsedEvent, read_frame, read_record, read_trace};

    const CALL: &str = r#","tool_call_id":"c1","is_error":false,"duration_ms":5,"exit_code":null,"truncated":false"#;
    const FAILED: &str = r#","tool_call_id":"c2","is_error":true,"duration_ms":5,"exit_code":null,"truncated":false"#;
    const HOOK: &str = r#","tool_call_id":null,"is_error":false,"duration_ms":null,"exit_code":null,"truncated":false"#;

    /// The kind of a frame of `tool` holding `"x"`, with the keys `rest` after its content.
    fn frame(context: &VerifyContext, tool: &str, rest: &str) -> ResultKind {
        let json = format!(r#"{{"artifact":{{"tool_name":"{tool}","content":"x"{rest}}}}}"#);
        context.classify_frame(&read_frame(&json).unwrap().artifact)
    }

    /// The kind of the first line of `record`.
    fn message(context: &VerifyContext, record: &str) -> ResultKind {
        context.classify_message(&read_record(record.as_bytes()).items[0].value)
    }

    #[test]
    fn exemptions_of_the_never_fenced_kinds() {
        assert_eq!(
            ResultKind::HookArtifact.exemption(),
            Some(Exemption::HookArtifact)
        );
        assert_eq!(
            ResultKind::SkillResult.exemption(),
            Some(Exemption::SkillDoc)
        );
        assert_eq!(
            ResultKind::ModelText.exemption(),
            Some(Exemption::ModelText)
        );
        assert_eq!(ResultKind::ToolResult.exemption(), None);
        assert_eq!(ResultKind::FailedCall.exemption(), None);
    }

    #[test]
    fn frames() {
        let context = VerifyContext::new()
            .with_skills(["triage"])
            .with_tools(["bash"]);
        assert_eq!(frame(&context, "lint", HOOK), ResultKind::HookArtifact);
        // Absent is not null: the reference page's abridged frame is not a hook artifact.
        assert_eq!(frame(&context, "web-fetch", ""), ResultKind::ToolResult);
        assert_eq!(frame(&context, "triage", CALL), ResultKind::SkillResult);
        assert_eq!(frame(&context, "triage", FAILED), ResultKind::SkillResult);
        assert_eq!(frame(&context, "bash", FAILED), ResultKind::FailedCall);
        assert_eq!(frame(&context, "nope", FAILED), ResultKind::DispatchFailure);
        // A successful call to a tool the context does not list (a runtime's own hand-off
        // tool) is still a tool result.
        assert_eq!(frame(&context, "ask-peer", CALL), ResultKind::ToolResult);
        // Without declared tools, no failed call is known to be a dispatch failure.
        assert_eq!(
            frame(&VerifyContext::new(), "nope", FAILED),
            ResultKind::FailedCall
        );
    }

    #[test]
    fn a_hook_artifact_has_all_four_of_its_fields() {
        let context = VerifyContext::new();
        let hook = |rest: &str| frame(&context, "lint", rest);
        assert_eq!(
            hook(r#","tool_call_id":null,"is_error":false,"duration_ms":null,"exit_code":null"#),
            ResultKind::HookArtifact
        );
        assert_eq!(
            hook(r#","tool_call_id":null,"is_error":true,"duration_ms":null,"exit_code":null"#),
            ResultKind::FailedCall
        );
        assert_eq!(
            hook(r#","tool_call_id":null,"duration_ms":null,"exit_code":null"#),
            ResultKind::ToolResult
        );
        // A subprocess ran: a tool's result, whatever else the frame says.
        for exit_code in ["0", "2"] {
            assert_eq!(
                hook(&format!(
                    r#","tool_call_id":null,"is_error":false,"duration_ms":null,"exit_code":{exit_code}"#
                )),
                ResultKind::ToolResult
            );
        }
        let skill = VerifyContext::new().with_skills(["triage"]);
        assert_eq!(
            frame(&skill, "triage", r#","exit_code":0"#),
            ResultKind::ToolResult
        );
    }

    #[test]
    fn record_lines() {
        let context = VerifyContext::new()
            .with_skills(["triage"])
            .with_tools(["bash"])
            .with_call("c1", "triage")
            .with_call("c2", "nope");
        let record = "{\"role\":\"user\",\"content\":[]}\n{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":[]}\n{\"role\":\"tool\",\"tool_call_id\":\"c2\",\"is_error\":true,\"content\":[]}\n{\"role\":\"tool\",\"tool_call_id\":\"c3\",\"is_error\":true,\"content\":[]}\n";
        let kinds: Vec<_> = read_record(record.as_bytes())
            .items
            .iter()
            .map(|line| context.classify_message(&line.value))
            .collect();
        assert_eq!(
            kinds,
            [
                ResultKind::Task,
                ResultKind::SkillResult,
                ResultKind::DispatchFailure,
                ResultKind::FailedCall
            ]
        );
        let tool = r#"{"role":"tool","tool_call_id":"c1","is_error":false,"content":[]}"#;
        assert_eq!(message(&context, tool), ResultKind::SkillResult);
        assert_eq!(message(&VerifyContext::new(), tool), ResultKind::ToolResult);
        let assistant = r#"{"role":"assistant","content":"hi"}"#;
        assert_eq!(message(&context, assistant), ResultKind::ModelText);
    }

    #[test]
    fn roles_the_verifier_does_not_check_or_know() {
        for role in ["system", "developer"] {
            let line = format!(r#"{{"role":"{role}","content":"x"}}"#);
            assert_eq!(
                message(&VerifyContext::new(), &line),
                ResultKind::NotAResult
            );
        }
        // Only as written: another spelling of the operator's roles is checked.
        for role in ["ipython", "narrator", "System", " developer", "tools"] {
            let line = format!(r#"{{"role":"{role}","content":"x"}}"#);
            assert_eq!(
                message(&VerifyContext::new(), &line),
                ResultKind::UnknownRole,
                "{role:?}"
            );
        }
    }

    #[test]
    fn a_role_in_another_casing_is_the_role_it_spells() {
        for (role, kind) in [
            ("Tool", ResultKind::ToolResult),
            ("TOOL", ResultKind::ToolResult),
            (" tool\\t", ResultKind::ToolResult),
            ("Function", ResultKind::ToolResult),
            ("User", ResultKind::Task),
            ("ASSISTANT", ResultKind::ModelText),
        ] {
            let line = format!(r#"{{"role":"{role}","content":"x"}}"#);
            assert_eq!(message(&VerifyContext::new(), &line), kind, "{role:?}");
        }
        assert_eq!(known_role("tOoL"), Some("tool"));
        assert_eq!(known_role("system"), Some("system"));
        assert_eq!(known_role("SYSTEM"), None);
        assert_eq!(known_role("t\u{f6}ol"), None);
        // A tool line in another casing answers its call as a tool line does.
        let context = VerifyContext::new()
            .with_skills(["triage"])
            .with_call("c1", "triage");
        let record = read_record(
            br#"{"role":"Tool","tool_call_id":"c1","content":[{"type":"tool_result","content":"x"}]}"#,
        );
        let line = &record.items[0].value;
        assert!(is_tool_line(line));
        assert_eq!(
            context.classify_part(line, &line.content[0]),
            ResultKind::SkillResult
        );
    }

    #[test]
    fn tool_result_parts() {
        let record = read_record(
            br#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"x"},{"type":"text","text":"y"},{"type":"tool_result","tool_use_id":"c2","is_error":true,"content":"z"}]}"#,
        );
        let line = &record.items[0].value;
        let context = VerifyContext::new();
        assert_eq!(
            context.classify_part(line, &line.content[0]),
            ResultKind::ToolResult
        );
        assert_eq!(
            context.classify_part(line, &line.content[1]),
            ResultKind::NotAResult
        );
        assert_eq!(
            context.classify_part(line, &line.content[2]),
            ResultKind::FailedCall
        );
        // A part with no id of its own on a tool line answers the line's call.
        let record = read_record(
            br#"{"role":"tool","tool_call_id":"c1","content":[{"type":"tool_result","content":"x"}]}"#,
        );
        let line = &record.items[0].value;
        let context = VerifyContext::new()
            .with_skills(["triage"])
            .with_call("c1", "triage");
        assert_eq!(
            context.classify_part(line, &line.content[0]),
            ResultKind::SkillResult
        );
    }

    #[test]
    fn tool_call_events() {
        let trace = read_trace(
            br#"{"event_type":"tool_call","tool_name":"x","output_bytes":0,"status":"error"}"#,
        );
        let ParsedEvent::ToolCall(call) = &trace.items[0].value else {
            panic!("a tool_call event")
        };
        assert_eq!(
            VerifyContext::new()
                .with_tools(["bash"])
                .classify_tool_call(call),
            ResultKind::DispatchFailure
        );
        assert_eq!(
            VerifyContext::new().classify_tool_call(call),
            ResultKind::FailedCall
        );
        // A declared skill's name on a `tool_call` is still a tool's call.
        let trace = read_trace(
            br#"{"event_type":"tool_call","tool_name":"triage","output_bytes":0,"status":"OK"}"#,
        );
        let ParsedEvent::ToolCall(call) = &trace.items[0].value else {
            panic!("a tool_call event")
        };
        assert_eq!(
            VerifyContext::new()
                .with_skills(["triage"])
                .classify_tool_call(call),
            ResultKind::ToolResult
        );
    }
}
