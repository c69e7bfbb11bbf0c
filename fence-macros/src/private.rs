//! The path expansions name the runtime's hidden API by.

use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;
use syn::Ident;

/// `__private_<major>_<minor>`, from this crate's version, which is the runtime's: the runtime
/// declares its hidden module under the same name (`fence-runtime/src/lib.rs`), so a
/// `fence-macros` and a `fence-runtime` of different versions fail to compile at the first path
/// (``could not find `__private_0_1` in `fence_runtime` ``) rather than call an item that means
/// something else now.
const MODULE: &str = concat!(
    "__private_",
    env!("CARGO_PKG_VERSION_MAJOR"),
    "_",
    env!("CARGO_PKG_VERSION_MINOR"),
);

/// `::fence_runtime::__private_<major>_<minor>`, its tokens spanned at `span`.
pub(crate) fn path(span: Span) -> TokenStream {
    let module = Ident::new(MODULE, span);
    quote_spanned!(span=> ::fence_runtime::#module)
}
