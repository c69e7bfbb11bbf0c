//! Compile-fail cases, one misuse per file with its `.stderr`, and compile-pass cases.
//!
//! Regenerate the snapshots with `TRYBUILD=overwrite cargo test -p fence-ui-tests` and read
//! the diff: they are tied to the compiler version.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/fail/derive/*.rs");
    cases.compile_fail("tests/fail/boundary/*.rs");
    cases.compile_fail("tests/fail/runtime/*.rs");
    cases.compile_fail("tests/fail/rmcp/*.rs");
    cases.pass("tests/pass/*.rs");
}
