//! The fuzz targets' checks under `cargo test`: the regression corpus replayed, the
//! `mcp_session` oracle as a property test, and the models of `http_readers` held to the real
//! SDKs. One binary, so it links once.

mod http_exchange;
mod http_readers;
mod mcp_session;
mod regressions;
