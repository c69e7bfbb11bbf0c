//! Tool messages for [async-openai](https://docs.rs/async-openai) built from a [`ToolOutput`],
//! with the block's exact bytes. Requires the `async-openai` feature, which pulls in only
//! async-openai's request types (its `chat-completion-types` and `response-types`), no HTTP
//! client.
//!
//! Neither wire format has an error flag for a tool's result: the model reads an error as the
//! fenced error text the boundary made, and [`ToolOutput::is_error`] stays with the runtime.
//!
//! ```
//! use async_openai::types::chat::ChatCompletionRequestMessage;
//! use fence_runtime::{ToolOutput, fence, Source};
//!
//! let output = ToolOutput::ok(fence(&Source::tool("web-fetch"), "<p>hi</p>"));
//! let message = fence_runtime::async_openai::tool_message("call_1", &output);
//! let ChatCompletionRequestMessage::Tool(tool) = &message else { unreachable!() };
//! assert_eq!(tool.tool_call_id, "call_1");
//! ```
//!
//! Building the message from `output.content().as_str().to_owned()` works too, and is the path
//! that loses the guarantee: a `String` can hold anything, and nothing checks it is the block.

use alloc::string::String;

use async_openai::types::chat::{
    ChatCompletionRequestMessage, ChatCompletionRequestToolMessage,
    ChatCompletionRequestToolMessageContent,
};
use async_openai::types::responses::{
    FunctionCallOutput, FunctionCallOutputItemParam, InputItem, Item,
};

use crate::ToolOutput;

/// The Chat Completions message answering the tool call `tool_call_id`: role `tool`, its
/// content the block's exact bytes.
///
/// ```
/// use fence_runtime::{ToolOutput, fence, Source};
///
/// let output = ToolOutput::ok(fence(&Source::tool("t"), "x"));
/// let message = fence_runtime::async_openai::tool_message("call_1", &output);
/// assert_eq!(
///     serde_json::to_string(&message).unwrap(),
///     r#"{"role":"tool","content":"<untrusted-content source=tool:t>\nx\n</untrusted-content>","tool_call_id":"call_1"}"#,
/// );
/// ```
#[must_use]
pub fn tool_message(
    tool_call_id: impl Into<String>,
    output: &ToolOutput,
) -> ChatCompletionRequestMessage {
    ChatCompletionRequestMessage::Tool(ChatCompletionRequestToolMessage {
        content: ChatCompletionRequestToolMessageContent::Text(output.content().as_str().into()),
        tool_call_id: tool_call_id.into(),
    })
}

/// The Responses API input item answering the function call `call_id`: a
/// `function_call_output` whose output is the block's exact bytes.
///
/// ```
/// use fence_runtime::{ToolOutput, fence, Source};
///
/// let output = ToolOutput::ok(fence(&Source::tool("t"), "x"));
/// let item = fence_runtime::async_openai::function_call_output("call_1", &output);
/// assert_eq!(
///     serde_json::to_string(&item).unwrap(),
///     r#"{"type":"function_call_output","call_id":"call_1","output":"<untrusted-content source=tool:t>\nx\n</untrusted-content>"}"#,
/// );
/// ```
#[must_use]
pub fn function_call_output(call_id: impl Into<String>, output: &ToolOutput) -> InputItem {
    InputItem::from(Item::FunctionCallOutput(FunctionCallOutputItemParam {
        call_id: Some(call_id.into()),
        output: FunctionCallOutput::Text(output.content().as_str().into()),
        id: None,
        status: None,
        name: None,
        namespace: None,
        caller: None,
    }))
}
