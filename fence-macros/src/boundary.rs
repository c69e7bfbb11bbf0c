//! Expands `#[fence_boundary]`.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{
    Block, Expr, GenericArgument, Item, ItemFn, PathArguments, ReturnType, Stmt, TraitItemFn, Type,
    TypeParamBound,
};

use crate::attr;
use crate::ctxt::Ctxt;

pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let cx = Ctxt::new();
    let boundary = attr::Boundary::parse(&cx, args);
    if let (Some(tool), true) = (boundary.tool.at(), boundary.task.is_set()) {
        cx.error_spanned_by(
            tool,
            "`tool` and `task` cannot be combined in #[fence_boundary]: a task boundary fences \
             under `task:<origin>`, a tool boundary under `tool:<name>`",
        );
    }
    let rewritten = parse_fn(&cx, item.clone()).and_then(|func| {
        let kind = if boundary.task.is_set() {
            Kind::Task
        } else {
            Kind::Tool {
                explicit: boundary.tool.get().map(syn::LitStr::value),
            }
        };
        rewrite(&cx, func, &kind)
    });
    match cx.check() {
        Ok(()) => rewritten.expect("no error, so the function was rewritten"),
        // The function as written, so its own uses do not add errors to ours.
        Err(err) => {
            let mut tokens = err.to_compile_error();
            tokens.extend(item);
            tokens
        }
    }
}

enum Kind {
    Tool { explicit: Option<String> },
    Task,
}

impl Kind {
    fn output_type(&self, span: Span) -> TokenStream {
        match self {
            Kind::Tool { .. } => quote_spanned!(span=> ::fence_runtime::__private::ToolOutput),
            Kind::Task => quote_spanned!(span=> ::fence_runtime::__private::ModelContent),
        }
    }

