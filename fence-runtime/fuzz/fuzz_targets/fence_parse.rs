//! The `fence_parse` target: what it checks is `fence_checks::fence_parse`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fence_checks::fence_parse::check(data));
