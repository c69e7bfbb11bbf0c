//! The `records` target: what it checks is `fence_checks::records`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fence_checks::records::check(data));
