//! The `http_exchange` target: what it checks is `fence_checks::http_exchange::check_proxy`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fence_checks::http_exchange::check_proxy(data));
