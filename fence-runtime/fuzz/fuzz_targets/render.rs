//! The `render` target: what it checks is `fence_checks::render`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fence_checks::render::check(data));
