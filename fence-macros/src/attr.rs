//! Parses `#[fence(..)]` and `#[fence_boundary(..)]` into typed values.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, Expr, ExprLit, Lit, LitStr, Token};

use crate::ctxt::Ctxt;

/// One key of an attribute: its value, and the tokens of its first occurrence for spans.
///
/// Every key is set through [`Key::set`], so the duplicate-key check is written once.
pub(crate) struct Key<T> {
    attr: &'static str,
    name: &'static str,
    at: Option<TokenStream>,
    value: Option<T>,
}

impl<T> Key<T> {
    fn new(attr: &'static str, name: &'static str) -> Self {
        Key {
            attr,
            name,
            at: None,
            value: None,
        }
    }

    fn set<A: ToTokens>(&mut self, cx: &Ctxt, at: A, value: T) {
        if self.value.is_some() {
            cx.error_spanned_by(
                at,
                format!("duplicate key `{}` in {}", self.name, self.attr),
            );
        } else {
            self.at = Some(at.into_token_stream());
            self.value = Some(value);
        }
    }

    pub(crate) fn get(&self) -> Option<&T> {
        self.value.as_ref()
    }

    pub(crate) fn is_set(&self) -> bool {
        self.value.is_some()
    }

    /// The tokens where the key was written, for spanning errors about it.
    pub(crate) fn at(&self) -> Option<&TokenStream> {
        self.at.as_ref()
    }
}

/// `#[fence(..)]` on the type deriving `Fenced`.
pub(crate) struct Container {
    pub(crate) display: Key<()>,
    pub(crate) task: Key<()>,
    pub(crate) tool: Key<LitStr>,
}

/// `#[fence(..)]` on a field.
pub(crate) struct Field {
    pub(crate) content: Key<()>,
    pub(crate) provenance: Key<()>,
}

/// The arguments of `#[fence_boundary(..)]`.
pub(crate) struct Boundary {
    pub(crate) tool: Key<LitStr>,
    pub(crate) task: Key<()>,
}

/// rmcp's `#[tool(..)]` on the same function, as far as the boundary needs it. rmcp reports
/// its own syntax errors, so a key this cannot read is skipped, not reported.
pub(crate) struct RmcpTool {
    /// `name = ".."`: the name rmcp registers instead of the function's.
    pub(crate) name: Option<LitStr>,
    /// The `output_schema` key, when present.
    pub(crate) output_schema: Option<TokenStream>,
}

impl RmcpTool {
    /// rmcp's `#[tool]` among `attrs`, recognised as rmcp's own `#[tool_router]` does: by the
    /// last segment of its path.
    pub(crate) fn from_attrs(attrs: &[Attribute]) -> Option<Self> {
        let attr = attrs.iter().find(|attr| {
            attr.path()
                .segments
                .last()
                .is_some_and(|seg| seg.ident == "tool")
        })?;
        let mut this = RmcpTool {
            name: None,
            output_schema: None,
        };
        if let syn::Meta::List(_) = attr.meta {
            // An error here is rmcp's to report, with its own message.
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("name") {
                    this.name = Some(meta.value()?.parse()?);
                    Ok(())
                } else {
                    if meta.path.is_ident("output_schema") {
                        this.output_schema = Some(meta.path.to_token_stream());
                    }
                    skip_value(&meta)
                }
            });
        }
        Some(this)
    }
}

const FENCE: &str = "#[fence]";
const BOUNDARY: &str = "#[fence_boundary]";

impl Container {
    pub(crate) fn from_attrs(cx: &Ctxt, attrs: &[Attribute]) -> Self {
        let mut this = Container {
            display: Key::new(FENCE, "display"),
            task: Key::new(FENCE, "task"),
            tool: Key::new(FENCE, "tool"),
        };
        for_each_fence_key(cx, attrs, |meta| {
            if meta.path.is_ident("display") {
                flag(cx, FENCE, &meta, &mut this.display)
            } else if meta.path.is_ident("task") {
                flag(cx, FENCE, &meta, &mut this.task)
            } else if meta.path.is_ident("tool") {
                tool_name(cx, FENCE, &meta, &mut this.tool)
            } else {
                let key = key_name(&meta);
                let hint = match key.as_str() {
                    "content" | "provenance" => format!(
                        "`{key}` marks a field, not the type: put #[fence({key})] on the field"
                    ),
                    _ => format!(
                        "unknown key `{key}` in {FENCE}; expected `display`, `task` or `tool`"
                    ),
                };
                cx.error_spanned_by(&meta.path, hint);
                skip_value(&meta)
            }
        });
        this
    }
}

impl Field {
    pub(crate) fn from_attrs(cx: &Ctxt, attrs: &[Attribute]) -> Self {
        let mut this = Field {
            content: Key::new(FENCE, "content"),
            provenance: Key::new(FENCE, "provenance"),
        };
        for_each_fence_key(cx, attrs, |meta| {
            if meta.path.is_ident("content") {
                flag(cx, FENCE, &meta, &mut this.content)
            } else if meta.path.is_ident("provenance") {
                flag(cx, FENCE, &meta, &mut this.provenance)
            } else {
                let key = key_name(&meta);
                let hint = match key.as_str() {
                    "display" | "task" | "tool" => format!(
                        "`{key}` goes on the type, not on a field: put #[fence({key})] above the type"
                    ),
                    _ => format!(
                        "unknown key `{key}` in a field's {FENCE}; expected `content` or `provenance`"
                    ),
                };
                cx.error_spanned_by(&meta.path, hint);
                skip_value(&meta)
            }
        });
        this
    }
}

