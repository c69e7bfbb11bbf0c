//! `fence mcp` run as an MCP client runs it: the real `fence` binary, the test server behind it
//! as a child process, spoken to over stdio by rmcp's own client and line by line.
//!
//! One test binary, one module per concern, so the suite links once.

mod agent_turn;
mod client;
mod common;
mod discover;
#[cfg(feature = "rmcp")]
mod fenced_client;
mod http_direct;
mod http_eras;
mod http_proxied;
mod http_robustness;
mod listening;
mod oracle;
mod pin;
mod robustness;
mod sdk;
#[cfg(unix)]
mod startup;
mod told;
