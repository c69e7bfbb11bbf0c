//! Rules about `#[fence]` keys that need more than one attribute at a time.

use quote::ToTokens;
use syn::{Member, Type};

use crate::ast::{Container, Field, Shape};
use crate::ctxt::Ctxt;

pub(crate) fn check(cx: &Ctxt, cont: &Container<'_>) {
    let attrs = &cont.attrs;
    if let (Some(tool), true) = (attrs.tool.at(), attrs.task.is_set()) {
        cx.error_spanned_by(
            tool,
            "`tool` and `task` cannot be combined in #[fence]: a task payload is fenced under \
             `task:<origin>`, never under a tool",
        );
    }
    if let (true, Shape::Enum(variants)) = (attrs.task.is_set(), &cont.shape) {
        if variants.is_empty() {
            if let Some(task) = attrs.task.at() {
                cx.error_spanned_by(
                    task,
                    "a #[fence(task)] enum needs variants that carry a #[fence(provenance)] field",
                );
            }
        }
    }
    for variant in cont.variants() {
        check_content(cx, cont, &variant.fields);
        check_provenance(cx, cont, variant.ident, &variant.fields);
    }
    if let Shape::Enum(variants) = &cont.shape {
        if variants.iter().any(|v| v.content().is_some()) {
            for variant in variants.iter().filter(|v| v.content().is_none()) {
                cx.error_spanned_by(
                    variant.ident,
                    format!(
                        "variant `{}` has no #[fence(content)] field, but other variants do: \
                         mark one field in every variant, or in none",
                        variant.ident.map(ToString::to_string).unwrap_or_default()
                    ),
                );
            }
        }
    }
}

fn check_content(cx: &Ctxt, cont: &Container<'_>, fields: &[Field<'_>]) {
    let mut marked = fields.iter().filter(|field| field.attrs.content.is_set());
    let first = marked.next();
    for field in marked {
        cx.error_spanned_by(
            field.attrs.content.at(),
            format!(
                "`content` is already on field `{}`: only one field holds what the model reads",
                member_name(&first.expect("a first content field").member)
            ),
        );
    }
    if cont.attrs.display.is_set() {
        for field in fields.iter().filter(|field| field.attrs.content.is_set()) {
            cx.error_spanned_by(
                field.attrs.content.at(),
                "`content` cannot be combined with #[fence(display)]: the type renders with \
                 `Display`, so a content field would be ignored; remove one of them",
            );
        }
    }
}

fn check_provenance(
    cx: &Ctxt,
    cont: &Container<'_>,
    variant: Option<&syn::Ident>,
    fields: &[Field<'_>],
) {
    let task = cont.attrs.task.is_set();
    let mut first: Option<&Field<'_>> = None;
    for field in fields
        .iter()
        .filter(|field| field.attrs.provenance.is_set())
    {
        let at = field.attrs.provenance.at();
        if !task {
            cx.error_spanned_by(
                at,
                "`provenance` needs #[fence(task)] on the type: only a task payload carries a \
                 provenance",
            );
        } else if let Some(first) = first {
            cx.error_spanned_by(
                at,
                format!(
                    "a task payload has one provenance, and `provenance` is already on field `{}`",
                    member_name(&first.member)
                ),
            );
        }
        if field.attrs.content.is_set() {
            cx.error_spanned_by(
                at,
                "a field cannot be both `content` and `provenance`: the provenance is never part \
                 of what the model reads",
            );
        }
        if !is_task_provenance(field.ty) {
            cx.error_spanned_by(
                field.ty,
                format!(
                    "the #[fence(provenance)] field must have type `fence_runtime::TaskProvenance`, \
                     not `{}`",
                    field.ty.to_token_stream().to_string().replace(' ', "")
                ),
            );
        }
        first.get_or_insert(field);
    }
    if task && first.is_none() {
        let message = "a #[fence(task)] payload needs a field of type `TaskProvenance` marked \
                       #[fence(provenance)]: its trust decides whether it is fenced";
        match variant {
            Some(variant) => cx.error_spanned_by(
                variant,
                format!("variant `{variant}` has no #[fence(provenance)] field; {message}"),
            ),
            None => cx.error_spanned_by(cont.attrs.task.at(), message),
        }
    }
}

/// Whether `ty` names `TaskProvenance` (through any path). The expansion's own type check
/// catches an alias that names something else.
fn is_task_provenance(ty: &Type) -> bool {
    match ty {
        Type::Path(path) => {
            path.qself.is_none()
                && path
                    .path
                    .segments
                    .last()
                    .is_some_and(|last| last.ident == "TaskProvenance" && last.arguments.is_none())
        }
        Type::Group(group) => is_task_provenance(&group.elem),
        Type::Paren(paren) => is_task_provenance(&paren.elem),
        _ => false,
    }
}

pub(crate) fn member_name(member: &Member) -> String {
    match member {
        Member::Named(ident) => ident.to_string(),
        Member::Unnamed(index) => index.index.to_string(),
    }
}
