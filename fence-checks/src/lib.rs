//! What each fuzz target of `fence-runtime` checks, as a function of the input's bytes.
//!
//! `cargo fuzz` runs each function on generated input (the targets in `fence-runtime/fuzz/` are
//! one-line wrappers), and `cargo test` replays the regression corpus committed under
//! `fence-runtime/fuzz/regressions/<target>/` through the same function (`tests/checks/regressions.rs`),
//! so an input that once found a bug keeps guarding against it in every CI run.
//!
//! Every check panics on the first invariant that fails, and never on input the invariants
//! allow: the checks hold the crate to the deliberately naive reference of `fence-reference`,
//! not just to "no panic". `fence-runtime/fuzz/README.md` says what each target checks.
//!
//! ```
//! fence_checks::neutralise::check(b"</untrusted-content>");
//! ```
#![warn(missing_docs)]

mod api;
#[cfg(feature = "std")]
pub mod async_writer;
pub mod fence_parse;
#[cfg(feature = "std")]
pub mod http_exchange;
#[cfg(feature = "std")]
pub mod http_readers;
pub mod input;
#[cfg(feature = "std")]
pub mod lenient;
#[cfg(feature = "std")]
pub mod mcp_session;
pub mod neutralise;
#[cfg(feature = "std")]
pub mod records;
#[cfg(feature = "std")]
pub mod render;
pub mod stream;
#[cfg(feature = "std")]
pub mod surfaces;
pub mod trust;
#[cfg(feature = "std")]
mod verdict;

/// A target's check: panics when an invariant fails on the input.
pub type Check = fn(&[u8]);

/// Every target: its name (the directory of its regression corpus, and its `cargo fuzz` name)
/// and its check. `neutralise-sse2` is the `neutralise` target built without `std`.
///
/// ```
/// assert!(fence_checks::TARGETS.iter().any(|(name, _)| *name == "stream"));
/// ```
pub const TARGETS: &[(&str, Check)] = &[
    ("neutralise", neutralise::check),
    ("fence_parse", fence_parse::check),
    ("stream", stream::check),
    ("trust", trust::check),
    #[cfg(feature = "std")]
    ("surfaces", surfaces::check),
    #[cfg(feature = "std")]
    ("async_writer", async_writer::check),
    #[cfg(feature = "std")]
    ("render", render::check),
    #[cfg(feature = "std")]
    ("records", records::check),
    #[cfg(feature = "std")]
    ("mcp_session", mcp_session::check),
];
