//! Procedural macros of [`fence-runtime`](https://docs.rs/fence-runtime).
//!
//! Depend on `fence-runtime` with its `derive` feature instead of on this crate; the macros are
//! documented on their re-exports there.
#![forbid(unsafe_code)]
