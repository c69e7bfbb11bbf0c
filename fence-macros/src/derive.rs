//! Expands `#[derive(Fenced)]`.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{DeriveInput, Ident, Type, WhereClause, parse_quote};

use crate::ast::{Container, Field, Shape, Variant};
use crate::ctxt::Ctxt;
use crate::{private, valid};

pub(crate) fn expand(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(err) => return err.to_compile_error(),
    };
    let cx = Ctxt::new();
    let Some(cont) = Container::from_ast(&cx, &input) else {
        return cx
            .check()
            .map_or_else(|err| err.to_compile_error(), |()| TokenStream::new());
    };
    valid::check(&cx, &cont);
    match cx.check() {
        Ok(()) => impls(&cont),
        Err(err) => {
            let mut tokens = err.to_compile_error();
            tokens.extend(stubs(&cont));
            tokens
        }
    }
}

// Input:
//     #[derive(Fenced)]
//     #[fence(task)]
//     struct InboundEmail { #[fence(provenance)] provenance: TaskProvenance, #[fence(content)] body: String }
//
// Output:
//     impl Fenced for InboundEmail {
//         fn render(&self, out: &mut ContentWriter<'_>) -> Result<(), RenderError> {
//             (&ContentField(&self.body)).render_field(out)   // text if `Fenced`, else JSON
//         }
//     }
//     impl FencedTask for InboundEmail {
//         fn provenance(&self) -> &TaskProvenance { &self.provenance }
//     }
//
// No `From<InboundEmail> for ModelContent`: a trusted payload is unfenced, so it becomes model
// content only by a name a reviewer can grep for, `ModelContent::task_payload(&email)` (or a
// `#[fence_boundary(task)]` fn, which calls it), never by `.into()`.
fn impls(cont: &Container<'_>) -> TokenStream {
    let private = private::path(Span::call_site());
    let ident = cont.ident;
    let (impl_generics, ty_generics, _) = cont.generics.split_for_impl();
    let where_clause = where_with_bounds(cont);
    let out = Ident::new("__out", Span::mixed_site());
    let render = render_body(cont, &out);
    let fixed_tool = cont.attrs.tool.get().map(|name| {
        quote! {
            fn fixed_tool() -> ::core::option::Option<&'static str> {
                ::core::option::Option::Some(#name)
            }
        }
    });
    let fenced = quote! {
        #[automatically_derived]
        impl #impl_generics #private::Fenced for #ident #ty_generics #where_clause {
            fn render(
                &self,
                #out: &mut #private::ContentWriter<'_>,
            ) -> ::core::result::Result<(), #private::RenderError> {
                #render
            }
            #fixed_tool
        }
    };
    let task = cont.attrs.task.is_set().then(|| {
        let provenance = provenance_body(cont);
        quote! {
            #[automatically_derived]
            impl #impl_generics #private::FencedTask for #ident #ty_generics #where_clause {
                fn provenance(&self) -> &#private::TaskProvenance {
                    #provenance
                }
            }
        }
    });
    let tool = cont.attrs.tool.get().map(|name| {
        let payload = Ident::new("__payload", Span::mixed_site());
        quote! {
            #[automatically_derived]
            impl #impl_generics ::core::convert::From<#ident #ty_generics>
                for #private::ToolOutput #where_clause
            {
                fn from(#payload: #ident #ty_generics) -> Self {
                    #private::fixed_tool_output(&#payload, #name)
                }
            }
        }
    });
    quote!(#fenced #task #tool)
}

