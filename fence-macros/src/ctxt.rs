//! Collects every error of one expansion, so a user sees them all at once (serde's `Ctxt`).

use std::cell::RefCell;
use std::fmt::Display;
use std::thread;

use quote::ToTokens;

/// Errors found while expanding one macro invocation.
///
/// Checked with [`Ctxt::check`], which consumes it, so checking twice does not compile;
/// dropping it unchecked is a bug in this crate (an error would be lost), so it panics.
pub(crate) struct Ctxt {
    /// `None` once checked.
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub(crate) fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// An error spanning the tokens of `at`.
    pub(crate) fn error_spanned_by<T: ToTokens, M: Display>(&self, at: T, message: M) {
        self.syn_error(syn::Error::new_spanned(at.into_token_stream(), message));
    }

    pub(crate) fn syn_error(&self, err: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("only `check`, which consumes the Ctxt, takes the errors")
            .push(err);
    }

    /// All errors, combined into one, or `Ok` when there were none. Consumes the context, so it
    /// comes after the last check that can report an error.
    pub(crate) fn check(self) -> Result<(), syn::Error> {
        let errors = self
            .errors
            .borrow_mut()
            .take()
            .expect("only `check`, which consumes the Ctxt, takes the errors");
        let mut errors = errors.into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for err in errors {
            combined.combine(err);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        assert!(
            thread::panicking() || self.errors.borrow().is_none(),
            "fence-macros: Ctxt dropped without checking its errors"
        );
    }
}
