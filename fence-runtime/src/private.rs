//! What macro expansions call. Not public API: no stability promise, hidden from docs.
//!
//! Expansions name these only as `::fence_runtime::__private_<major>_<minor>::…`, so a user's
//! own `Result`, `Option` or `mod core` cannot change what they mean, and a `fence-macros` of
//! another version cannot reach them (see the module's declaration in lib.rs).
//!
//! Every trait here is sealed (see `sealed`), so no downstream impl can turn a boundary's
//! result into unfenced content, and every function here fences under a source the boundary
//! chose. A downstream crate can call these functions (the module is public), but nothing here
//! builds model content without the fence, except [`FenceableTaskPayload`], which is
//! `ModelContent::task_payload` (the trusted-task exemption, for a trusted payload) behind
//! `#[fence_boundary(task)]`.

use core::convert::Infallible;
use core::fmt;

pub use alloc::boxed::Box;
pub use serde::Serialize;

pub use crate::content::{ModelContent, ToolOutput};
pub use crate::render::{ContentWriter, Fenced, FencedTask, RenderError};
pub use crate::trust::TaskProvenance;

use crate::source::Source;

// The module's name is the version's (see its declaration in lib.rs): a rename forgotten at a
// version bump fails here, in this crate's own build, not in every user's.
const _: () = assert!(
    same_str(
        module_path!(),
        concat!(
            "fence_runtime::__private_",
            env!("CARGO_PKG_VERSION_MAJOR"),
            "_",
            env!("CARGO_PKG_VERSION_MINOR"),
        ),
    ),
    "fence-runtime's hidden module must be named for the version: rename `__private_…` in \
     src/lib.rs to `__private_<major>_<minor>` (see docs/macros.md)",
);

const fn same_str(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// What seals this module's traits. `Json` and `Field` are supertraits: public, so they can
/// bound public traits, but in a private module, so no other crate can name them to implement
/// them. The boundary's traits are sealed by [`Seal`](sealed::Seal) instead, a parameter of
/// their methods whose type no other crate can name, so no other crate can write the method:
/// an unmet bound is then reported as the public trait, with its own message, rather than as a
/// supertrait no user has heard of.
mod sealed {
    // Carries its public trait's message: the compiler reports the unmet supertrait first.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` renders as JSON, but does not implement `serde::Serialize`",
        label = "`#[derive(Fenced)]` renders this type as JSON by default",
        note = "add `#[derive(serde::Serialize)]` to `{Self}`, or render it with `#[fence(display)]` or a `#[fence(content)]` field"
    )]
    pub trait Json {}
    pub trait Field {}
    pub trait AboveTool {}

    /// The seal the boundary's traits take: only [`SEAL`](super::SEAL) makes one.
    #[derive(Debug, Clone, Copy)]
    pub struct Seal(pub(super) ());
}

/// What an expansion passes to the boundary's sealed methods.
pub const SEAL: sealed::Seal = sealed::Seal(());

impl<T: Serialize + ?Sized> sealed::Json for T {}
impl<T: ?Sized> sealed::Field for ContentField<'_, T> {}
impl<T: ?Sized> sealed::Field for &ContentField<'_, T> {}

/// Renders `value` as compact JSON, straight into the writer.
///
/// # Errors
///
/// When `value`'s `Serialize` implementation fails (for example a map with non-string keys).
pub fn render_json<T: RenderJson + ?Sized>(
    value: &T,
    out: &mut ContentWriter<'_>,
) -> Result<(), RenderError> {
    value.render_json(out)
}

/// Renders `value` with its `Display` implementation, straight into the writer.
///
/// # Errors
///
/// When `value`'s `Display` implementation returns an error.
pub fn render_display<T: fmt::Display + ?Sized>(
    value: &T,
    out: &mut ContentWriter<'_>,
) -> Result<(), RenderError> {
    fmt::Write::write_fmt(out, format_args!("{value}"))?;
    Ok(())
}

/// `serde::Serialize`, under a name whose failure message says what `#[derive(Fenced)]` needs.
#[diagnostic::on_unimplemented(
    message = "`{Self}` renders as JSON, but does not implement `serde::Serialize`",
    label = "`#[derive(Fenced)]` renders this type as JSON by default",
    note = "add `#[derive(serde::Serialize)]` to `{Self}`, or render it with `#[fence(display)]` or a `#[fence(content)]` field"
)]
pub trait RenderJson: sealed::Json {
    /// See [`render_json`].
    ///
    /// # Errors
    ///
    /// When serialisation fails.
    fn render_json(&self, out: &mut ContentWriter<'_>) -> Result<(), RenderError>;
}

impl<T: Serialize + ?Sized> RenderJson for T {
    fn render_json(&self, out: &mut ContentWriter<'_>) -> Result<(), RenderError> {
        serde_json::to_writer(out, self).map_err(RenderError::from)
    }
}

/// A `#[fence(content)]` field, for autoref dispatch: a field that is [`Fenced`] renders
/// through it (a string as its text), any other field renders as JSON.
#[derive(Debug)]
pub struct ContentField<'a, T: ?Sized>(pub &'a T);

