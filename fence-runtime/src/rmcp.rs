//! MCP tools on [rmcp](https://docs.rs/rmcp), the official Rust MCP SDK, fenced with one
//! attribute. Requires the `rmcp` feature (which implies `derive`) and rustc 1.88, rmcp's
//! minimum.
//!
//! ```toml
//! [dependencies]
//! fence-runtime = { version = "0.1", features = ["rmcp"] }
//! rmcp = { version = "3", features = ["server", "macros", "transport-io"] }
//! ```
//!
//! # One attribute
//!
//! Put `#[fence_boundary]` above rmcp's `#[tool]`. The handler keeps its own result type — any
//! [`Fenced`](crate::Fenced) value, or `Result<T, E>` with `T: Fenced` and `E: Display`, with
//! `?` as usual — and the client receives one text content block holding the fenced block's
//! exact bytes, with `isError` set from [`ToolOutput::is_error`]:
//!
//! ```
//! use fence_runtime::{fence_boundary, Fenced};
//! use rmcp::handler::server::wrapper::Parameters;
//! use rmcp::{schemars, tool, tool_router};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct FetchRequest { url: String }
//!
//! #[derive(serde::Serialize, Fenced)]
//! struct Page { status: u16, body: String }
//!
//! #[derive(Clone)]
//! struct Server;
//!
//! #[tool_router(server_handler)]
//! impl Server {
//!     /// Fetches a web page.
//!     #[fence_boundary]
//!     #[tool]
//!     async fn web_fetch(&self, Parameters(req): Parameters<FetchRequest>) -> Result<Page, std::io::Error> {
//!         Ok(Page { status: 200, body: format!("<p>{}</p>", req.url) })
//!     }
//! }
//!
//! // The model calls the tool `web_fetch`, and its output says so:
//! // <untrusted-content source=tool:web_fetch>
//! // {"status":200,"body":"<p>https://example.com</p>"}
//! // </untrusted-content>
//! # let _ = Server::tool_router();
//! ```
//!
//! Serve it as any rmcp server (`Server.serve(rmcp::transport::stdio()).await?.waiting().await?`);
//! `fence-runtime/examples/mcp_server.rs` is a complete one.
//!
//! # The fence source is the name the model sees
//!
//! The block is fenced under `tool:` and the name rmcp registers: `#[tool(name = "…")]` when it
//! has one, else the function's name exactly as written (`read_file` gives
//! `tool:read_file`; outside rmcp the boundary's default would be `tool:read-file`). A
//! `tool = "…"` on the boundary must agree with it, and overrides a payload's
//! `#[fence(tool = "…")]` as everywhere.
//!
//! # Order: the boundary above `#[tool]`
//!
//! Attribute macros expand from the top, so only a boundary *above* `#[tool]` can read it.
//! Below it, `#[tool]` has already been expanded and its name is gone; on a method (a function
//! taking `self`) that order is a compile error that says to swap the two attributes. On an
//! associated function without `self` the boundary cannot tell it is below `#[tool]` (nothing
//! of `#[tool]` is left for it to see), so keep the order there too.
//! `#[tracing::instrument]` can go anywhere among them.
//!
//! # No structured output
//!
//! A fenced tool sends its result as text, never as `structuredContent`: structured content
//! reaches the client beside the fence, where no marker tells the model it is untrusted, so
//! neutralising it would still hand the model attacker text unlabelled. Returning rmcp's
//! `Json<T>` from a boundary is therefore a compile error at the type, and so is an
//! `output_schema` on its `#[tool]`: a client that follows the MCP spec rejects a result
//! without the structured content its declared schema promises. Return `T` itself (with
//! `#[derive(serde::Serialize, Fenced)]`): it is sent as JSON inside the fence.
//!
//! # Without the macro
//!
//! [`ToolOutput`] implements rmcp's `IntoCallToolResult`, and `CallToolResult` implements
//! `From<ToolOutput>`, so a hand-written tool returns a `ToolOutput`, or a
//! `Result<ToolOutput, ErrorData>` whose `Err` is a protocol error through rmcp's own impl.
//! Build the output with [`ToolOutput::from_result`] or `fence_child_stdout` (feature
//! `tokio`), and take the source from rmcp's `ToolName` extractor so the name is written once:
//!
//! ```
//! use fence_runtime::{Source, ToolOutput};
//! use rmcp::handler::server::tool::ToolName;
//! use rmcp::model::CallToolResult;
//!
//! fn read_config(ToolName(name): ToolName) -> ToolOutput {
//!     ToolOutput::from_result(&Source::tool(&name), std::fs::read_to_string("/no/such/file"))
//! }
//!
//! let result = CallToolResult::from(read_config(ToolName("read_config".into())));
//! assert_eq!(result.is_error, Some(true));
//! let text = &result.content[0].as_text().unwrap().text;
//! assert!(text.starts_with("<untrusted-content source=tool:read_config>\n"));
//! ```
//!
//! [`ToolOutput::dispatch_failure`] and [`ToolOutput::refusal`] are sent the same way: their
//! unfenced text, with `isError` true.
//!
//! # rmcp versions
//!
//! The `rmcp` feature tracks rmcp 3 (3.11 and later 3.x): rmcp is a public dependency of it,
//! so your crate and this one must agree on rmcp's major version. When rmcp 4 is released, it
//! gets a feature of its own (`rmcp-4`) in a minor release, beside this one, so a server on
//! rmcp 3 is not broken; the `rmcp` feature moves to the newest major only in a breaking
//! release of this crate.

use alloc::vec;

use ::rmcp::ErrorData;
use ::rmcp::handler::server::tool::IntoCallToolResult;
use ::rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};

use crate::content::ToolOutput;

impl From<ToolOutput> for CallToolResult {
    /// One text content block holding the output's exact bytes, and `isError` set from
    /// [`ToolOutput::is_error`].
    ///
    /// ```
    /// use fence_runtime::{fence, Source, ToolOutput};
    /// use rmcp::model::CallToolResult;
    ///
    /// let output = ToolOutput::ok(fence(&Source::tool("echo"), "hi"));
    /// let result = CallToolResult::from(output);
    /// assert_eq!(result.is_error, Some(false));
    /// assert_eq!(
    ///     result.content[0].as_text().unwrap().text,
    ///     "<untrusted-content source=tool:echo>\nhi\n</untrusted-content>",
    /// );
    /// ```
    fn from(output: ToolOutput) -> Self {
        let is_error = output.is_error();
        let content = vec![ContentBlock::text(output.into_content().into_string())];
        if is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }
    }
}

impl IntoCallToolResult for ToolOutput {
    /// The tool's [`CallToolResult`]: never a protocol error.
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        Ok(CallToolResult::from(self).into())
    }
}
