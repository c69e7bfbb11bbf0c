//! Expands `#[fence_boundary]`: parse the item (`item`), detect the handler's shape and result
//! type (`shape`), rewrite the signature, and build the body for that shape (`body`).

mod body;
mod item;
mod rmcp;
mod shape;

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Ident, ReturnType, Type};

use crate::ctxt::Ctxt;
use crate::{attr, private};

pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let cx = Ctxt::new();
    let boundary = attr::Boundary::parse(&cx, args);
    let func = item::parse(&cx, item.clone());
    // rmcp's `#[tool]` is visible only when it comes below the boundary (not yet expanded).
    let rmcp_tool = func
        .as_ref()
        .and_then(|func| attr::RmcpTool::from_attrs(&func.attrs));
    if let (Some(tool), true, None) = (boundary.tool.at(), boundary.task.is_set(), &rmcp_tool) {
        cx.error_spanned_by(
            tool,
            "`tool` and `task` cannot be combined in #[fence_boundary]: a task boundary fences \
             under `task:<origin>`, a tool boundary under `tool:<name>`",
        );
    }
    let kind = match (&func, &rmcp_tool) {
        (Some(func), Some(tool)) => Kind::Tool {
            explicit: Some(rmcp::source_name(&cx, &boundary, tool, &func.sig)),
        },
        _ if boundary.task.is_set() => Kind::Task,
        _ => Kind::Tool {
            explicit: boundary.tool.get().map(syn::LitStr::value),
        },
    };
    let prelude = match (&func, &rmcp_tool) {
        (Some(func), None) => rmcp::below_tool_check(&func.sig),
        _ => TokenStream::new(),
    };
    let placeholder = rmcp_tool.and(func.clone()).and_then(|func| {
        let scratch = Ctxt::new();
        let placeholder = rewrite(&scratch, func, &Kind::Placeholder, TokenStream::new());
        // Its errors are the ones `cx` reports.
        let _ = scratch.check();
        placeholder
    });
    let rewritten = func.and_then(|func| rewrite(&cx, func, &kind, prelude));
    match cx.check() {
        Ok(()) => rewritten.expect("no error, so the function was rewritten"),
        Err(err) => {
            let mut tokens = err.to_compile_error();
            // The function as written, so its own uses do not add errors to ours; an rmcp tool
            // returning `()`, so rmcp's route to it does not add its opaque error either.
            tokens.extend(placeholder.unwrap_or(item));
            tokens
        }
    }
}

enum Kind {
    Tool {
        explicit: Option<String>,
    },
    Task,
    /// Beside errors on an rmcp tool: the body, checked but returning `()`.
    Placeholder,
}

impl Kind {
    fn output_type(&self, span: Span) -> TokenStream {
        let private = private::path(span);
        match self {
            Kind::Tool { .. } => quote_spanned!(span=> #private::ToolOutput),
            Kind::Task => quote_spanned!(span=> #private::ModelContent),
            Kind::Placeholder => quote_spanned!(span=> ()),
        }
    }

    /// Turns the handler's own result into the fenced output. Each trait is named through the
    /// user's own type tokens, so an unfenceable type is reported at that type: for a return
    /// type spelled `Result<T, E>`, at `T` or `E` with the message for that half, else at the
    /// whole return type.
    fn convert(&self, value: &Ident, fn_name: &str, ret: &Type) -> TokenStream {
        let private = private::path(Span::call_site());
        // `impl Trait` cannot be named in a path; the opaque type is still checked.
        let named = !shape::contains_impl_trait(ret);
        let explicit = match self {
            Kind::Placeholder => return quote!(::core::mem::drop(#value)),
            Kind::Task if named => {
                return quote! {
                    <#ret as #private::FenceableTaskPayload>::into_task_content(#value, #private::SEAL)
                };
            }
            Kind::Task => {
                return quote! {
                    #private::FenceableTaskPayload::into_task_content(#value, #private::SEAL)
                };
            }
            Kind::Tool {
                explicit: Some(name),
            } => quote!(::core::option::Option::Some(#name)),
            Kind::Tool { explicit: None } => quote!(::core::option::Option::None),
        };
        match shape::result_arguments(ret).filter(|_| named) {
            // Input:  -> Result<T, E>
            // Output: let source = <T as FenceableToolResult>::tool_source(..);
            //         match value {
            //             Ok(ok) => <T as FenceableToolResult>::ok_output(ok, &source),
            //             Err(err) => <E as FenceableToolError>::err_output(err, &source),
            //         }
            Some((ok, err)) => {
                let source = Ident::new("__fence_source", Span::mixed_site());
                let ok_value = Ident::new("__fence_ok", Span::mixed_site());
                let err_value = Ident::new("__fence_err", Span::mixed_site());
                // `io::Result<T>` does not say its error type; inference finds it.
                let err_output = if let Some(err) = err {
                    quote!(<#err as #private::FenceableToolError>::err_output)
                } else {
                    quote!(#private::FenceableToolError::err_output)
                };
                quote! {{
                    let #source = <#ok as #private::FenceableToolResult>::tool_source(
                        #explicit,
                        #fn_name,
                        #private::SEAL,
                    );
                    match #value {
                        ::core::result::Result::Ok(#ok_value) => {
                            <#ok as #private::FenceableToolResult>::ok_output(#ok_value, &#source, #private::SEAL)
                        }
                        ::core::result::Result::Err(#err_value) => {
                            #err_output(#err_value, &#source, #private::SEAL)
                        }
                    }
                }}
            }
            None if named => quote! {
                <#ret as #private::FenceableReturnType>::into_tool_output(#value, #explicit, #fn_name, #private::SEAL)
            },
            None => quote! {
                #private::FenceableReturnType::into_tool_output(#value, #explicit, #fn_name, #private::SEAL)
            },
        }
    }
}

/// `prelude` goes first in the new body, where `Self` is in scope.
fn rewrite(
    cx: &Ctxt,
    mut func: item::BoundaryFn,
    kind: &Kind,
    prelude: TokenStream,
) -> Option<TokenStream> {
    let returns = shape::detect(cx, &func.sig, matches!(kind, Kind::Task))?;
    let ReturnType::Type(_, original_ret) = &func.sig.output else {
        unreachable!("`detect` refused a signature that returns nothing")
    };
    let original_ret: Type = (**original_ret).clone();
    let fn_name = func.sig.ident.unraw().to_string().replace('_', "-");
    let value = Ident::new("__fence_value", Span::mixed_site());
    let parts = body::Parts {
        body: func.body,
        is_unsafe: func.sig.unsafety.is_some(),
        result: &returns.result,
        original_ret: &original_ret,
        convert: kind.convert(&value, &fn_name, &returns.result),
        value: &value,
        prelude,
    };
    let new_body = body::build(returns.shape, &parts);
    shape::rewrite_signature(
        &mut func.sig,
        returns.shape,
        kind.output_type(returns.result.span()),
    );
    func.body = new_body;
    Some(func.into_token_stream())
}
