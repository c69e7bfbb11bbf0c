//! The `async_writer` target: what it checks is `fence_checks::async_writer`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fence_checks::async_writer::check(data));
