//! The fuzz targets' checks under `cargo test`: the regression corpus replayed, and the
//! `mcp_session` oracle as a property test. One binary, so it links once.

mod mcp_session;
mod regressions;
