//! The `mcp_session` target: what it checks is `fence_checks::mcp_session`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fence_checks::mcp_session::check(data));
