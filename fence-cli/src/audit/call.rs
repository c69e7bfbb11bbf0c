//! Which call a finding is about: its id, and the tool or skill it named, as far as its unit
//! says (a trace event names no call id; a record line's part names its call, whose tool the
//! record's or the frames' calls name).

use fence_surfaces::{Finding, ParsedEvent, ParsedMessage, Part, StreamFrame, VerifyContext};

/// The call a finding is about.
#[derive(Debug, Default)]
pub(crate) struct Call {
    pub(crate) id: Option<String>,
    pub(crate) tool: Option<String>,
}

impl Call {
    /// The call an artifact frame carries the result of.
    pub(crate) fn of_frame(frame: &StreamFrame) -> Call {
        let artifact = &frame.frame.artifact;
        Call {
            id: artifact.tool_call_id.value().cloned(),
            tool: artifact.tool_name.clone(),
        }
    }

    /// The call a finding on a record line is about: the one its part answers, when the
    /// finding is about a part, else the one the line answers.
    pub(crate) fn of_message(
        message: &ParsedMessage,
        finding: &Finding,
        context: &VerifyContext,
    ) -> Call {
        let part = finding
            .location
            .part
            .and_then(|index| message.content.get(index));
        let (id, own_name) = match part {
            Some(Part::ToolResult { tool_call_id, .. }) => (tool_call_id.as_deref(), None),
            _ => (message.tool_call_id.as_deref(), message.name.as_deref()),
        };
        Call {
            id: id.map(str::to_owned),
            tool: own_name
                .or_else(|| id.and_then(|id| context.call_name(id)))
                .map(str::to_owned),
        }
    }

    /// The tool or skill a trace event names.
    pub(crate) fn of_event(event: &ParsedEvent) -> Call {
        let tool = match event {
            ParsedEvent::ToolCall(call) => Some(call.tool_name.as_str()),
            ParsedEvent::SkillCall(call) => Some(call.skill_name.as_str()),
            _ => None,
        };
        Call {
            id: None,
            tool: tool.map(str::to_owned),
        }
    }
}
