//! What the rmcp tests ask of rmcp's own client: a tool call with JSON arguments, and the one
//! text block of its result.

use rmcp::ServiceError;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};

/// Calls `tool` with `arguments`, which must be a JSON object.
pub(crate) async fn call(
    client: &RunningService<RoleClient, ()>,
    tool: &'static str,
    arguments: serde_json::Value,
) -> Result<CallToolResult, ServiceError> {
    let serde_json::Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
        .await
}

/// The one text block of a result, and its `isError`.
pub(crate) fn text_of(result: &CallToolResult) -> (&str, Option<bool>) {
    assert_eq!(result.content.len(), 1, "one content block: {result:?}");
    assert_eq!(result.structured_content, None);
    let text = result.content[0].as_text().expect("a text block");
    (&text.text, result.is_error)
}
