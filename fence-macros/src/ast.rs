//! The derive input as borrowed syn nodes, with each field's `#[fence]` keys parsed.

use syn::{Data, DeriveInput, Generics, Ident, Index, Member, Type};

use crate::attr;
use crate::ctxt::Ctxt;

pub(crate) struct Container<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) generics: &'a Generics,
    pub(crate) attrs: attr::Container,
    pub(crate) shape: Shape<'a>,
}

pub(crate) enum Shape<'a> {
    Struct(Variant<'a>),
    Enum(Vec<Variant<'a>>),
}

/// A struct's fields, or one enum variant's.
pub(crate) struct Variant<'a> {
    /// `None` for a struct.
    pub(crate) ident: Option<&'a Ident>,
    pub(crate) fields: Vec<Field<'a>>,
}

pub(crate) struct Field<'a> {
    pub(crate) member: Member,
    pub(crate) ty: &'a Type,
    pub(crate) attrs: attr::Field,
}

impl<'a> Container<'a> {
    /// `None` for a union, after reporting it.
    pub(crate) fn from_ast(cx: &Ctxt, input: &'a DeriveInput) -> Option<Self> {
        let attrs = attr::Container::from_attrs(cx, &input.attrs);
        let shape = match &input.data {
            Data::Struct(data) => Shape::Struct(Variant::new(cx, None, &data.fields)),
            Data::Enum(data) => Shape::Enum(
                data.variants
                    .iter()
                    .map(|variant| {
                        if let Some(attr) =
                            variant.attrs.iter().find(|a| a.path().is_ident("fence"))
                        {
                            cx.error_spanned_by(
                                attr,
                                "#[fence] does not go on an enum variant: put #[fence(..)] on the \
                                 enum, or `content`/`provenance` on a variant's field",
                            );
                        }
                        Variant::new(cx, Some(&variant.ident), &variant.fields)
                    })
                    .collect(),
            ),
            Data::Union(data) => {
                cx.error_spanned_by(
                    data.union_token,
                    "#[derive(Fenced)] does not support unions: a union cannot say which of its \
                     fields holds the content; use a struct or an enum",
                );
                return None;
            }
        };
        Some(Container {
            ident: &input.ident,
            generics: &input.generics,
            attrs,
            shape,
        })
    }

    pub(crate) fn variants(&self) -> &[Variant<'a>] {
        match &self.shape {
            Shape::Struct(variant) => core::slice::from_ref(variant),
            Shape::Enum(variants) => variants,
        }
    }
}

impl<'a> Variant<'a> {
    fn new(cx: &Ctxt, ident: Option<&'a Ident>, fields: &'a syn::Fields) -> Self {
        let fields = fields
            .iter()
            .enumerate()
            .map(|(i, field)| Field {
                member: field
                    .ident
                    .clone()
                    .map_or_else(|| Member::Unnamed(Index::from(i)), Member::Named),
                ty: &field.ty,
                attrs: attr::Field::from_attrs(cx, &field.attrs),
            })
            .collect();
        Variant { ident, fields }
    }

    /// The field marked `#[fence(content)]`, if any.
    pub(crate) fn content(&self) -> Option<&Field<'a>> {
        self.fields
            .iter()
            .find(|field| field.attrs.content.is_set())
    }

    /// The field marked `#[fence(provenance)]`, if any.
    pub(crate) fn provenance(&self) -> Option<&Field<'a>> {
        self.fields
            .iter()
            .find(|field| field.attrs.provenance.is_set())
    }
}
