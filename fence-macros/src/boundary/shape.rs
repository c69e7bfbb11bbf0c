//! What shape a handler's return type has, and what result it hands back.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::{GenericArgument, PathArguments, ReturnType, Signature, Type, TypeParamBound};

use crate::ctxt::Ctxt;

/// How the function hands back its result.
#[derive(Clone, Copy)]
pub(crate) enum Shape {
    /// `fn f() -> T`
    Sync,
    /// `async fn f() -> T`
    Async,
    /// `fn f() -> Pin<Box<dyn Future<Output = T> + ..>>`, as `#[async_trait]` writes methods.
    BoxedFuture,
    /// `fn f() -> impl Future<Output = T> + ..`
    ImplFuture,
}

/// A handler's shape and the type of the result it hands back (`T` above).
pub(crate) struct Returns {
    pub(crate) shape: Shape,
    pub(crate) result: Type,
}

/// Detects the shape and result type of a signature, reporting a signature no boundary can go
/// on (a `const fn`, a handler that returns nothing, a result that is already fenced, or one
/// that plainly cannot be: see [`check_result_type`]). `task` for `#[fence_boundary(task)]`.
pub(crate) fn detect(cx: &Ctxt, sig: &Signature, task: bool) -> Option<Returns> {
    if let Some(constness) = &sig.constness {
        cx.error_spanned_by(
            constness,
            "#[fence_boundary] cannot go on a `const fn`: fencing allocates at run time; remove \
             `const`",
        );
    }
    let ReturnType::Type(_, ret) = &sig.output else {
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
    let mut ret = (**ret).clone();
    let (shape, result) = if sig.asyncness.is_some() {
        (Shape::Async, ret)
    } else if let Some(output) = future_output(&mut ret, true) {
        (Shape::BoxedFuture, output.clone())
    } else if let Some(output) = future_output(&mut ret, false) {
        (Shape::ImplFuture, output.clone())
    } else {
        (Shape::Sync, ret)
    };
    check_result_type(cx, &result, task)?;
    Some(Returns { shape, result })
}

/// Replaces the result type in the signature with `output`, keeping everything else as written:
/// the return type itself for a sync or `async fn`, the future's `Output` otherwise.
pub(crate) fn rewrite_signature(sig: &mut Signature, shape: Shape, output: TokenStream) {
    let ReturnType::Type(_, ret) = &mut sig.output else {
        unreachable!("`detect` refused a signature that returns nothing")
    };
    let slot = match shape {
        Shape::Sync | Shape::Async => &mut **ret,
        Shape::BoxedFuture | Shape::ImplFuture => {
            future_output(ret, matches!(shape, Shape::BoxedFuture))
                .expect("`detect` found the future's output")
        }
    };
    *slot = syn::parse2(output).expect("a type");
}

/// Rejects result types that cannot be fenced for reasons the macro can see: `()`, an already
/// fenced type, a `Result` or `Option` from a task boundary, and a tool result that is a `Vec`
/// or a `serde_json::Value`. Every other type is left to the conversion's trait bounds, which
/// the compiler reports at the type with the runtime's message for its position.
fn check_result_type(cx: &Ctxt, ty: &Type, task: bool) -> Option<()> {
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
    if task {
        let wrapper = last_segment(ty)
            .filter(|seg| seg.ident == "Result" || seg.ident == "Option")
            .filter(|seg| type_argument(&seg.arguments, 0).is_some());
        if let Some(seg) = wrapper {
            let (what, why) = if seg.ident == "Result" {
                ("a `Result`", "has no tool error to fence")
            } else {
                ("an `Option`", "has nothing to fence for `None`")
            };
            cx.error_spanned_by(
                ty,
                format!(
                    "a #[fence_boundary(task)] fn returns the task payload itself, not {what}: \
                     the boundary makes model content of a task, and {why}; return the \
                     `#[fence(task)]` payload and handle the failure before it, or remove \
                     #[fence_boundary(task)] and call \
                     `fence_runtime::ModelContent::task_payload(&payload)` on the payload you have"
                ),
            );
            return None;
        }
        return Some(());
    }
    let payload = result_arguments(ty).map_or(ty, |(ok, _)| ok);
    if let Some(message) = plainly_unfenceable(payload) {
        cx.error_spanned_by(payload, message);
        return None;
    }
    Some(())
}

/// The `Ok` and (when written) `Err` types of a return type spelled `Result<T, E>`, or `Result<T>`
/// as an alias such as `io::Result<T>` writes it.
pub(crate) fn result_arguments(ty: &Type) -> Option<(&Type, Option<&Type>)> {
    let seg = last_segment(ty).filter(|seg| seg.ident == "Result")?;
    let ok = type_argument(&seg.arguments, 0)?;
    Some((ok, type_argument(&seg.arguments, 1)))
}

/// Why a tool's result plainly cannot be fenced, for the types users reach for first: a `Vec`
/// and a `serde_json::Value` are not `Fenced`, and no impl can make them so.
fn plainly_unfenceable(ty: &Type) -> Option<String> {
    let Type::Path(path) = ty else { return None };
    if path.qself.is_some() {
        return None;
    }
    let names: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|seg| seg.ident.to_string())
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let last = path.path.segments.last()?;
    match names[..] {
        ["Vec"] | ["std" | "alloc", "vec", "Vec"] => {
            let item = type_argument(&last.arguments, 0)?;
            let item_text = type_text(item);
            if item_text == "u8" {
                return Some(format!(
                    "`{}` is bytes, and #[fence_boundary] fences text: return a `String` \
                     (`String::from_utf8_lossy(&bytes).into_owned()`), or a struct with \
                     `#[derive(serde::Serialize, fence_runtime::Fenced)]` that holds the bytes, \
                     which renders as JSON",
                    type_text(ty)
                ));
            }
            Some(format!(
                "`{}` cannot be fenced: a list does not implement `fence_runtime::Fenced`; return \
                 a struct that holds it, such as `#[derive(serde::Serialize, \
                 fence_runtime::Fenced)] struct Items {{ items: Vec<{item_text}> }}`, which \
                 #[fence_boundary] fences as JSON",
                type_text(ty)
            ))
        }
        ["serde_json", "Value"] if last.arguments.is_none() => Some(
            "`serde_json::Value` cannot be fenced: it does not implement `fence_runtime::Fenced`; \
             return a struct with `#[derive(serde::Serialize, fence_runtime::Fenced)]`, which \
             #[fence_boundary] fences as JSON, or the JSON's text as a `String` \
             (`value.to_string()`)"
                .to_owned(),
        ),
        _ => None,
    }
}

