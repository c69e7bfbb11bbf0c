//! Integration tests of `fence-runtime` live in `tests/`; this library holds the data and the
//! small helpers they share.

pub mod tables;
pub mod trust;

/// The block fencing `content` under `source`, spelled out by hand from the grammar rather than
/// made by the code under test: what a test expects.
#[must_use]
pub fn block(source: &str, content: &str) -> String {
    format!("<untrusted-content source={source}>\n{content}\n</untrusted-content>")
}

/// The root README's Rust example compiles and runs.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct RootReadme;
