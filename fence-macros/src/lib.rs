//! Procedural macros of [`fence-runtime`](https://docs.rs/fence-runtime).
//!
//! Depend on `fence-runtime` with its `derive` feature instead of on this crate: the macros are
//! documented on their re-exports there, and their expansions name only
//! `::fence_runtime::__private_<major>_<minor>::…` (this crate's version, which is the
//! runtime's: see `private.rs`) and `::core::…` paths.
#![forbid(unsafe_code)]

mod ast;
mod attr;
mod boundary;
mod ctxt;
mod derive;
mod private;
mod valid;

use proc_macro::TokenStream;

/// See `fence_runtime::Fenced`.
#[proc_macro_derive(Fenced, attributes(fence))]
pub fn derive_fenced(input: TokenStream) -> TokenStream {
    derive::expand(input.into()).into()
}

/// See `fence_runtime::fence_boundary`.
#[proc_macro_attribute]
pub fn fence_boundary(args: TokenStream, item: TokenStream) -> TokenStream {
    boundary::expand(args.into(), item.into()).into()
}