/// The body of `render`.
fn render_body(cont: &Container<'_>, out: &Ident) -> TokenStream {
    let at_type = cont.ident.span();
    let private = private::path(at_type);
    if cont.attrs.display.is_set() {
        return quote_spanned!(at_type=> #private::render_display(self, #out));
    }
    let render_json = quote_spanned!(at_type=> #private::render_json(self, #out));
    let field = Ident::new("__field", Span::mixed_site());
    // Autoref dispatch: `ContentField<T>: RenderFieldFenced` when `T: Fenced`, else
    // `&ContentField<T>: RenderFieldJson`. Only the method name carries the field type's span,
    // so a type that is neither is reported there, and lints do not mistake the `&` for user
    // code.
    let render_field = |ty: &Type| {
        let private = private::path(ty.span());
        if is_string(ty) {
            // `String`, the usual content field, is text: the dispatch would pick its own
            // rendering, and resolving it costs a fifth of what the derive adds to compile time
            // (`scripts/compile-cost.sh`). A type of one's own named `String` must be `Fenced`.
            return quote_spanned!(ty.span()=> #private::Fenced::render(#field, #out));
        }
        let method = Ident::new("render_field", ty.span());
        let private = private::path(Span::call_site());
        quote! {
            #[allow(unused_imports)]
            use #private::{RenderFieldFenced as _, RenderFieldJson as _};
            (&#private::ContentField(#field)).#method(#out)
        }
    };
    match &cont.shape {
        Shape::Struct(variant) => match variant.content() {
            Some(content) => {
                let member = &content.member;
                let render_field = render_field(content.ty);
                quote! {
                    let #field = &self.#member;
                    #render_field
                }
            }
            None => render_json,
        },
        Shape::Enum(variants) if variants.iter().any(|v| v.content().is_some()) => {
            let arms = variants.iter().map(|variant| {
                let content = variant.content();
                let pattern = variant_pattern(cont.ident, variant, content, &field);
                let render_field = render_field(content.expect("checked by valid").ty);
                quote!(#pattern => { #render_field })
            });
            quote! {
                match self {
                    #(#arms)*
                }
            }
        }
        Shape::Enum(_) => render_json,
    }
}

/// Whether `ty` is spelled `String`, `std::string::String` or `alloc::string::String`.
fn is_string(ty: &Type) -> bool {
    let Type::Path(syn::TypePath { qself: None, path }) = ty else {
        return false;
    };
    let Some(names) = path
        .segments
        .iter()
        .map(|segment| {
            segment
                .arguments
                .is_none()
                .then(|| segment.ident.to_string())
        })
        .collect::<Option<Vec<String>>>()
    else {
        return false;
    };
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    matches!(
        names[..],
        ["String"] | ["std" | "alloc", "string", "String"]
    )
}

/// The body of `FencedTask::provenance`.
fn provenance_body(cont: &Container<'_>) -> TokenStream {
    match &cont.shape {
        Shape::Struct(variant) => {
            let member = &variant.provenance().expect("checked by valid").member;
            quote!(&self.#member)
        }
        Shape::Enum(variants) => {
            let binding = Ident::new("__provenance", Span::mixed_site());
            let arms = variants.iter().map(|variant| {
                let pattern = variant_pattern(cont.ident, variant, variant.provenance(), &binding);
                quote!(#pattern => #binding,)
            });
            quote! {
                match self {
                    #(#arms)*
                }
            }
        }
    }
}

/// `Enum::Variant { member: binding, .. }`, which matches tuple variants too.
fn variant_pattern(
    enum_ident: &Ident,
    variant: &Variant<'_>,
    field: Option<&Field<'_>>,
    binding: &Ident,
) -> TokenStream {
    let ident = variant.ident.expect("an enum variant has a name");
    let member = &field.expect("checked by valid").member;
    quote!(#enum_ident::#ident { #member: #binding, .. })
}

/// The container's where clause plus the bounds rendering needs, each spanned where a failure
/// should point.
fn where_with_bounds(cont: &Container<'_>) -> Option<WhereClause> {
    let private = private::path(Span::call_site());
    let generics = cont.generics;
    if generics.type_params().next().is_none() && generics.const_params().next().is_none() {
        // Nothing generic: the body's own calls name every unmet requirement, at the type.
        return generics.where_clause.clone();
    }
    let ident = cont.ident;
    let (_, ty_generics, _) = generics.split_for_impl();
    let this: Type = parse_quote!(#ident #ty_generics);
    let mut where_clause = generics
        .where_clause
        .clone()
        .unwrap_or_else(|| parse_quote!(where));
    if cont.attrs.display.is_set() {
        where_clause.predicates.push(predicate_at(
            ident.span(),
            &quote!(#this: ::core::fmt::Display),
        ));
        return Some(where_clause);
    }
    let content_fields: Vec<&Field<'_>> = cont
        .variants()
        .iter()
        .filter_map(Variant::content)
        .collect();
    if content_fields.is_empty() {
        where_clause.predicates.push(predicate_at(
            ident.span(),
            &quote!(#this: #private::RenderJson),
        ));
    }
    for field in content_fields {
        let ty = field.ty;
        if !mentions_type_param(ty, generics) {
            continue;
        }
        let bound = if is_type_param(ty, generics) {
            quote!(#ty: #private::Fenced)
        } else {
            quote!(#ty: #private::RenderJson)
        };
        where_clause
            .predicates
            .push(predicate_at(ty.span(), &bound));
    }
    Some(where_clause)
}

/// A where predicate whose own tokens carry `span`, so an unmet bound points there.
fn predicate_at(span: Span, predicate: &TokenStream) -> syn::WherePredicate {
    syn::parse2(quote_spanned!(span=> #predicate)).expect("a where predicate")
}

fn is_type_param(ty: &Type, generics: &syn::Generics) -> bool {
    match ty {
        Type::Path(path) if path.qself.is_none() => path
            .path
            .get_ident()
            .is_some_and(|ident| generics.type_params().any(|param| param.ident == *ident)),
        _ => false,
    }
}

fn mentions_type_param(ty: &Type, generics: &syn::Generics) -> bool {
    use syn::visit::Visit;
    struct Finder<'g> {
        generics: &'g syn::Generics,
        found: bool,
    }
    impl<'ast> Visit<'ast> for Finder<'_> {
        fn visit_path(&mut self, path: &'ast syn::Path) {
            if let Some(first) = path.segments.first() {
                if self
                    .generics
                    .type_params()
                    .any(|param| param.ident == first.ident)
                {
                    self.found = true;
                }
            }
            syn::visit::visit_path(self, path);
        }
    }
    let mut finder = Finder {
        generics,
        found: false,
    };
    finder.visit_type(ty);
    finder.found
}

/// What to emit next to errors, so uses of the type elsewhere do not cascade into more.
fn stubs(cont: &Container<'_>) -> TokenStream {
    let private = private::path(Span::call_site());
    let ident = cont.ident;
    let (impl_generics, ty_generics, where_clause) = cont.generics.split_for_impl();
    let task = cont.attrs.task.is_set().then(|| {
        quote! {
            #[automatically_derived]
            impl #impl_generics #private::FencedTask for #ident #ty_generics #where_clause {
                fn provenance(&self) -> &#private::TaskProvenance {
                    ::core::unreachable!()
                }
            }
        }
    });
    let tool = cont.attrs.tool.is_set().then(|| {
        quote! {
            #[automatically_derived]
            impl #impl_generics ::core::convert::From<#ident #ty_generics>
                for #private::ToolOutput #where_clause
            {
                fn from(_: #ident #ty_generics) -> Self {
                    ::core::unreachable!()
                }
            }
        }
    });
    quote! {
        #[automatically_derived]
        impl #impl_generics #private::Fenced for #ident #ty_generics #where_clause {
            fn render(
                &self,
                _: &mut #private::ContentWriter<'_>,
            ) -> ::core::result::Result<(), #private::RenderError> {
                ::core::unreachable!()
            }
        }
        #task
        #tool
    }
}