/// The first choice for a content field: its own [`Fenced`] rendering.
pub trait RenderFieldFenced: sealed::Field {
    /// Renders the field.
    ///
    /// # Errors
    ///
    /// When the field's rendering fails.
    fn render_field(&self, out: &mut ContentWriter<'_>) -> Result<(), RenderError>;
}

impl<T: Fenced + ?Sized> RenderFieldFenced for ContentField<'_, T> {
    fn render_field(&self, out: &mut ContentWriter<'_>) -> Result<(), RenderError> {
        self.0.render(out)
    }
}

/// The fallback for a content field: JSON.
pub trait RenderFieldJson: sealed::Field {
    /// Renders the field.
    ///
    /// # Errors
    ///
    /// When serialisation fails.
    fn render_field(&self, out: &mut ContentWriter<'_>) -> Result<(), RenderError>;
}

impl<T: RenderJson + ?Sized> RenderFieldJson for &ContentField<'_, T> {
    fn render_field(&self, out: &mut ContentWriter<'_>) -> Result<(), RenderError> {
        self.0.render_json(out)
    }
}

/// The tool's source: the boundary's explicit name (under rmcp's `#[tool]`, the name rmcp
/// registers), else the payload's fixed tool, else the function's name.
fn tool_source<T: Fenced>(explicit: Option<&'static str>, fn_name: &'static str) -> Source {
    Source::tool(explicit.or_else(T::fixed_tool).unwrap_or(fn_name))
}

// The boundary's traits, one per position a type can take in a handler's signature, so an unmet
// bound is reported at that position (the expansion names each through the user's own type
// tokens) with a message about that position. Their blanket impls are `do_not_recommend`: the
// compiler reports the position's own trait, not `Fenced` or `Display` behind it, whose advice
// is for other places. Every conversion is `ToolOutput::from_result`, the one conversion.

/// The `Ok` type of a handler's `Result`: the tool's result, fenced.
#[diagnostic::on_unimplemented(
    message = "the `Ok` type `{Self}` cannot be fenced: it does not implement `fence_runtime::Fenced`",
    label = "the tool's result: #[fence_boundary] fences it, so it must be `Fenced`",
    note = "if `{Self}` is your own type, add `fence_runtime::Fenced` to its derives: `#[derive(serde::Serialize, fence_runtime::Fenced)]` renders it as JSON, `#[fence(display)]` with its `Display`",
    note = "otherwise return a struct of your own that holds it, with those derives, or a `String`"
)]
pub trait FenceableToolResult: Sized {
    /// The source a handler's result and error are fenced under.
    fn tool_source(
        explicit: Option<&'static str>,
        fn_name: &'static str,
        seal: sealed::Seal,
    ) -> Source;

    /// Fences the tool's result under `source`.
    fn ok_output(self, source: &Source, seal: sealed::Seal) -> ToolOutput;
}

#[diagnostic::do_not_recommend]
impl<T: Fenced> FenceableToolResult for T {
    fn tool_source(
        explicit: Option<&'static str>,
        fn_name: &'static str,
        _: sealed::Seal,
    ) -> Source {
        tool_source::<T>(explicit, fn_name)
    }

    fn ok_output(self, source: &Source, _: sealed::Seal) -> ToolOutput {
        ToolOutput::from_result(source, Ok::<T, Infallible>(self))
    }
}

/// The `Err` type of a handler's `Result`: the tool's failure, fenced as its `Display` text.
#[diagnostic::on_unimplemented(
    message = "the `Err` type `{Self}` does not implement `Display`: #[fence_boundary] fences a tool's error as its `Display` text",
    label = "the tool's error: #[fence_boundary] fences its `Display` text",
    note = "implement `std::fmt::Display` for `{Self}` (`#[derive(thiserror::Error)]` with `#[error(\"..\")]` does), or return `Result<T, String>` with the text you want the model to read",
    note = "already fenced values (`FencedBlock`, `ModelContent`, `ToolOutput`) are not `Display`: return the error's own type and let the boundary fence it"
)]
pub trait FenceableToolError: Sized {
    /// Fences the tool's error under `source`.
    fn err_output(self, source: &Source, seal: sealed::Seal) -> ToolOutput;
}

#[diagnostic::do_not_recommend]
impl<E: fmt::Display> FenceableToolError for E {
    fn err_output(self, source: &Source, _: sealed::Seal) -> ToolOutput {
        ToolOutput::from_result(source, Err::<&str, E>(self))
    }
}

