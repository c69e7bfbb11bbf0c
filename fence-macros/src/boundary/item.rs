//! The annotated item: a function whose signature is parsed and whose body is kept as tokens.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Item, Signature, TraitItemFn, Visibility, braced};

use crate::ctxt::Ctxt;

/// A function with its body as written: the body is never parsed here, so a body that does not
/// parse is reported once, by the compiler, at its own tokens, while the function keeps its
/// rewritten signature and callers see the fenced return type (tracing's `#[instrument]` does
/// the same).
#[derive(Clone)]
pub(crate) struct BoundaryFn {
    pub(crate) attrs: Vec<Attribute>,
    pub(crate) vis: Visibility,
    pub(crate) sig: Signature,
    /// The body's braces and everything inside them.
    pub(crate) body: TokenStream,
}

impl Parse for BoundaryFn {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis = input.parse()?;
        let sig = input.parse()?;
        let content;
        let braces = braced!(content in input);
        let inner: TokenStream = content.parse()?;
        let mut body = TokenStream::new();
        braces.surround(&mut body, |tokens| tokens.extend(inner));
        Ok(BoundaryFn {
            attrs,
            vis,
            sig,
            body,
        })
    }
}

impl ToTokens for BoundaryFn {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        for attr in &self.attrs {
            attr.to_tokens(tokens);
        }
        self.vis.to_tokens(tokens);
        self.sig.to_tokens(tokens);
        self.body.to_tokens(tokens);
    }
}

/// The annotated function, or `None` after reporting why it is not one.
pub(crate) fn parse(cx: &Ctxt, item: TokenStream) -> Option<BoundaryFn> {
    if let Ok(func) = syn::parse2::<BoundaryFn>(item.clone()) {
        return Some(func);
    }
    if let Ok(decl) = syn::parse2::<TraitItemFn>(item.clone()) {
        cx.error_spanned_by(
            &decl.sig,
            "#[fence_boundary] needs the function's body: put it on the implementation, and \
             declare this trait method as returning `fence_runtime::ToolOutput`",
        );
        return None;
    }
    let what = match syn::parse2::<Item>(item.clone()) {
        Ok(item) => describe(&item),
        Err(_) => None,
    };
    let message = match what {
        Some((kind, _)) => format!("#[fence_boundary] goes on a tool handler `fn`, not on {kind}"),
        None => "#[fence_boundary] goes on a tool handler `fn`".to_owned(),
    };
    match what {
        Some((_, at)) => cx.error_spanned_by(at, message),
        None => cx.error_spanned_by(item, message),
    }
    None
}

/// What kind of item this is, and its keyword's tokens.
fn describe(item: &Item) -> Option<(&'static str, TokenStream)> {
    Some(match item {
        Item::Struct(item) => ("a struct", item.struct_token.to_token_stream()),
        Item::Enum(item) => ("an enum", item.enum_token.to_token_stream()),
        Item::Union(item) => ("a union", item.union_token.to_token_stream()),
        Item::Impl(item) => ("an impl block", item.impl_token.to_token_stream()),
        Item::Trait(item) => ("a trait", item.trait_token.to_token_stream()),
        Item::Mod(item) => ("a module", item.mod_token.to_token_stream()),
        Item::Const(item) => ("a const", item.const_token.to_token_stream()),
        Item::Static(item) => ("a static", item.static_token.to_token_stream()),
        Item::Type(item) => ("a type alias", item.type_token.to_token_stream()),
        Item::Use(item) => ("a use declaration", item.use_token.to_token_stream()),
        Item::Macro(item) => ("a macro", item.mac.path.to_token_stream()),
        _ => return None,
    })
}
