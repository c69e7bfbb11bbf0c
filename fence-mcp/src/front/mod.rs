//! The front half: where the proxy serves its client. Over stdio ([`stdio`]): JSON-RPC lines on
//! this process's stdin and stdout. Over HTTP ([`http`]): the MCP endpoint at
//! `http://ADDR/mcp`, behind a guard against DNS rebinding, in front of a [`http::Backend`].

#[cfg(feature = "http")]
pub(crate) mod http;
pub(crate) mod stdio;