impl Boundary {
    pub(crate) fn parse(cx: &Ctxt, args: TokenStream) -> Self {
        let mut this = Boundary {
            tool: Key::new(BOUNDARY, "tool"),
            task: Key::new(BOUNDARY, "task"),
        };
        let parser = syn::meta::parser(|meta| {
            if meta.path.is_ident("tool") {
                tool_name(cx, BOUNDARY, &meta, &mut this.tool)
            } else if meta.path.is_ident("task") {
                flag(cx, BOUNDARY, &meta, &mut this.task)
            } else if meta.path.is_ident("skill") {
                cx.error_spanned_by(
                    &meta.path,
                    "a declared skill's doc is never fenced: return it as \
                     `fence_runtime::ModelContent::skill_doc(..)` and remove #[fence_boundary]",
                );
                skip_value(&meta)
            } else {
                cx.error_spanned_by(
                    &meta.path,
                    format!(
                        "unknown key `{}` in {BOUNDARY}; expected `tool` or `task`",
                        key_name(&meta)
                    ),
                );
                skip_value(&meta)
            }
        });
        if let Err(err) = syn::parse::Parser::parse2(parser, args) {
            cx.syn_error(err);
        }
        this
    }
}

/// Calls `each` for every key of every `#[fence(..)]` among `attrs`.
fn for_each_fence_key(
    cx: &Ctxt,
    attrs: &[Attribute],
    mut each: impl FnMut(ParseNestedMeta<'_>) -> syn::Result<()>,
) {
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("fence")) {
        if let syn::Meta::Path(path) = &attr.meta {
            cx.error_spanned_by(
                path,
                "#[fence] needs a key, such as #[fence(content)] or #[fence(tool = \"web-fetch\")]",
            );
            continue;
        }
        if let Err(err) = attr.parse_nested_meta(&mut each) {
            cx.syn_error(err);
        }
    }
}

/// The key as written, for messages.
fn key_name(meta: &ParseNestedMeta<'_>) -> String {
    meta.path.to_token_stream().to_string().replace(' ', "")
}

/// A key that takes no value.
fn flag(cx: &Ctxt, attr: &str, meta: &ParseNestedMeta<'_>, key: &mut Key<()>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) || meta.input.peek(syn::token::Paren) {
        let name = key_name(meta);
        cx.error_spanned_by(
            &meta.path,
            format!("`{name}` takes no value in {attr}; write it alone: ({name})"),
        );
        return skip_value(meta);
    }
    key.set(cx, &meta.path, ());
    Ok(())
}

/// `tool = "name"`, with the name checked.
fn tool_name(
    cx: &Ctxt,
    attr: &str,
    meta: &ParseNestedMeta<'_>,
    key: &mut Key<LitStr>,
) -> syn::Result<()> {
    if !meta.input.peek(Token![=]) {
        cx.error_spanned_by(
            &meta.path,
            format!("`tool` needs an artifact name in {attr}: (tool = \"web-fetch\")"),
        );
        return skip_value(meta);
    }
    match meta.value()?.parse::<Expr>()? {
        Expr::Lit(ExprLit {
            lit: Lit::Str(name),
            ..
        }) => {
            if let Err(problem) = check_tool_name(&name.value()) {
                cx.error_spanned_by(&name, problem);
            }
            key.set(cx, &meta.path, name);
        }
        other => cx.error_spanned_by(
            other,
            format!(
                "expected the artifact name as a string literal in {attr}: (tool = \"web-fetch\")"
            ),
        ),
    }
    Ok(())
}

/// Why `name` cannot be an artifact name, if it cannot: it is written into the opening marker,
/// where `<`, `>` and whitespace would be rewritten.
pub(crate) fn check_tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("tool name is empty; write the artifact name, such as \"web-fetch\"".into());
    }
    let Some(bad) = name
        .chars()
        .find(|&c| c == '<' || c == '>' || c.is_whitespace())
    else {
        return Ok(());
    };
    let what = match bad {
        '<' => "`<`".to_owned(),
        '>' => "`>`".to_owned(),
        '\r' => "a carriage return".to_owned(),
        '\n' => "a newline".to_owned(),
        ' ' => "a space".to_owned(),
        '\t' => "a tab".to_owned(),
        other => format!("whitespace ({})", other.escape_unicode()),
    };
    Err(format!(
        "tool name `{}` contains {what}; an artifact name has no `<`, `>` or whitespace",
        name.escape_debug()
    ))
}

/// Consumes whatever value follows a key that was rejected, so parsing goes on to the next key.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        content.parse::<TokenStream>()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_tool_name;

    #[test]
    fn tool_names() {
        assert_eq!(check_tool_name("web-fetch"), Ok(()));
        assert_eq!(check_tool_name("mcp:server/tool.v2"), Ok(()));
        for bad in ["", "a b", "a<b", "a>b", "a\rb", "a\nb", "a\tb", "a\u{a0}b"] {
            assert!(check_tool_name(bad).is_err(), "{bad:?} accepted");
        }
        assert_eq!(
            check_tool_name("web fetch").unwrap_err(),
            "tool name `web fetch` contains a space; an artifact name has no `<`, `>` or whitespace"
        );
    }
}
