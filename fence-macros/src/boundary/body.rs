//! The rewritten body, one builder per shape. Each keeps the original body in its own block,
//! so `return` and `?` keep their meaning for the original result type.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Block, Expr, Ident, Stmt, Type};

use super::shape::{Shape, contains_impl_trait};
use crate::private;

/// What every builder needs: the body as written, the result type it produces, the signature's
/// original return type, and the conversion of the result into fenced output (which names the
/// value through `value`).
pub(crate) struct Parts<'a> {
    pub(crate) body: TokenStream,
    pub(crate) is_unsafe: bool,
    pub(crate) result: &'a Type,
    pub(crate) original_ret: &'a Type,
    pub(crate) convert: TokenStream,
    pub(crate) value: &'a Ident,
    /// Statements that go first in the new body.
    pub(crate) prelude: TokenStream,
}

/// The new body for `shape`.
pub(crate) fn build(shape: Shape, parts: &Parts<'_>) -> TokenStream {
    match shape {
        Shape::Sync => sync(parts),
        Shape::Async => async_fn(parts),
        Shape::BoxedFuture => boxed_future(parts),
        Shape::ImplFuture => impl_future(parts),
    }
}

// Input:  fn f(x: X) -> T { body }
// Output: fn f(x: X) -> ToolOutput {
//             let value: T = (move || -> T { body })();   // `return` and `?` as written
//             convert(value)   // see `Kind::convert`
//         }
fn sync(parts: &Parts<'_>) -> TokenStream {
    let Parts {
        result,
        convert,
        value,
        prelude,
        ..
    } = parts;
    let call = immediately_called_closure(&unsafe_wrapped(parts), Some(result));
    let annotation = (!contains_impl_trait(result)).then(|| quote!(: #result));
    quote! {{
        #prelude
        #[allow(unused_unsafe, clippy::redundant_closure_call)]
        let #value #annotation = #call;
        #convert
    }}
}

// Input:  async fn f(x: X) -> T { body }
// Output: async fn f(x: X) -> ToolOutput {
//             let value: T = async move { body }.await;
//             convert(value)   // see `Kind::convert`
//         }
fn async_fn(parts: &Parts<'_>) -> TokenStream {
    let Parts {
        result,
        convert,
        value,
        prelude,
        ..
    } = parts;
    let body = unsafe_wrapped(parts);
    let annotation = (!contains_impl_trait(result)).then(|| quote!(: #result));
    quote! {{
        #prelude
        #[allow(unused_unsafe)]
        let #value #annotation = async move #body.await;
        #convert
    }}
}

// Input:  fn f(&self) -> Pin<Box<dyn Future<Output = T> + Send + 'a>> {
//             Box::pin(async move { .. })
//         }
// Output: fn f(&self) -> Pin<Box<dyn Future<Output = ToolOutput> + Send + 'a>> {
//             Box::pin(async move { let value = async move { .. }.await; convert })
//         }
// A body of another form is called first, and the future it returns awaited inside the new one.
fn boxed_future(parts: &Parts<'_>) -> TokenStream {
    let Parts {
        body,
        original_ret,
        convert,
        value,
        prelude,
        ..
    } = parts;
    let parsed = syn::parse2::<Block>(body.clone()).ok();
    if let Some((pin, inner)) = parsed.as_ref().and_then(boxed_async_block) {
        return quote! {{
            #prelude
            #pin(async move {
                let #value = #inner.await;
                #convert
            })
        }};
    }
    let future = Ident::new("__fence_future", Span::mixed_site());
    let private = private::path(Span::call_site());
    let call = immediately_called_closure(&unsafe_wrapped(parts), Some(original_ret));
    quote! {{
        #prelude
        #[allow(unused_unsafe, clippy::redundant_closure_call)]
        let #future = #call;
        #private::Box::pin(async move {
            let #value = #future.await;
            #convert
        })
    }}
}

// Input:  fn f() -> impl Future<Output = T> { body }
// Output: fn f() -> impl Future<Output = ToolOutput> {
//             let future = (move || { body })();
//             async move { let value = future.await; convert }
//         }
fn impl_future(parts: &Parts<'_>) -> TokenStream {
    let Parts {
        convert,
        value,
        prelude,
        ..
    } = parts;
    let future = Ident::new("__fence_future", Span::mixed_site());
    let call = immediately_called_closure(&unsafe_wrapped(parts), None);
    quote! {{
        #prelude
        #[allow(unused_unsafe, clippy::redundant_closure_call)]
        let #future = #call;
        async move {
            let #value = #future.await;
            #convert
        }
    }}
}

/// The `Box::pin` path and the async block of a body that is exactly
/// `Box::pin(async move { .. })`, as `#[async_trait]` writes it.
fn boxed_async_block(block: &Block) -> Option<(&Expr, &Expr)> {
    let [Stmt::Expr(Expr::Call(call), None)] = block.stmts.as_slice() else {
        return None;
    };
    let Expr::Path(func) = &*call.func else {
        return None;
    };
    let is_pin = func
        .path
        .segments
        .last()
        .is_some_and(|seg| seg.ident == "pin");
    match (is_pin, call.args.len(), call.args.first()) {
        (true, 1, Some(inner @ Expr::Async(_))) => Some((&call.func, inner)),
        _ => None,
    }
}

/// The body, wrapped in `unsafe` for an `unsafe fn` so it stays an unsafe context inside the
/// closure or async block it moves into.
fn unsafe_wrapped(parts: &Parts<'_>) -> TokenStream {
    let body = &parts.body;
    if parts.is_unsafe {
        quote!({ unsafe #body })
    } else {
        body.clone()
    }
}

/// `(move || -> T { body })()`: `return` and `?` in the body keep their meaning for `T`.
fn immediately_called_closure(body: &TokenStream, ret: Option<&Type>) -> TokenStream {
    if let Some(ret) = ret.filter(|ret| !contains_impl_trait(ret)) {
        quote!((move || -> #ret #body)())
    } else {
        quote!((move || #body)())
    }
}
