//! The `trust` target: what it checks is `fence_checks::trust`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fence_checks::trust::check(data));