/// A handler's whole return type, when the expansion cannot see that it is a `Result` (a type
/// alias): a [`Fenced`] type, or a `Result` of one.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be fenced: a #[fence_boundary] tool handler returns a type that implements `fence_runtime::Fenced`, or `Result<T, E>` with `T: Fenced` and `E: Display`",
    label = "the tool's result: #[fence_boundary] fences it, so it must be `Fenced`",
    note = "to make a type of your own `Fenced`, add `fence_runtime::Fenced` to its derives: `#[derive(serde::Serialize, fence_runtime::Fenced)]` renders it as JSON, `#[fence(display)]` with its `Display`",
    note = "for another crate's type (a `Vec`, a `serde_json::Value`, ..), return a struct of your own that holds it, with those derives, or a `String`",
    note = "already fenced values (`FencedBlock`, `ModelContent`, `ToolOutput`) are neither `Fenced` nor `Display`: the boundary fences the result and the error itself"
)]
pub trait FenceableReturnType: Sized {
    /// Fences the handler's result under `tool:<name>`.
    fn into_tool_output(
        self,
        explicit: Option<&'static str>,
        fn_name: &'static str,
        seal: sealed::Seal,
    ) -> ToolOutput;
}

#[diagnostic::do_not_recommend]
impl<T: Fenced> FenceableReturnType for T {
    fn into_tool_output(
        self,
        explicit: Option<&'static str>,
        fn_name: &'static str,
        seal: sealed::Seal,
    ) -> ToolOutput {
        let source = T::tool_source(explicit, fn_name, seal);
        self.ok_output(&source, seal)
    }
}

#[diagnostic::do_not_recommend]
impl<T: FenceableToolResult, E: FenceableToolError> FenceableReturnType for Result<T, E> {
    fn into_tool_output(
        self,
        explicit: Option<&'static str>,
        fn_name: &'static str,
        seal: sealed::Seal,
    ) -> ToolOutput {
        let source = T::tool_source(explicit, fn_name, seal);
        match self {
            Ok(value) => value.ok_output(&source, seal),
            Err(err) => err.err_output(&source, seal),
        }
    }
}

/// A payload with a fixed tool, as a tool output (`impl From<Payload> for ToolOutput`).
pub fn fixed_tool_output<T: Fenced>(payload: &T, tool: &'static str) -> ToolOutput {
    ToolOutput::from_result(&Source::tool(tool), Ok::<&T, Infallible>(payload))
}

/// What a method's boundary finds as `Self::<name>_tool_attr` when rmcp's `#[tool]` has not
/// been expanded before it, which is every method but one below `#[tool]`.
#[derive(Debug)]
pub struct NotAnRmcpTool;

/// Fails to compile when `Self::<name>_tool_attr` is rmcp's, generated by a `#[tool]` above
/// the boundary: the boundary could not see the tool's name.
pub fn boundary_above_tool<R: BoundaryAboveTool>(_tool_attr: fn() -> R) {}

/// Implemented only for [`NotAnRmcpTool`].
#[cfg_attr(
    feature = "rmcp",
    diagnostic::on_unimplemented(
        message = "#[fence_boundary] goes above rmcp's #[tool], not below it",
        label = "below #[tool], the boundary cannot see the name the tool is registered under",
        note = "swap the two attributes: #[fence_boundary] first, then #[tool]; the boundary then fences the result under `tool:<the tool's name>`, the name the model calls the tool by"
    )
)]
#[cfg_attr(
    not(feature = "rmcp"),
    diagnostic::on_unimplemented(
        message = "#[fence_boundary] goes above rmcp's #[tool], not below it, and needs fence-runtime's `rmcp` feature",
        label = "below #[tool], the boundary cannot see the name the tool is registered under",
        note = "swap the two attributes: #[fence_boundary] first, then #[tool]; the boundary then fences the result under `tool:<the tool's name>`, the name the model calls the tool by",
        note = "and add `features = [\"rmcp\"]` to the `fence-runtime` dependency in Cargo.toml, which makes `ToolOutput` an rmcp tool result"
    )
)]
pub trait BoundaryAboveTool: sealed::AboveTool {}

impl sealed::AboveTool for NotAnRmcpTool {}
impl BoundaryAboveTool for NotAnRmcpTool {}

/// What a `#[fence_boundary(task)]` handler returns, as model content.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a task payload: a #[fence_boundary(task)] fn returns a `#[fence(task)]` payload",
    label = "the task: #[fence_boundary(task)] makes it model content, so it must be a task payload",
    note = "if `{Self}` is your own type, add `#[derive(fence_runtime::Fenced)]` and `#[fence(task)]` to it, with a `#[fence(provenance)] provenance: TaskProvenance` field",
    note = "otherwise return a struct of your own with those attributes that holds it"
)]
pub trait FenceableTaskPayload: Sized {
    /// [`ModelContent::task_payload`]: fences the payload under `task:<origin>` when untrusted,
    /// and passes it as the trusted-task exemption when trusted.
    fn into_task_content(self, seal: sealed::Seal) -> ModelContent;
}

#[diagnostic::do_not_recommend]
impl<T: FencedTask> FenceableTaskPayload for T {
    fn into_task_content(self, _: sealed::Seal) -> ModelContent {
        ModelContent::task_payload(&self)
    }
}