    /// Turns the handler's own result into the fenced output. The trait is named through the
    /// user's own return type tokens, so an unfenceable type is reported at that type.
    fn convert(&self, value: &syn::Ident, fn_name: &str, ret: &Type) -> TokenStream {
        let (to_trait, method) = match self {
            Kind::Tool { .. } => (
                quote!(::fence_runtime::__private::IntoToolOutput),
                quote!(into_tool_output),
            ),
            Kind::Task => (
                quote!(::fence_runtime::__private::IntoTaskContent),
                quote!(into_task_content),
            ),
        };
        let function = if contains_impl_trait(ret) {
            // `impl Trait` cannot be named in a path; the opaque type is still checked.
            quote!(#to_trait::#method)
        } else {
            quote!(<#ret as #to_trait>::#method)
        };
        match self {
            Kind::Tool { explicit } => {
                let explicit = if let Some(name) = explicit {
                    quote!(::core::option::Option::Some(#name))
                } else {
                    quote!(::core::option::Option::None)
                };
                quote!(#function(#value, #explicit, #fn_name))
            }
            Kind::Task => quote!(#function(#value)),
        }
    }
}

/// The annotated function, or `None` after reporting why it is not one.
fn parse_fn(cx: &Ctxt, item: TokenStream) -> Option<ItemFn> {
    if let Ok(func) = syn::parse2::<ItemFn>(item.clone()) {
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

/// How the function hands back its result.
enum Shape {
    /// `fn f() -> T`
    Sync,
    /// `async fn f() -> T`
    Async,
    /// `fn f() -> Pin<Box<dyn Future<Output = T> + ..>>`, as `#[async_trait]` writes methods.
    BoxedFuture,
    /// `fn f() -> impl Future<Output = T> + ..`
    ImplFuture,
}

fn rewrite(cx: &Ctxt, mut func: ItemFn, kind: &Kind) -> Option<TokenStream> {
    let sig = &mut func.sig;
    if let Some(constness) = &sig.constness {
        cx.error_spanned_by(
            constness,
            "#[fence_boundary] cannot go on a `const fn`: fencing allocates at run time; remove \
             `const`",
        );
    }
    let ReturnType::Type(arrow, ret) = &mut sig.output else {
        cx.error_spanned_by(
            &sig.ident,
            format!(
                "`{}` returns nothing, so there is nothing to fence: a #[fence_boundary] fn \
                 returns the tool's result",
                sig.ident
            ),
        );
        return None;
    };
    let arrow = *arrow;
    let (shape, result_ty) = if sig.asyncness.is_some() {
        (Shape::Async, (**ret).clone())
    } else if let Some(output) = future_output(ret, true) {
        (Shape::BoxedFuture, output.clone())
    } else if let Some(output) = future_output(ret, false) {
        (Shape::ImplFuture, output.clone())
    } else {
        (Shape::Sync, (**ret).clone())
    };
    check_result_type(cx, &result_ty)?;
    let original_ret = (**ret).clone();
    let output = kind.output_type(result_ty.span());
    match shape {
        Shape::Sync | Shape::Async => sig.output = syn::parse_quote!(#arrow #output),
        Shape::BoxedFuture | Shape::ImplFuture => {
            *future_output(ret, matches!(shape, Shape::BoxedFuture)).expect("matched above") =
                syn::parse2(output).expect("a type");
        }
    }

    let fn_name = sig.ident.unraw().to_string().replace('_', "-");
    let value = syn::Ident::new("__fence_value", Span::mixed_site());
    let future = syn::Ident::new("__fence_future", Span::mixed_site());
    let convert = kind.convert(&value, &fn_name, &result_ty);
    let body = unsafe_wrapped(&func.block, func.sig.unsafety.is_some());
    let block: TokenStream = match shape {
        // Input:  fn f(x: X) -> T { body }
        // Output: fn f(x: X) -> ToolOutput {
        //             let value: T = (move || -> T { body })();   // `return` and `?` as written
        //             IntoToolOutput::into_tool_output(value, ..)
        //         }
        Shape::Sync => {
            let call = immediately_called_closure(&body, Some(&result_ty));
            let annotation = (!contains_impl_trait(&result_ty)).then(|| quote!(: #result_ty));
            quote! {{
                #[allow(unused_unsafe, clippy::redundant_closure_call)]
                let #value #annotation = #call;
                #convert
            }}
        }
        // Input:  async fn f(x: X) -> T { body }
        // Output: async fn f(x: X) -> ToolOutput {
        //             let value: T = async move { body }.await;
        //             IntoToolOutput::into_tool_output(value, ..)
        //         }
        Shape::Async => {
            let annotation = (!contains_impl_trait(&result_ty)).then(|| quote!(: #result_ty));
            quote! {{
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
        Shape::BoxedFuture => {
            if let Some((pin, inner)) = boxed_async_block(&func.block) {
                quote! {{
                    #pin(async move {
                        let #value = #inner.await;
                        #convert
                    })
                }}
            } else {
                let call = immediately_called_closure(&body, Some(&original_ret));
                quote! {{
                    #[allow(unused_unsafe, clippy::redundant_closure_call)]
                    let #future = #call;
                    ::fence_runtime::__private::Box::pin(async move {
                        let #value = #future.await;
                        #convert
                    })
                }}
            }
        }
        // Input:  fn f() -> impl Future<Output = T> { body }
        // Output: fn f() -> impl Future<Output = ToolOutput> {
        //             let future = (move || { body })();
        //             async move { let value = future.await; convert }
        //         }
        Shape::ImplFuture => {
            let call = immediately_called_closure(&body, None);
            quote! {{
                #[allow(unused_unsafe, clippy::redundant_closure_call)]
                let #future = #call;
                async move {
                    let #value = #future.await;
                    #convert
                }
            }}
        }
    };
    func.block = Box::new(syn::parse2(block).expect("a block"));
    Some(func.into_token_stream())
}

/// Rejects result types that cannot be fenced for reasons the macro can see.
fn check_result_type(cx: &Ctxt, ty: &Type) -> Option<()> {
    if let Type::Tuple(tuple) = ty {
        if tuple.elems.is_empty() {
            cx.error_spanned_by(
                ty,
                "a #[fence_boundary] fn returns the tool's result, and `()` has nothing to fence",
            );
            return None;
        }
    }
    let named = last_segment(ty).filter(|seg| is_fenced_type(seg));
    let wrapper = last_segment(ty).filter(|seg| seg.ident == "Result" || seg.ident == "Option");
    let ok = wrapper
        .and_then(|seg| type_argument(&seg.arguments, 0))
        .and_then(last_segment)
        .filter(|seg| is_fenced_type(seg));
    if let Some(seg) = named.or(ok) {
        cx.error_spanned_by(
            ty,
            format!(
                "`{}` is already fenced: return the tool's own result and let #[fence_boundary] \
                 fence it, or remove #[fence_boundary]",
                seg.ident
            ),
        );
        return None;
    }
    let err = wrapper
        .filter(|seg| seg.ident == "Result")
        .and_then(|seg| type_argument(&seg.arguments, 1))
        .filter(|err| last_segment(err).is_some_and(is_fenced_type));
    if let Some(err) = err {
        cx.error_spanned_by(
            err,
            format!(
                "`{}` is already fenced, and #[fence_boundary] fences a tool's error too: \
                 return the error's own type (any `Display` type) and let #[fence_boundary] \
                 fence it",
                last_segment(err).expect("checked above").ident
            ),
        );
        return None;
    }
    Some(())
}

/// `ToolOutput`, `ModelContent` or `FencedBlock`, by any path.
fn is_fenced_type(seg: &syn::PathSegment) -> bool {
    ["ToolOutput", "ModelContent", "FencedBlock"]
        .iter()
        .any(|name| seg.ident == name)
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last(),
        Type::Group(group) => last_segment(&group.elem),
        Type::Paren(paren) => last_segment(&paren.elem),
        _ => None,
    }
}

/// The `index`th type argument of a path segment.
fn type_argument(arguments: &PathArguments, index: usize) -> Option<&Type> {
    match arguments {
        PathArguments::AngleBracketed(args) => args
            .args
            .iter()
            .filter_map(|arg| match arg {
                GenericArgument::Type(ty) => Some(ty),
                _ => None,
            })
            .nth(index),
        _ => None,
    }
}

/// The `Output` type of `Pin<Box<dyn Future<Output = T> + ..>>` (`boxed`) or of
/// `impl Future<Output = T> + ..`.
fn future_output(ty: &mut Type, boxed: bool) -> Option<&mut Type> {
    let bounds = if boxed {
        let pinned = single_type_argument(ty, "Pin")?;
        match single_type_argument(pinned, "Box")? {
            Type::TraitObject(object) => &mut object.bounds,
            _ => return None,
        }
    } else {
        match ty {
            Type::ImplTrait(imp) => &mut imp.bounds,
            _ => return None,
        }
    };
    bounds.iter_mut().find_map(|bound| {
        let TypeParamBound::Trait(bound) = bound else {
            return None;
        };
        let future = bound.path.segments.last_mut()?;
        if future.ident != "Future" {
            return None;
        }
        let PathArguments::AngleBracketed(args) = &mut future.arguments else {
            return None;
        };
        args.args.iter_mut().find_map(|arg| match arg {
            GenericArgument::AssocType(assoc) if assoc.ident == "Output" => Some(&mut assoc.ty),
            _ => None,
        })
    })
}

/// `T` in `Name<T>`, where `Name` is the last segment of the path.
fn single_type_argument<'t>(ty: &'t mut Type, name: &str) -> Option<&'t mut Type> {
    let Type::Path(path) = ty else { return None };
    let last = path.path.segments.last_mut()?;
    if last.ident != name {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &mut last.arguments else {
        return None;
    };
    if args.args.len() != 1 {
        return None;
    }
    match args.args.first_mut()? {
        GenericArgument::Type(ty) => Some(ty),
        _ => None,
    }
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
fn unsafe_wrapped(block: &Block, is_unsafe: bool) -> TokenStream {
    if is_unsafe {
        quote!({ unsafe #block })
    } else {
        block.to_token_stream()
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

fn contains_impl_trait(ty: &Type) -> bool {
    use syn::visit::Visit;
    struct Finder(bool);
    impl<'ast> Visit<'ast> for Finder {
        fn visit_type_impl_trait(&mut self, _: &'ast syn::TypeImplTrait) {
            self.0 = true;
        }
    }
    let mut finder = Finder(false);
    finder.visit_type(ty);
    finder.0
}
