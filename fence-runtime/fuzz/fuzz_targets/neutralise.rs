//! The `neutralise` target: what it checks is `fence_checks::neutralise`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fence_checks::neutralise::check(data));
