//! Tool responses for [genai](https://docs.rs/genai) built from a [`ToolOutput`], with the
//! block's exact bytes. Requires the `genai` feature. genai has no build without its HTTP
//! client, so the feature pulls it in (with genai's default TLS features off).
//!
//! genai's `ToolResponse` has no error flag: the model reads an error as the fenced error text
//! the boundary made, and [`ToolOutput::is_error`] stays with the runtime.
//!
//! Building the response from `output.content().as_str()` works too, and is the path that loses
//! the guarantee: a `String` can hold anything, and nothing checks it is the block.

use alloc::string::String;

use genai::chat::{ToolCall, ToolResponse};

use crate::ToolOutput;

/// The response to the tool call `call_id`: its content the block's exact bytes.
///
/// ```
/// use fence_runtime::{ToolOutput, fence, Source};
///
/// let output = ToolOutput::ok(fence(&Source::tool("t"), "x"));
/// let response = fence_runtime::genai::tool_response("call_1", &output);
/// assert_eq!(response.call_id, "call_1");
/// assert_eq!(response.content, "<untrusted-content source=tool:t>\nx\n</untrusted-content>");
/// let message: genai::chat::ChatMessage = response.into();
/// ```
#[must_use]
pub fn tool_response(call_id: impl Into<String>, output: &ToolOutput) -> ToolResponse {
    ToolResponse::new(call_id, output.content().as_str())
}

/// The response to `call`, naming its function as some providers (Gemini) need.
///
/// ```
/// use fence_runtime::{ToolOutput, fence, Source};
/// use genai::chat::ToolCall;
///
/// let call = ToolCall {
///     call_id: "call_1".into(),
///     fn_name: "get_weather".into(),
///     fn_arguments: serde_json::json!({}),
///     thought_signatures: None,
/// };
/// let output = ToolOutput::ok(fence(&Source::tool("get_weather"), "sunny"));
/// let response = fence_runtime::genai::tool_response_to(&call, &output);
/// assert_eq!(response.fn_name.as_deref(), Some("get_weather"));
/// ```
#[must_use]
pub fn tool_response_to(call: &ToolCall, output: &ToolOutput) -> ToolResponse {
    ToolResponse::from_tool_call(call, output.content().as_str())
}
