//! Integration tests of `fence-runtime` live in `tests/`; this library holds only data they
//! share.

pub mod tables;
pub mod trust;
