//! `#[fence_boundary]` next to rmcp's `#[tool]`: the fence source is the name rmcp registers,
//! the result is one fenced text block (never structured content), and the order that hides
//! `#[tool]` from the boundary is a compile error.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote};
use syn::{LitStr, PathArguments, ReturnType, Signature, Type};

use crate::attr::{self, RmcpTool};
use crate::ctxt::Ctxt;
use crate::private;

use super::shape;

/// The source name for a boundary above `tool`: the name rmcp registers, which is what the
/// model calls the tool by. Reports what cannot go with `#[tool]`: the feature off, a name that
/// cannot be a source, a boundary `tool` that disagrees, `task`, and structured output.
pub(crate) fn source_name(
    cx: &Ctxt,
    boundary: &attr::Boundary,
    tool: &RmcpTool,
    sig: &Signature,
) -> String {
    if cfg!(not(feature = "rmcp")) {
        cx.syn_error(syn::Error::new(
            Span::call_site(),
            "#[fence_boundary] on an rmcp #[tool] needs fence-runtime's `rmcp` feature, which \
             makes `ToolOutput` an rmcp tool result: add `features = [\"rmcp\"]` to the \
             `fence-runtime` dependency in Cargo.toml",
        ));
    }
    // rmcp keeps the identifier as written, `r#` included: that is the name the model sees.
    let registered = tool
        .name
        .as_ref()
        .map_or_else(|| sig.ident.to_string(), LitStr::value);
    if let Some(name) = &tool.name {
        if let Err(problem) = attr::check_tool_name(&registered) {
            cx.error_spanned_by(
                name,
                format!("{problem}; the fence source is the name rmcp registers"),
            );
        }
    }
    if let Some(explicit) = boundary.tool.get() {
        if explicit.value() != registered {
            let rename = if tool.name.is_some() {
                "or change `name` in #[tool]"
            } else {
                "or name the tool so: #[tool(name = \"..\")]"
            };
            cx.error_spanned_by(
                explicit,
                format!(
                    "rmcp registers this tool as `{registered}`, and the fence source must be \
                     the name the model calls the tool by: remove `tool = {}` (#[fence_boundary] \
                     takes the name from #[tool]), {rename}",
                    explicit.to_token_stream(),
                ),
            );
        }
    }
    if let Some(task) = boundary.task.at() {
        cx.error_spanned_by(
            task,
            "an rmcp #[tool] returns a tool's result, fenced under `tool:<name>`: remove `task` \
             from #[fence_boundary]",
        );
    }
    if let Some(output_schema) = &tool.output_schema {
        cx.error_spanned_by(
            output_schema,
            "a #[fence_boundary] tool sends its result as one fenced text block, never as \
             `structuredContent`, so it cannot declare an `output_schema`: an MCP client that \
             follows the spec rejects a result without the structured content its schema \
             promises (the Python SDK raises `RuntimeError`); remove `output_schema`",
        );
    }
    check_structured(cx, sig);
    registered
}

/// Reports rmcp's structured output: a return type `Json<T>` or `Result<Json<T>, E>`, which
/// `#[tool]` recognises by these last segments (whatever path leads to them) and gives an
/// output schema.
fn check_structured(cx: &Ctxt, sig: &Signature) {
    let ReturnType::Type(_, ret) = &sig.output else {
        return;
    };
    let is_json = |ty: &Type| {
        shape::last_segment(ty).is_some_and(|seg| {
            seg.ident == "Json" && matches!(seg.arguments, PathArguments::AngleBracketed(_))
        })
    };
    let json = if is_json(ret) {
        Some(&**ret)
    } else {
        shape::last_segment(ret)
            .filter(|seg| seg.ident == "Result")
            .and_then(|seg| shape::type_argument(&seg.arguments, 0))
            .filter(|ok| is_json(ok))
    };
    if let Some(json) = json {
        cx.error_spanned_by(
            json,
            "`Json<T>` is rmcp's structured output, which #[fence_boundary] does not send: \
             `structuredContent` reaches the client beside the fence, unlabelled, where no \
             marker tells the model it is untrusted; return `T` itself (with \
             `#[derive(serde::Serialize, fence_runtime::Fenced)]`), which is sent as JSON in \
             one fenced text block",
        );
    }
}

/// For a method, a check that rmcp's `#[tool]` was not expanded before the boundary: `#[tool]`
/// leaves `Self::<name>_tool_attr`, which takes precedence over the fallback declared here, and
/// the fallback's return type is the only one `boundary_above_tool` accepts. Without a receiver
/// the function may be free, where `Self` does not exist, so nothing is checked.
pub(crate) fn below_tool_check(sig: &Signature) -> TokenStream {
    if sig.receiver().is_none() {
        return TokenStream::new();
    }
    let attr_fn = format_ident!("{}_tool_attr", sig.ident, span = Span::call_site());
    let fallback = syn::Ident::new("__FenceNotBelowTool", Span::mixed_site());
    let param = syn::Ident::new("__FenceT", Span::mixed_site());
    let private = private::path(Span::call_site());
    quote! {
        trait #fallback {
            fn #attr_fn() -> #private::NotAnRmcpTool {
                #private::NotAnRmcpTool
            }
        }
        impl<#param: ?::core::marker::Sized> #fallback for #param {}
        #private::boundary_above_tool(<Self>::#attr_fn);
    }
}
