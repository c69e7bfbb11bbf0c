//! `#[fence_boundary]` next to rmcp's `#[tool]` with fence-runtime's `rmcp` feature on: one
//! misuse per compile-fail file with its `.stderr`, and compile-pass cases that run.
//!
//! Regenerate the snapshots with `TRYBUILD=overwrite cargo test -p fence-ui-tests-rmcp` and
//! read the diff: they are tied to the compiler version.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/fail/*.rs");
    cases.pass("tests/pass/*.rs");
}
