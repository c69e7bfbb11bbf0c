//! The `stream` target: what it checks is `fence_checks::stream`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fence_checks::stream::check(data));
