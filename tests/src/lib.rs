//! Integration tests of `fence-runtime` live in `tests/`; this library holds only data they
//! share.

pub mod tables;
pub mod trust;

/// The root README's Rust example compiles and runs.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct RootReadme;
