//! What a client's request asked: all the proxy keeps of it, and what decides how its answer is
//! fenced.

use std::borrow::Cow;

use serde_json::value::RawValue;

use crate::json::{self, Members};
use crate::listed::Introduction;
use crate::said::shown;

/// What a client's request asked, as far as fencing its answer goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Asked {
    /// `initialize`, or the 2026-07-28 protocol's `server/discover`: the server introduces
    /// itself, and its `instructions` are neutralised and held to the pin.
    Introduce(Introduction),
    /// `tools/call` of this tool.
    CallTool(String),
    /// `tasks/result` of this task (the 2025-11-25 protocol's tasks).
    TaskResult(Option<String>),
    /// `tasks/get` of this task.
    TaskGet(Option<String>),
    /// `tasks/cancel` of this task, answered with its state.
    TaskCancel(Option<String>),
    TaskList,
    /// A page of `tools/list`: the first when the request has no cursor. Its tools' words are
    /// neutralised, held to the pin, and lose their `outputSchema` when `structuredContent` is
    /// removed.
    ListTools {
        first: bool,
    },
    /// A page of `prompts/list`.
    ListPrompts {
        first: bool,
    },
    /// `prompts/get` of this prompt.
    GetPrompt(String),
    /// `resources/read` of this URI.
    ReadResource(Option<String>),
    Other,
}

/// A client's request waiting for its answer (and, once answered, remembered a while for an
/// answer sent again: [`crate::requests::Answered`]).
#[derive(Debug, Clone)]
pub(super) struct Pending {
    pub(super) method: String,
    pub(super) asked: Asked,
    pub(super) id: Box<RawValue>,
    pub(super) cancelled: bool,
}

impl Pending {
    /// Whether the request is a `tools/call`.
    pub(super) fn calls_a_tool(&self) -> bool {
        matches!(self.asked, Asked::CallTool(_))
    }

    /// About how many bytes the request holds, in its words (its method, id, tool, task,
    /// prompt, resource).
    pub(super) fn size(&self) -> usize {
        let asked = match &self.asked {
            Asked::CallTool(text) | Asked::GetPrompt(text) => text.len(),
            Asked::TaskResult(text)
            | Asked::TaskGet(text)
            | Asked::TaskCancel(text)
            | Asked::ReadResource(text) => text.as_ref().map_or(0, String::len),
            Asked::Introduce(_)
            | Asked::TaskList
            | Asked::ListTools { .. }
            | Asked::ListPrompts { .. }
            | Asked::Other => 0,
        };
        self.method.len() + self.id.get().len() + asked
    }

    /// How the proxy names the request in messages: "tools/call `fetch`", the tool's name as
    /// [`shown`] repeats it.
    pub(super) fn describe(&self) -> String {
        match &self.asked {
            Asked::CallTool(tool) => format!("tools/call `{}`", shown(tool)),
            Asked::GetPrompt(prompt) => format!("prompts/get `{}`", shown(prompt)),
            _ => shown(&self.method),
        }
    }
}

/// What a request asks, from its method and params; why it cannot be proxied when a member
/// the proxy must read cannot be read.
pub(super) fn asked(method: &str, params: Option<&RawValue>) -> Result<Asked, String> {
    let params = params.and_then(Members::of);
    let param = |key: &str| -> Result<Option<String>, String> {
        let Some(value) = params
            .as_ref()
            .and_then(|params| params.one(key).ok().flatten())
        else {
            return Ok(None);
        };
        json::text(value)
            .map(|text| text.map(Cow::into_owned))
            .map_err(|why| format!("`params.{key}` {}", why.problem()))
    };
    // A list's first page is the one asked for without a cursor.
    let first = || {
        params
            .as_ref()
            .and_then(|params| params.one("cursor").ok().flatten())
            .is_none_or(|cursor| cursor.get() == "null")
    };
    Ok(match method {
        "initialize" => Asked::Introduce(Introduction::Initialize),
        "server/discover" => Asked::Introduce(Introduction::Discover),
        "tools/call" => Asked::CallTool(param("name")?.unwrap_or_default()),
        "tasks/result" => Asked::TaskResult(param("taskId")?),
        "tasks/get" => Asked::TaskGet(param("taskId")?),
        "tasks/cancel" => Asked::TaskCancel(param("taskId")?),
        "tasks/list" => Asked::TaskList,
        "tools/list" => Asked::ListTools { first: first() },
        "prompts/list" => Asked::ListPrompts { first: first() },
        "prompts/get" => Asked::GetPrompt(param("name")?.unwrap_or_default()),
        "resources/read" => Asked::ReadResource(param("uri")?),
        _ => Asked::Other,
    })
}
