//! Fencing what a Rust agent's own rmcp client receives: for a runtime that calls MCP servers
//! it did not write, without a proxy process in between. Requires the `rmcp` feature (rmcp 3,
//! with its `client` feature, and rustc 1.88).
//!
//! [`FencedClient::serve`] starts an rmcp client over a [`FencedTransport`], which holds the
//! proxy's own session: every message the server sends passes the table `fence mcp` applies
//! before rmcp reads it, by the same code, so every method of the client hands out what the
//! proxy would have passed on — tool results and resources fenced, tool and prompt words and
//! the instructions of `initialize` and `server/discover` and every error neutralised, what cannot be fenced withheld. A
//! runtime holding a `FencedClient` cannot forget to fence, and there is no unfenced client in
//! it to reach. [`fence_call_tool_result`] and [`tool_output`] fence one result received some
//! other way.
//!
//! ```no_run
//! use fence_mcp::rmcp::FencedClient;
//! use rmcp::model::CallToolRequestParams;
//! use rmcp::transport::TokioChildProcess;
//!
//! # async fn turn() -> Result<(), Box<dyn std::error::Error>> {
//! let server = TokioChildProcess::new(tokio::process::Command::new("my-mcp-server"))?;
//! let client = FencedClient::serve((), server).await?;
//! let result = client.call_tool(CallToolRequestParams::new("web-fetch")).await?;
//! // Each text block of `result.content` is one block, `<untrusted-content source=tool:web-fetch>…`.
//! # Ok(())
//! # }
//! ```

// Read bottom up: `result.rs` fences one result, `transport.rs` puts the proxy's session in an
// rmcp transport, `client.rs` serves a client over it.
mod client;
mod result;
#[cfg(test)]
mod tests;
mod transport;

pub use client::FencedClient;
pub use result::{fence_call_tool_result, tool_output};
pub use transport::FencedTransport;