/// A type as a user writes it, for a message: `Vec<&'a str>`, not `Vec < & 'a str >`.
fn type_text(ty: &Type) -> String {
    let text = ty.to_token_stream().to_string();
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        let prev = out.chars().last();
        let drop_space = c == ' '
            && (matches!(next, Some('<' | '>' | ',' | ':'))
                || matches!(prev, Some('<' | '&' | ':'))
                || (prev == Some('>') && next == Some('>')));
        if !drop_space {
            out.push(c);
        }
    }
    out
}

/// `ToolOutput`, `ModelContent` or `FencedBlock`, by any path.
fn is_fenced_type(seg: &syn::PathSegment) -> bool {
    ["ToolOutput", "ModelContent", "FencedBlock"]
        .iter()
        .any(|name| seg.ident == name)
}

pub(crate) fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last(),
        Type::Group(group) => last_segment(&group.elem),
        Type::Paren(paren) => last_segment(&paren.elem),
        _ => None,
    }
}

/// The `index`th type argument of a path segment.
pub(crate) fn type_argument(arguments: &PathArguments, index: usize) -> Option<&Type> {
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

pub(crate) fn contains_impl_trait(ty: &Type) -> bool {
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

#[cfg(test)]
mod tests {
    use super::{plainly_unfenceable, result_arguments, type_text};
    use syn::{Type, parse_quote};

    #[test]
    fn types_read_as_written() {
        let ty: Type = parse_quote!(Vec<&'a str>);
        assert_eq!(type_text(&ty), "Vec<&'a str>");
        let ty: Type = parse_quote!(std::collections::HashMap<String, Vec<u8>>);
        assert_eq!(type_text(&ty), "std::collections::HashMap<String, Vec<u8>>");
    }

    #[test]
    fn plainly_unfenceable_types() {
        for ty in [
            parse_quote!(Vec<u8>),
            parse_quote!(std::vec::Vec<Hit>),
            parse_quote!(serde_json::Value),
            parse_quote!(::serde_json::Value),
        ] {
            assert!(plainly_unfenceable(&ty).is_some(), "{}", type_text(&ty));
        }
        // A type of one's own may be called `Vec` or `Value`; the trait bounds judge those.
        for ty in [
            parse_quote!(Vec),
            parse_quote!(Value),
            parse_quote!(my::Vec<u8>),
            parse_quote!(String),
        ] {
            assert!(plainly_unfenceable(&ty).is_none(), "{}", type_text(&ty));
        }
    }

    #[test]
    fn result_halves() {
        let ty: Type = parse_quote!(Result<String, Failure>);
        let (ok, err) = result_arguments(&ty).expect("a Result");
        assert_eq!(type_text(ok), "String");
        assert_eq!(err.map(type_text).as_deref(), Some("Failure"));
        let ty: Type = parse_quote!(std::io::Result<String>);
        assert!(result_arguments(&ty).is_some_and(|(_, err)| err.is_none()));
        let ty: Type = parse_quote!(Result);
        assert!(result_arguments(&ty).is_none());
    }
}
