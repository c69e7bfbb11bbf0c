//! The `fence` binary, run as a user runs it: real processes, real pipes, real files.
//!
//! One test binary, one module per subcommand, so the suite links once.

mod audit;
mod common;
mod demo;
mod languages;
mod mcp;
mod memory;
mod parse;
mod readme;
mod wrap;
