//! The `surfaces` target: what it checks is `fence_checks::surfaces`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fence_checks::surfaces::check(data));
